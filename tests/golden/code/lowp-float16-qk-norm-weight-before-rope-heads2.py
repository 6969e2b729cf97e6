# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

# dtype float16: every stage is computed in float32 from the stored values of the
# stages before it, and its result is stored in float16 (rounded to nearest even),
# as PyTorch's GPU kernels accumulate in float32. stored() rounds and widens back: the
# variables are float32 tensors holding float16 numbers.
dtype = torch.float16


def stored(t):
    return t.to(dtype).float()

torch.manual_seed(31)
X = torch.randn(1, 9, 8)  # (B, T, d_in)
X = stored(X)  # drawn or written in float32, then stored

d_in, d_out = 8, 8
torch.manual_seed(45)
W_query = torch.nn.Parameter(torch.randn(d_in, d_out))
W_key = torch.nn.Parameter(torch.randn(d_in, d_out))
W_value = torch.nn.Parameter(torch.randn(d_in, d_out))
W_query, W_key, W_value = stored(W_query), stored(W_key), stored(W_value)  # drawn in float32, then stored
Q = X @ W_query
K = X @ W_key
V = X @ W_value
Q, K, V = stored(Q), stored(K), stored(V)

# RoPE: each head's q and k turn pair by pair, pair i by the angle position * theta**(-2i/head_size)
# split halves (Hugging Face, LLMs-from-scratch): dimensions i and i + head_size/2 pair up
T, head_size, theta = 9, 4, 10000.0
inv_freq = 1.0 / (theta ** (torch.arange(0, head_size, 2) / head_size))  # (head_size/2,)
angles = torch.arange(T)[:, None] * inv_freq[None, :]  # (T, head_size/2): position times frequency
angles = torch.cat([angles, angles], dim=-1)  # (T, head_size)
cos, sin = torch.cos(angles), torch.sin(angles)

def rope(x):
    x1, x2 = x[..., : head_size // 2], x[..., head_size // 2 :]
    return stored(x * cos + torch.cat((-x2, x1), dim=-1) * sin)  # rotate_half(x) = (-x2, x1)

# QK-norm: RMSNorm of each head's q and k, x * rsqrt(mean(x**2) + eps) * weight, before the rotation (Gemma)
qk_head_size, qk_eps = 4, 1e-06
qk_weight = torch.tensor([1.5, 0.25, 1.0, 2.0])

def qk_norm(x):
    h = x.reshape(*x.shape[:-1], -1, qk_head_size)  # each head's numbers on the last axis
    y = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + qk_eps)
    y = y * qk_weight
    y = stored(y)
    return y.reshape(x.shape)

Q, K = qk_norm(Q), qk_norm(K)

# 2 heads: head h uses columns h*head_size .. (h+1)*head_size - 1
B, T, heads, head_size = 1, 9, 2, 4
q = rope(Q.view(B, T, heads, head_size).transpose(1, 2))  # (B, heads, T, head_size)
k = rope(K.view(B, T, heads, head_size).transpose(1, 2))
Q_rot = q.transpose(1, 2).reshape(B, T, 8)  # the heads side by side, as the app shows them
K_rot = k.transpose(1, 2).reshape(B, T, 8)
v = V.view(B, T, heads, head_size).transpose(1, 2)
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
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights.to(dtype), sep="\n")
print("context:", context.to(dtype), sep="\n")
