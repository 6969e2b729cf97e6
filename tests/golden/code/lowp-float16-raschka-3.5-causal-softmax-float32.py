# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors
title = 'Raschka 3.5.1: causal mask on SelfAttention_v2 (seed 789)'

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

# Input embeddings, one row per token
tokens = ['Your', 'journey', 'starts', 'with', 'one', 'step']
X = torch.tensor([[0.43, 0.15, 0.89],
                 [0.55, 0.87, 0.66],
                 [0.57, 0.85, 0.64],
                 [0.22, 0.58, 0.33],
                 [0.77, 0.25, 0.1],
                 [0.05, 0.8, 0.55]])
X = stored(X)  # drawn or written in float32, then stored

d_in, d_out = 3, 2
torch.manual_seed(789)
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
mask = torch.tril(torch.ones(6, 6))  # causal: no peeking ahead
logits = logits.masked_fill(mask == 0, float('-inf'))
logits = stored(logits)  # the whole rule (scaling, mask) in float32, stored once
weights = torch.softmax(logits, dim=-1)
# softmax_dtype float32: the weights stay float32 (the upcast softmax), not stored
context = weights @ V
context = stored(context)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context.to(dtype), sep="\n")
