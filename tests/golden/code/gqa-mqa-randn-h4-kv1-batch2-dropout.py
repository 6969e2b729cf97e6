# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

torch.manual_seed(33)
X = torch.randn(2, 5, 4)  # (B, T, d_in)

d_in, d_out = 4, 8
d_kv = 2  # kv_heads * head_size = 1 * 2: K and V have 1 heads, Q has 4
torch.manual_seed(34)
W_query = torch.nn.Parameter(torch.randn(d_in, d_out))
W_key = torch.nn.Parameter(torch.randn(d_in, d_kv))
W_value = torch.nn.Parameter(torch.randn(d_in, d_kv))
Q = X @ W_query
K = X @ W_key
V = X @ W_value

# 4 heads: head h uses columns h*head_size .. (h+1)*head_size - 1 of Q;
# K and V have kv_heads = 1 heads, each shared by heads // kv_heads = 4 query heads in a row
# (repeat_interleave, as LLMs-from-scratch's GroupedQueryAttention)
B, T, heads, head_size = 2, 5, 4, 2
kv_heads = 1
q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)
k = K.view(B, T, kv_heads, head_size).transpose(1, 2).repeat_interleave(heads // kv_heads, dim=1)
v = V.view(B, T, kv_heads, head_size).transpose(1, 2).repeat_interleave(heads // kv_heads, dim=1)
scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)
d_k = head_size
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
mask = torch.tril(torch.ones(5, 5))  # causal: no peeking ahead
logits = logits.masked_fill(mask == 0, float('-inf'))
weights = torch.softmax(logits, dim=-1)
torch.manual_seed(35)
dropout = torch.nn.Dropout(0.25)  # training mode
weights_dropped = dropout(weights)
context = (weights_dropped @ v).transpose(1, 2).contiguous().view(B, T, d_out)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
