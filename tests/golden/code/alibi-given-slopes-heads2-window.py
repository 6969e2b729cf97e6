# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

torch.manual_seed(21)
X = torch.randn(1, 8, 4)  # (B, T, d_in)

d_in, d_out = 4, 4
torch.manual_seed(22)
W_query = torch.nn.Parameter(torch.randn(d_in, d_out))
W_key = torch.nn.Parameter(torch.randn(d_in, d_out))
W_value = torch.nn.Parameter(torch.randn(d_in, d_out))
Q = X @ W_query
K = X @ W_key
V = X @ W_value

# 2 heads: head h uses columns h*head_size .. (h+1)*head_size - 1
B, T, heads, head_size = 1, 8, 2, 2
q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)
k = K.view(B, T, heads, head_size).transpose(1, 2)
v = V.view(B, T, heads, head_size).transpose(1, 2)
scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)
d_k = head_size
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
# ALiBi (Press et al.): a penalty growing with the distance i - j, one slope per head
slopes = torch.tensor([0.699999988079071, -0.10000000149011612])  # the scenario's slopes
i = torch.arange(8).unsqueeze(1)  # query positions (rows)
j = torch.arange(8).unsqueeze(0)  # key positions (columns)
alibi = -(slopes.view(heads, 1, 1) * (i - j))  # (heads, T, T)
logits = logits + alibi
i = torch.arange(8).unsqueeze(1)  # query positions (rows)
j = torch.arange(8).unsqueeze(0)  # key positions (columns)
allowed = ((j <= i) & (i - j < 4))  # sliding window W = 4: 4 keys, this one included
mask = allowed.float()
logits = logits.masked_fill(mask == 0, float('-inf'))
weights = torch.softmax(logits, dim=-1)
context = (weights @ v).transpose(1, 2).contiguous().view(B, T, d_out)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
