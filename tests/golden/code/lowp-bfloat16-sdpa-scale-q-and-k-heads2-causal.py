# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import math
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

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

torch.manual_seed(31)
X = torch.randn(1, 9, 8)  # (B, T, d_in)
X = stored(X)  # drawn or written in float32, then stored

d_in, d_out = 8, 8
torch.manual_seed(48)
query = stored_layer(torch.nn.Linear(d_in, d_out, bias=True))
key = stored_layer(torch.nn.Linear(d_in, d_out, bias=True))
value = stored_layer(torch.nn.Linear(d_in, d_out, bias=True))
Q = linear(query, X)
K = linear(key, X)
V = linear(value, X)

# 2 heads: head h uses columns h*head_size .. (h+1)*head_size - 1
B, T, heads, head_size = 1, 9, 2, 4
q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)
k = K.view(B, T, heads, head_size).transpose(1, 2)
v = V.view(B, T, heads, head_size).transpose(1, 2)
d_k = head_size
# PyTorch's scaled_dot_product_attention (its math path, aten's
# _scaled_dot_product_attention_math) scales q and k, each by sqrt(scale), before the
# product, where the notebooks scale the product: the same logits up to rounding
scale = 1 / math.sqrt(d_k)
f = math.sqrt(abs(scale))
q_s = q * f
k_s = k * f
q_s, k_s = stored(q_s), stored(k_s)
scores = q_s @ k_s.transpose(-2, -1)  # (B, heads, T, T)
scores = stored(scores)
mask = torch.tril(torch.ones(9, 9))  # causal: no peeking ahead
logits = scores.masked_fill(mask == 0, float('-inf'))
logits = stored(logits)  # the whole rule (scaling, mask) in float32, stored once
weights = torch.softmax(logits, dim=-1)
weights = stored(weights)
context = (weights @ v).transpose(1, 2).contiguous().view(B, T, d_out)
context = stored(context)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights.to(dtype), sep="\n")
print("context:", context.to(dtype), sep="\n")
