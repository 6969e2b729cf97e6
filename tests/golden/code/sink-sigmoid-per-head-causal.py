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
mask = torch.tril(torch.ones(8, 8))  # causal: no peeking ahead
logits = logits.masked_fill(mask == 0, float('-inf'))
# gpt-oss's attention sink applied after attention (torchtitan's FlexAttention rescale): sigmoid(lse - sink_logit)
sink_logit = torch.tensor([0.5, -2.0]).view(1, heads, 1, 1).expand(B, heads, T, 1)  # one logit per head
lse = torch.logsumexp(logits, dim=-1, keepdim=True)  # -inf for a row that sees no key
gate = torch.sigmoid(lse - sink_logit)
weights = torch.softmax(logits, dim=-1) * gate  # a row that sees no key: nan * 0 = nan
sink = 1 - gate  # what the sink took of each row
context = (weights @ v).transpose(1, 2).contiguous().view(B, T, d_out)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
