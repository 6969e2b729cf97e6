# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import re
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

# Tokenize, build the vocabulary (sorted, then the special tokens), embed
text = 'Your\xa0journey starts\u2003with one\u3000step,\x85the\u2028next\x1cstep --\xa0now'
tokens = list(text)
vocab = sorted(set(tokens)) + ['<|endoftext|>', '<|unk|>']
token_ids = torch.tensor([vocab.index(t) for t in tokens])
torch.manual_seed(123)
embedding = torch.nn.Embedding(len(vocab), 3)
X = embedding(token_ids)  # (T, d_in)

d_in, d_out = 3, 2
torch.manual_seed(123)
W_query = torch.nn.Parameter(torch.rand(d_in, d_out))
W_key = torch.nn.Parameter(torch.rand(d_in, d_out))
W_value = torch.nn.Parameter(torch.rand(d_in, d_out))
Q = X @ W_query
K = X @ W_key
V = X @ W_value

scores = Q @ K.T  # (T, T)
d_k = K.shape[-1]
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
weights = torch.softmax(logits, dim=-1)
context = weights @ V
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
