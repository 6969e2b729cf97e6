# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

torch.manual_seed(8)
X = torch.randn(2, 5, 4)  # (B, T, d_in)

d_in, d_out = 4, 4
torch.manual_seed(9)
W_query = torch.nn.Parameter(torch.rand(d_in, d_out))
W_key = torch.nn.Parameter(torch.rand(d_in, d_out))
W_value = torch.nn.Parameter(torch.rand(d_in, d_out))
Q = X @ W_query
K = X @ W_key
V = X @ W_value

scores = Q @ K.transpose(-2, -1)  # (B, T, T)
d_k = K.shape[-1]
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
# ALiBi (Press et al.): a penalty growing with the distance i - j, one slope per head
slopes = torch.tensor([0.00390625])  # 2^(-8h/H), h = 1..H
i = torch.arange(5).unsqueeze(1)  # query positions (rows)
j = torch.arange(5).unsqueeze(0)  # key positions (columns)
alibi = -(slopes[0] * (i - j))  # (T, T)
logits = logits + alibi
mask = torch.tril(torch.ones(5, 5))  # causal: no peeking ahead
logits = logits.masked_fill(mask == 0, float('-inf'))
weights = torch.exp(logits) / torch.exp(logits).sum(dim=-1, keepdim=True)  # overflows for large logits
context = weights @ V
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
