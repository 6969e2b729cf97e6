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

torch.manual_seed(31)
X = torch.randn(1, 9, 8)  # (B, T, d_in)
X = stored(X)  # drawn or written in float32, then stored

d_in, d_out = 8, 16
d_kv = 8  # kv_heads * head_size = 2 * 4: K and V have 2 heads, Q has 4
torch.manual_seed(44)
query = stored_layer(torch.nn.Linear(d_in, d_out, bias=False))
key = stored_layer(torch.nn.Linear(d_in, d_kv, bias=False))
value = stored_layer(torch.nn.Linear(d_in, d_kv, bias=False))
out_proj = stored_layer(torch.nn.Linear(d_out, d_out, bias=False))
Q = linear(query, X)
K = linear(key, X)
V = linear(value, X)

# RoPE: each head's q and k turn pair by pair, pair i by the angle position * theta**(-2i/head_size)
# split halves (Hugging Face, LLMs-from-scratch): dimensions i and i + head_size/2 pair up
# sign -1: every angle turns the other way, as nanochat's rotation
T, head_size, theta = 9, 4, 10000.0
inv_freq = 1.0 / (theta ** (torch.arange(0, head_size, 2) / head_size))  # (head_size/2,)
angles = torch.arange(T)[:, None] * inv_freq[None, :] * -1  # (T, head_size/2): position times frequency
angles = torch.cat([angles, angles], dim=-1)  # (T, head_size)
cos, sin = torch.cos(angles), torch.sin(angles)

def rope(x):
    x1, x2 = x[..., : head_size // 2], x[..., head_size // 2 :]
    return stored(x * cos + torch.cat((-x2, x1), dim=-1) * sin)  # rotate_half(x) = (-x2, x1)

# QK-norm: RMSNorm of each head's q and k, x * rsqrt(mean(x**2) + eps), after the rotation (nanochat)
qk_head_size, qk_eps = 4, 0.0078125  # torch.finfo(dtype).eps, F.rms_norm's default

def qk_norm(x):
    h = x.reshape(*x.shape[:-1], -1, qk_head_size)  # each head's numbers on the last axis
    y = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + qk_eps)
    y = stored(y)
    y = stored(y * 1.2)  # q and k times the scale after the norm
    return y.reshape(x.shape)

rotate_only = rope


def rope(x):  # the rotation, then the norm
    return qk_norm(rotate_only(x))

# 4 heads: head h uses columns h*head_size .. (h+1)*head_size - 1 of Q;
# K and V have kv_heads = 2 heads, each shared by heads // kv_heads = 2 query heads in a row
# (repeat_interleave, as LLMs-from-scratch's GroupedQueryAttention)
B, T, heads, head_size = 1, 9, 4, 4
kv_heads = 2
q = rope(Q.view(B, T, heads, head_size).transpose(1, 2))  # (B, heads, T, head_size)
k = rope(K.view(B, T, kv_heads, head_size).transpose(1, 2))
Q_rot = q.transpose(1, 2).reshape(B, T, 16)  # the heads side by side, as the app shows them
K_rot = k.transpose(1, 2).reshape(B, T, 8)
k = k.repeat_interleave(heads // kv_heads, dim=1)
v = V.view(B, T, kv_heads, head_size).transpose(1, 2).repeat_interleave(heads // kv_heads, dim=1)
scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)
d_k = head_size
scores = stored(scores)
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
mask = torch.tril(torch.ones(9, 9))  # causal: no peeking ahead
logits = logits.masked_fill(mask == 0, float('-inf'))
logits = stored(logits)  # the whole rule (scaling, mask) in float32, stored once
weights = torch.softmax(logits, dim=-1)
weights = stored(weights)
context = (weights @ v).transpose(1, 2).contiguous().view(B, T, d_out)
context = stored(context)
context = linear(out_proj, context)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights.to(dtype), sep="\n")
print("context:", context.to(dtype), sep="\n")
