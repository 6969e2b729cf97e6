# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors
title = 'Karpathy v4: a single head, randn 4x8x32 seed 1337, nn.Linear key, query, value of 16, causal'

# dtype bfloat16: every stage is computed in float32 from the stored values of the
# stages before it, and its result is stored in bfloat16 (rounded to nearest even),
# as PyTorch's GPU kernels accumulate in float32. stored() rounds and widens back: the
# variables are float32 tensors holding bfloat16 numbers.
dtype = torch.bfloat16


def stored(t):
    return t.to(dtype).float()


def stored_layer(layer):  # nn.Linear's float32 draws stored in bfloat16
    layer.weight.copy_(stored(layer.weight))
    if layer.bias is not None:
        layer.bias.copy_(stored(layer.bias))
    return layer


def linear(layer, x):  # x @ W stored, then + bias stored: two operations
    y = stored(x @ layer.weight.T)
    return y if layer.bias is None else stored(y + layer.bias)

torch.manual_seed(1337)
X = torch.randn(4, 8, 32)  # (B, T, d_in)
X = stored(X)  # drawn or written in float32, then stored

d_in, d_out = 32, 16
key = stored_layer(torch.nn.Linear(d_in, d_out, bias=False))
query = stored_layer(torch.nn.Linear(d_in, d_out, bias=False))
value = stored_layer(torch.nn.Linear(d_in, d_out, bias=False))
Q = linear(query, X)
K = linear(key, X)
V = linear(value, X)

scores = Q @ K.transpose(-2, -1)  # (B, T, T)
d_k = K.shape[-1]
scores = stored(scores)
mask = torch.tril(torch.ones(8, 8))  # causal: no peeking ahead
logits = scores.masked_fill(mask == 0, float('-inf'))
logits = stored(logits)  # the whole rule (scaling, mask) in float32, stored once
weights = torch.softmax(logits, dim=-1)
# softmax_dtype float32: the weights stay float32 (the upcast softmax), not stored
context = weights @ V
context = stored(context)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context.to(dtype), sep="\n")
