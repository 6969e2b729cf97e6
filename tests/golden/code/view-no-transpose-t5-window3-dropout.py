# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

torch.manual_seed(43)
X = torch.randn(1, 5, 4)  # (B, T, d_in)

d_in, d_out = 4, 4
torch.manual_seed(44)
W_query = torch.nn.Parameter(torch.randn(d_in, d_out))
W_key = torch.nn.Parameter(torch.randn(d_in, d_out))
W_value = torch.nn.Parameter(torch.randn(d_in, d_out))
Q = X @ W_query
K = X @ W_key
V = X @ W_value

# 2 heads: head h uses columns h*head_size .. (h+1)*head_size - 1
B, T, heads, head_size = 1, 5, 2, 2
q = Q.view(B, heads, T, head_size)  # no transpose: head h's rows are pieces of other tokens' rows
k = K.view(B, heads, T, head_size)
v = V.view(B, heads, T, head_size)
Q, K, V = (m.transpose(1, 2).reshape(B, T, -1) for m in (q, k, v))  # what each head reads, side by side, as the app shows them
scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)
d_k = head_size
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
i = torch.arange(5).unsqueeze(1)  # query positions (rows)
j = torch.arange(5).unsqueeze(0)  # key positions (columns)
allowed = ((j <= i) & (i - j < 3))  # sliding window W = 3: 3 keys, this one included
mask = allowed.float()
logits = logits.masked_fill(mask == 0, float('-inf'))
weights = torch.softmax(logits, dim=-1)
torch.manual_seed(45)
dropout = torch.nn.Dropout(0.2)  # training mode
weights_dropped = dropout(weights)
context = (weights_dropped @ v).view(B, T, d_out)  # no transpose back either
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
