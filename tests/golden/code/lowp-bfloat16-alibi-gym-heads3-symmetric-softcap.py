# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
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

torch.manual_seed(2)
X = torch.randn(1, 6, 6)  # (B, T, d_in)
X = stored(X)  # drawn or written in float32, then stored

d_in, d_out = 6, 6
torch.manual_seed(3)
query = stored_layer(torch.nn.Linear(d_in, d_out, bias=False))
key = stored_layer(torch.nn.Linear(d_in, d_out, bias=False))
value = stored_layer(torch.nn.Linear(d_in, d_out, bias=False))
Q = linear(query, X)
K = linear(key, X)
V = linear(value, X)

# 3 heads: head h uses columns h*head_size .. (h+1)*head_size - 1
B, T, heads, head_size = 1, 6, 3, 2
q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)
k = K.view(B, T, heads, head_size).transpose(1, 2)
v = V.view(B, T, heads, head_size).transpose(1, 2)
scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)
d_k = head_size
scores = stored(scores)
logits = scores * 1.5  # the multiplier (1/temperature)
logits = logits / d_k**0.5  # keeps the variance of q.k near 1
# ALiBi (Press et al.): a penalty growing with the distance |i - j|, one slope per head
slopes = torch.tensor([0.15749011933803558, 0.02480313926935196, 0.00390625])  # attention-gym's 2^(-8(h+1)/H), h = 0..H-1
i = torch.arange(6).unsqueeze(1)  # query positions (rows)
j = torch.arange(6).unsqueeze(0)  # key positions (columns)
alibi = -(slopes.view(heads, 1, 1) * (i - j).abs())  # (heads, T, T)
logits = logits + alibi
logits = 0.75 * torch.tanh(logits / 0.75)  # soft-capping (Gemma 2): every logit within (-0.75, 0.75)
logits = stored(logits)  # the whole rule (scaling, mask) in float32, stored once
weights = torch.softmax(logits, dim=-1)
weights = stored(weights)
context = (weights @ v).transpose(1, 2).contiguous().view(B, T, d_out)
context = stored(context)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights.to(dtype), sep="\n")
print("context:", context.to(dtype), sep="\n")
