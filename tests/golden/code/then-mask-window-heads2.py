# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

torch.manual_seed(12)
X = torch.randn(1, 6, 4)  # (B, T, d_in)

d_in, d_out = 4, 4
torch.manual_seed(6)
W_query = torch.nn.Parameter(torch.randn(d_in, d_out))
W_key = torch.nn.Parameter(torch.randn(d_in, d_out))
W_value = torch.nn.Parameter(torch.randn(d_in, d_out))
Q = X @ W_query
K = X @ W_key
V = X @ W_value

# 2 heads: head h uses columns h*head_size .. (h+1)*head_size - 1
B, T, heads, head_size = 1, 6, 2, 2
q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)
k = K.view(B, T, heads, head_size).transpose(1, 2)
v = V.view(B, T, heads, head_size).transpose(1, 2)
scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)
d_k = head_size
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
i = torch.arange(6).unsqueeze(1)  # query positions (rows)
j = torch.arange(6).unsqueeze(0)  # key positions (columns)
allowed = ((j <= i) & (i - j < 2))  # sliding window W = 2: 2 keys, this one included
mask = allowed.float()
weights = torch.softmax(logits, dim=-1)  # over every key: the mask comes after
masked = weights * mask  # 0 where attention is not allowed
weights = masked / masked.sum(dim=-1, keepdim=True)  # rows sum to 1 again
context = (weights @ v).transpose(1, 2).contiguous().view(B, T, d_out)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
