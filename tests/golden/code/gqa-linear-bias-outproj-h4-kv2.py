# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

# Input embeddings, one row per token
X = torch.tensor([[0.43, 0.15, 0.89],
                 [0.55, 0.87, 0.66],
                 [0.57, 0.85, 0.64],
                 [0.22, 0.58, 0.33],
                 [0.77, 0.25, 0.1],
                 [0.05, 0.8, 0.55]])
X = X.unsqueeze(0)  # (B, T, d_in) with B = 1

d_in, d_out = 3, 4
d_kv = 2  # kv_heads * head_size = 2 * 1: K and V have 2 heads, Q has 4
torch.manual_seed(37)
query = torch.nn.Linear(d_in, d_out, bias=True)
key = torch.nn.Linear(d_in, d_kv, bias=True)
value = torch.nn.Linear(d_in, d_kv, bias=True)
out_proj = torch.nn.Linear(d_out, d_out)
Q = query(X)
K = key(X)
V = value(X)

# 4 heads: head h uses columns h*head_size .. (h+1)*head_size - 1 of Q;
# K and V have kv_heads = 2 heads, each shared by heads // kv_heads = 2 query heads in a row
# (repeat_interleave, as LLMs-from-scratch's GroupedQueryAttention)
B, T, heads, head_size = 1, 6, 4, 1
kv_heads = 2
q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)
k = K.view(B, T, kv_heads, head_size).transpose(1, 2).repeat_interleave(heads // kv_heads, dim=1)
v = V.view(B, T, kv_heads, head_size).transpose(1, 2).repeat_interleave(heads // kv_heads, dim=1)
scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)
d_k = head_size
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
weights = torch.softmax(logits, dim=-1)
context = (weights @ v).transpose(1, 2).contiguous().view(B, T, d_out)
context = out_proj(context)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
