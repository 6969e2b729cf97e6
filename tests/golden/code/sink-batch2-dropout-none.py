# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

torch.manual_seed(8)
X = torch.randn(2, 5, 4)  # (B, T, d_in)

d_in, d_out = 4, 4
torch.manual_seed(9)
query = torch.nn.Linear(d_in, d_out, bias=False)
key = torch.nn.Linear(d_in, d_out, bias=False)
value = torch.nn.Linear(d_in, d_out, bias=False)
Q = query(X)
K = key(X)
V = value(X)

# 2 heads: head h uses columns h*head_size .. (h+1)*head_size - 1
B, T, heads, head_size = 2, 5, 2, 2
q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)
k = K.view(B, T, heads, head_size).transpose(1, 2)
v = V.view(B, T, heads, head_size).transpose(1, 2)
scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)
d_k = head_size
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
# gpt-oss's attention sink: one more column with a fixed logit in every row's softmax
sink_logit = torch.full((*logits.shape[:-1], 1), 1.0)
full = torch.softmax(torch.cat([logits, sink_logit], dim=-1), dim=-1)  # T keys + the sink
weights = full[..., :-1]  # the sink's column dropped: rows sum to 1 minus its share
sink = full[..., -1:]  # what the sink took of each row
torch.manual_seed(4)
dropout = torch.nn.Dropout(0.25)  # training mode
weights_dropped = dropout(weights)
context = (weights_dropped @ v).transpose(1, 2).contiguous().view(B, T, d_out)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
