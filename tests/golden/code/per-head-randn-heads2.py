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

d_in, d_out = 3, 8
torch.manual_seed(5)
# One module per head, as MultiHeadAttentionWrapper: head h draws its own query, key
# and value (d_in x 4 each) after head h - 1's; side by side they make W.
per_head = []
for h in range(2):
    drawn = {}
    for name in ("query", "key", "value"):  # the draw order
        drawn[name] = torch.randn(d_in, 4)
    per_head.append(drawn)
W_query = torch.cat([drawn["query"] for drawn in per_head], dim=1)
W_key = torch.cat([drawn["key"] for drawn in per_head], dim=1)
W_value = torch.cat([drawn["value"] for drawn in per_head], dim=1)
Q = X @ W_query
K = X @ W_key
V = X @ W_value

# 2 heads: head h uses columns h*head_size .. (h+1)*head_size - 1
B, T, heads, head_size = 1, 6, 2, 4
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
