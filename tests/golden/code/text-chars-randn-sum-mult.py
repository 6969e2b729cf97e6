# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import re
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

# Tokenize, build the vocabulary (sorted, then the special tokens), embed
text = 'hello, attention'
tokens = list(text)
vocab = sorted(set(tokens)) + ['<|endoftext|>', '<|unk|>']
token_ids = torch.tensor([vocab.index(t) for t in tokens])
torch.manual_seed(11)
embedding = torch.nn.Embedding(len(vocab), 3)
X = embedding(token_ids)  # (T, d_in)

d_in, d_out = 3, 3
W_query = torch.nn.Parameter(torch.randn(d_in, d_out))
W_key = torch.nn.Parameter(torch.randn(d_in, d_out))
W_value = torch.nn.Parameter(torch.randn(d_in, d_out))
Q = X @ W_query
K = X @ W_key
V = X @ W_value

scores = Q @ K.T  # (T, T)
d_k = K.shape[-1]
logits = scores * 3.5  # the multiplier (1/temperature)
z = logits
weights = z / z.sum(dim=-1, keepdim=True)  # can go negative
context = weights @ V
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
