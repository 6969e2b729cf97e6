# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

torch.manual_seed(3)
X = torch.randn(2, 5, 4)  # (B, T, d_in)

d_in, d_out = 4, 6
torch.manual_seed(21)
# One module per head, as MultiHeadAttentionWrapper: head h draws its own query, key
# and value (d_in x 2 each) after head h - 1's; side by side they make W.
per_head = []
for h in range(3):
    drawn = {}
    for name in ("key", "query", "value"):  # the draw order
        drawn[name] = torch.nn.Linear(d_in, 2, bias=True)
    per_head.append(drawn)
out_proj = torch.nn.Linear(d_out, d_out)
Q = torch.cat([drawn["query"](X) for drawn in per_head], dim=-1)
K = torch.cat([drawn["key"](X) for drawn in per_head], dim=-1)
V = torch.cat([drawn["value"](X) for drawn in per_head], dim=-1)

# 3 heads: head h uses columns h*head_size .. (h+1)*head_size - 1
B, T, heads, head_size = 2, 5, 3, 2
q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)
k = K.view(B, T, heads, head_size).transpose(1, 2)
v = V.view(B, T, heads, head_size).transpose(1, 2)
scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)
d_k = head_size
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
mask = torch.tril(torch.ones(5, 5))  # causal: no peeking ahead
logits = logits.masked_fill(mask == 0, float('-inf'))
weights = torch.softmax(logits, dim=-1)
dropout = torch.nn.Dropout(0.3)  # training mode
weights_dropped = torch.stack([dropout(weights[:, h].contiguous()) for h in range(heads)], dim=1)
context = (weights_dropped @ v).transpose(1, 2).contiguous().view(B, T, d_out)
context = out_proj(context)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
