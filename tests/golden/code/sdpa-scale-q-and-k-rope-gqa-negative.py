# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import math
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

torch.manual_seed(31)
X = torch.randn(1, 9, 8)  # (B, T, d_in)

d_in, d_out = 8, 16
d_kv = 8  # kv_heads * head_size = 2 * 4: K and V have 2 heads, Q has 4
torch.manual_seed(49)
W_query = torch.nn.Parameter(torch.randn(d_in, d_out))
W_key = torch.nn.Parameter(torch.randn(d_in, d_kv))
W_value = torch.nn.Parameter(torch.randn(d_in, d_kv))
Q = X @ W_query
K = X @ W_key
V = X @ W_value

# RoPE: each head's q and k turn pair by pair, pair i by the angle position * theta**(-2i/head_size)
# split halves (Hugging Face, LLMs-from-scratch): dimensions i and i + head_size/2 pair up
T, head_size, theta = 9, 4, 10000.0
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
B, T, heads, head_size = 1, 9, 4, 4
kv_heads = 2
q = rope(Q.view(B, T, heads, head_size).transpose(1, 2))  # (B, heads, T, head_size)
k = rope(K.view(B, T, kv_heads, head_size).transpose(1, 2))
Q_rot = q.transpose(1, 2).reshape(B, T, 16)  # the heads side by side, as the app shows them
K_rot = k.transpose(1, 2).reshape(B, T, 8)
k = k.repeat_interleave(heads // kv_heads, dim=1)
v = V.view(B, T, kv_heads, head_size).transpose(1, 2).repeat_interleave(heads // kv_heads, dim=1)
d_k = head_size
# PyTorch's scaled_dot_product_attention (its math path, aten's
# _scaled_dot_product_attention_math) scales q and k, each by sqrt(scale), before the
# product, where the notebooks scale the product: the same logits up to rounding
scale = -0.7 / math.sqrt(d_k)
f = math.sqrt(abs(scale))
q_s = q * -f  # a negative scale goes to q
k_s = k * f
scores = q_s @ k_s.transpose(-2, -1)  # (B, heads, T, T)
logits = scores  # already scaled (q and k were), no mask
weights = torch.softmax(logits, dim=-1)
context = (weights @ v).transpose(1, 2).contiguous().view(B, T, d_out)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
