# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

torch.manual_seed(31)
X = torch.randn(1, 6, 8)  # (B, T, d_in)

d_in, d_out = 8, 12
d_kv = 6  # kv_heads * head_size = 3 * 2: K and V have 3 heads, Q has 6
torch.manual_seed(36)
W_query = torch.nn.Parameter(torch.rand(d_in, d_out))
W_key = torch.nn.Parameter(torch.rand(d_in, d_kv))
W_value = torch.nn.Parameter(torch.rand(d_in, d_kv))
Q = X @ W_query
K = X @ W_key
V = X @ W_value

# 6 heads: head h uses columns h*head_size .. (h+1)*head_size - 1 of Q;
# K and V have kv_heads = 3 heads, each shared by heads // kv_heads = 2 query heads in a row
# (repeat_interleave, as LLMs-from-scratch's GroupedQueryAttention)
B, T, heads, head_size = 1, 6, 6, 2
kv_heads = 3
q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)
k = K.view(B, T, kv_heads, head_size).transpose(1, 2).repeat_interleave(heads // kv_heads, dim=1)
v = V.view(B, T, kv_heads, head_size).transpose(1, 2).repeat_interleave(heads // kv_heads, dim=1)
scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)
d_k = head_size
logits = scores * 0.5  # the multiplier (1/temperature)
logits = logits / d_k**0.5  # keeps the variance of q.k near 1
i = torch.arange(6).unsqueeze(1)  # query positions (rows)
j = torch.arange(6).unsqueeze(0)  # key positions (columns)
allowed = ((j <= i) & (i - j < 3))  # sliding window W = 3: 3 keys, this one included
mask = allowed.float()
logits = logits.masked_fill(mask == 0, float('-inf'))
weights = torch.softmax(logits, dim=-1)
context = (weights @ v).transpose(1, 2).contiguous().view(B, T, d_out)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
