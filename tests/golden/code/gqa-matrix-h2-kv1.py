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
d_kv = 2  # kv_heads * head_size = 1 * 2: K and V have 1 heads, Q has 2
W_query = torch.tensor([[0.5, -0.25, 0.75, 1.0],
                        [0.125, 0.5, -0.5, 0.25],
                        [1.0, 0.0, 0.25, -0.75]])
W_key = torch.tensor([[0.25, -1.0],
                      [0.5, 0.75],
                      [-0.5, 0.125]])
W_value = torch.tensor([[1.0, 0.5],
                        [-0.25, 0.25],
                        [0.75, -0.5]])
Q = X @ W_query
K = X @ W_key
V = X @ W_value

# 2 heads: head h uses columns h*head_size .. (h+1)*head_size - 1 of Q;
# K and V have kv_heads = 1 heads, each shared by heads // kv_heads = 2 query heads in a row
# (repeat_interleave, as LLMs-from-scratch's GroupedQueryAttention)
B, T, heads, head_size = 1, 6, 2, 2
kv_heads = 1
q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)
k = K.view(B, T, kv_heads, head_size).transpose(1, 2).repeat_interleave(heads // kv_heads, dim=1)
v = V.view(B, T, kv_heads, head_size).transpose(1, 2).repeat_interleave(heads // kv_heads, dim=1)
scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)
d_k = head_size
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
mask = torch.tril(torch.ones(6, 6))  # causal: no peeking ahead
logits = logits.masked_fill(mask == 0, float('-inf'))
weights = torch.exp(logits) / torch.exp(logits).sum(dim=-1, keepdim=True)  # overflows for large logits
context = (weights @ v).transpose(1, 2).contiguous().view(B, T, d_out)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
