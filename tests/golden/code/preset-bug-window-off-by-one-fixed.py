# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import re
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors
title = 'The fix of bug-window-off-by-one: the sliding window of W keys the model was trained with'

# Tokenize, build the vocabulary (sorted, then the special tokens), embed
text = 'the cat sat on the mat and slept'
tokens = [t.strip() for t in re.split(r'([,.:;?_!"()\']|--|\s)', text) if t.strip()]
vocab = sorted(set(tokens)) + ['<|endoftext|>', '<|unk|>']
token_ids = torch.tensor([vocab.index(t) for t in tokens])
torch.manual_seed(3)
embedding = torch.nn.Embedding(len(vocab), 4)
X = embedding(token_ids)  # (T, d_in)

d_in, d_out = 4, 4
torch.manual_seed(3)
query = torch.nn.Linear(d_in, d_out, bias=False)
key = torch.nn.Linear(d_in, d_out, bias=False)
value = torch.nn.Linear(d_in, d_out, bias=False)
Q = query(X)
K = key(X)
V = value(X)

scores = Q @ K.T  # (T, T)
d_k = K.shape[-1]
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
i = torch.arange(8).unsqueeze(1)  # query positions (rows)
j = torch.arange(8).unsqueeze(0)  # key positions (columns)
allowed = ((j <= i) & (i - j < 3))  # sliding window W = 3: 3 keys, this one included
mask = allowed.float()
logits = logits.masked_fill(mask == 0, float('-inf'))
weights = torch.softmax(logits, dim=-1)
context = weights @ V
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
