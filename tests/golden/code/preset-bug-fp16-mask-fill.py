# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import re
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors
title = 'Bug: a left-padded sentence in float16, masked with masked_fill(mask, -1e9): -1e9 is -inf in float16, and the padding rows, which see no key, are nan (the bug)'

# dtype float16: every stage is computed in float32 from the stored values of the
# stages before it, and its result is stored in float16 (rounded to nearest even),
# as PyTorch's GPU kernels accumulate in float32. stored() rounds and widens back: the
# variables are float32 tensors holding float16 numbers.
dtype = torch.float16


def stored(t):
    return t.to(dtype).float()


def stored_layer(layer):  # nn.Linear's float32 draws stored in float16
    layer.weight.copy_(stored(layer.weight))
    if layer.bias is not None:
        layer.bias.copy_(stored(layer.bias))
    return layer


def linear(layer, x):  # x @ W stored, then + bias stored: two operations
    y = stored(x @ layer.weight.T)
    return y if layer.bias is None else stored(y + layer.bias)

# Tokenize, build the vocabulary (sorted, then the special tokens), embed
text = '<pad> <pad> the cat sat on the mat'
tokens = [t.strip() for t in re.split(r'([,.:;?_!"()\']|--|\s)', text) if t.strip()]
vocab = sorted(set(tokens)) + ['<|endoftext|>', '<|unk|>']
token_ids = torch.tensor([vocab.index(t) for t in tokens])
torch.manual_seed(3)
embedding = torch.nn.Embedding(len(vocab), 4)
X = embedding(token_ids)  # (T, d_in)
X = stored(X)  # drawn or written in float32, then stored

d_in, d_out = 4, 4
torch.manual_seed(3)
query = stored_layer(torch.nn.Linear(d_in, d_out, bias=False))
key = stored_layer(torch.nn.Linear(d_in, d_out, bias=False))
value = stored_layer(torch.nn.Linear(d_in, d_out, bias=False))
Q = linear(query, X)
K = linear(key, X)
V = linear(value, X)

scores = Q @ K.T  # (T, T)
d_k = K.shape[-1]
scores = stored(scores)
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
mask = torch.tensor([[0, 0, 0, 0, 0, 0, 0, 0],
                     [0, 0, 0, 0, 0, 0, 0, 0],
                     [0, 0, 1, 0, 0, 0, 0, 0],
                     [0, 0, 1, 1, 0, 0, 0, 0],
                     [0, 0, 1, 1, 1, 0, 0, 0],
                     [0, 0, 1, 1, 1, 1, 0, 0],
                     [0, 0, 1, 1, 1, 1, 1, 0],
                     [0, 0, 1, 1, 1, 1, 1, 1]])
logits = logits.masked_fill(mask == 0, -1e9)
logits = stored(logits)  # the whole rule (scaling, mask) in float32, stored once
weights = torch.softmax(logits, dim=-1)
weights = stored(weights)
context = weights @ V
context = stored(context)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights.to(dtype), sep="\n")
print("context:", context.to(dtype), sep="\n")
