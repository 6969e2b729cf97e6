# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

torch.manual_seed(41)
X = torch.randn(2, 6, 8)  # (B, T, d_in)

d_in, d_out = 8, 8
d_kv = 4  # kv_heads * head_size = 2 * 2: K and V have 2 heads, Q has 4
torch.manual_seed(42)
query = torch.nn.Linear(d_in, d_out, bias=True)
key = torch.nn.Linear(d_in, d_kv, bias=True)
value = torch.nn.Linear(d_in, d_kv, bias=True)
out_proj = torch.nn.Linear(d_out, d_out)
Q = query(X)
K = key(X)
V = value(X)

# RoPE: each head's q and k turn pair by pair, pair i by the angle position * theta**(-2i/head_size)
# split halves (Hugging Face, LLMs-from-scratch): dimensions i and i + head_size/2 pair up
T, head_size, theta = 6, 2, 10000.0
inv_freq = 1.0 / (theta ** (torch.arange(0, head_size, 2) / head_size))  # (head_size/2,)
angles = torch.arange(T)[:, None] * inv_freq[None, :]  # (T, head_size/2): position times frequency
angles = torch.cat([angles, angles], dim=-1)  # (T, head_size)
cos, sin = torch.cos(angles), torch.sin(angles)

def rope(x):
    x1, x2 = x[..., : head_size // 2], x[..., head_size // 2 :]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin  # rotate_half(x) = (-x2, x1)

# 4 heads: head h uses columns h*head_size .. (h+1)*head_size - 1 of Q;
# K and V have kv_heads = 2 heads, each shared by heads // kv_heads = 2 query heads in a row
# (repeat_interleave, as LLMs-from-scratch's GroupedQueryAttention)
B, T, heads, head_size = 2, 6, 4, 2
kv_heads = 2
q = Q.view(B, heads, T, head_size)  # no transpose: head h's rows are pieces of other tokens' rows
k = K.view(B, kv_heads, T, head_size)
v = V.view(B, kv_heads, T, head_size)
Q, K, V = (m.transpose(1, 2).reshape(B, T, -1) for m in (q, k, v))  # what each head reads, side by side, as the app shows them
q, k = rope(q), rope(k)
Q_rot = q.transpose(1, 2).reshape(B, T, 8)
K_rot = k.transpose(1, 2).reshape(B, T, 4)
k, v = k.repeat_interleave(heads // kv_heads, dim=1), v.repeat_interleave(heads // kv_heads, dim=1)
scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)
d_k = head_size
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
mask = torch.tril(torch.ones(6, 6))  # causal: no peeking ahead
logits = logits.masked_fill(mask == 0, float('-inf'))
weights = torch.softmax(logits, dim=-1)
context = (weights @ v).view(B, T, d_out)  # no transpose back either
context = out_proj(context)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
