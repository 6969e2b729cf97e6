# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

torch.manual_seed(46)
X = torch.randn(2, 5, 6)  # (B, T, d_in)

d_in, d_out = 6, 6
torch.manual_seed(47)
W_query = torch.nn.Parameter(torch.rand(d_in, d_out))
W_key = torch.nn.Parameter(torch.rand(d_in, d_out))
W_value = torch.nn.Parameter(torch.rand(d_in, d_out))
Q = X @ W_query
K = X @ W_key
V = X @ W_value

# QK-norm: RMSNorm of each head's q and k, x * rsqrt(mean(x**2) + eps)
qk_head_size, qk_eps = 2, 0.01

def qk_norm(x):
    h = x.reshape(*x.shape[:-1], -1, qk_head_size)  # each head's numbers on the last axis
    y = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + qk_eps)
    y = y * 0.5  # q and k times the scale after the norm
    return y.reshape(x.shape)

Q, K = qk_norm(Q), qk_norm(K)

# 3 heads: head h uses columns h*head_size .. (h+1)*head_size - 1
B, T, heads, head_size = 2, 5, 3, 2
q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)
k = K.view(B, T, heads, head_size).transpose(1, 2)
v = V.view(B, T, heads, head_size).transpose(1, 2)
scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)
d_k = head_size
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
weights = torch.softmax(logits, dim=-1)
context = (weights @ v).transpose(1, 2).contiguous().view(B, T, d_out)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
