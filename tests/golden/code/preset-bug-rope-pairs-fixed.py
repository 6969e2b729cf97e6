# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import re
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors
title = "The fix of bug-rope-pairs: RoPE on the model's own pairs (2p, 2p + 1)"

# Tokenize, build the vocabulary (sorted, then the special tokens), embed
text = 'the cat sat on the mat the cat sat'
tokens = [t.strip() for t in re.split(r'([,.:;?_!"()\']|--|\s)', text) if t.strip()]
vocab = sorted(set(tokens)) + ['<|endoftext|>', '<|unk|>']
token_ids = torch.tensor([vocab.index(t) for t in tokens])
torch.manual_seed(5)
embedding = torch.nn.Embedding(len(vocab), 8)
X = embedding(token_ids)  # (T, d_in)

d_in, d_out = 8, 8
torch.manual_seed(5)
query = torch.nn.Linear(d_in, d_out, bias=False)
key = torch.nn.Linear(d_in, d_out, bias=False)
value = torch.nn.Linear(d_in, d_out, bias=False)
Q = query(X)
K = key(X)
V = value(X)

# RoPE: each head's q and k turn pair by pair, pair i by the angle position * theta**(-2i/head_size)
# interleaved (Meta's Llama): dimensions 2i and 2i + 1 pair up, as one complex number
T, head_size, theta = 9, 8, 10000.0
inv_freq = 1.0 / (theta ** (torch.arange(0, head_size, 2) / head_size))  # (head_size/2,)
angles = torch.arange(T)[:, None] * inv_freq[None, :]  # (T, head_size/2): position times frequency
freqs_cis = torch.polar(torch.ones_like(angles), angles)  # cos + i sin

def rope(x):
    pairs = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))  # (2i, 2i + 1) as a + ib
    return torch.view_as_real(pairs * freqs_cis).flatten(-2)

Q_rot, K_rot = rope(Q), rope(K)
scores = Q_rot @ K_rot.T  # (T, T)
d_k = K.shape[-1]
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
mask = torch.tril(torch.ones(9, 9))  # causal: no peeking ahead
logits = logits.masked_fill(mask == 0, float('-inf'))
weights = torch.softmax(logits, dim=-1)
context = weights @ V
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
