# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors
title = 'The fix of bug-scale-d-model: scaled by head_size**-0.5 (1 / √d_k)'

torch.manual_seed(1337)
X = torch.randn(4, 8, 32)  # (B, T, d_in)

d_in, d_out = 32, 16
key = torch.nn.Linear(d_in, d_out, bias=False)
query = torch.nn.Linear(d_in, d_out, bias=False)
value = torch.nn.Linear(d_in, d_out, bias=False)
Q = query(X)
K = key(X)
V = value(X)

scores = Q @ K.transpose(-2, -1)  # (B, T, T)
d_k = K.shape[-1]
logits = scores * 16**-0.5  # 1 / sqrt(head_size): q.k keeps a variance near 1
mask = torch.tril(torch.ones(8, 8))  # causal: no peeking ahead
logits = logits.masked_fill(mask == 0, float('-inf'))
weights = torch.softmax(logits, dim=-1)
context = weights @ V
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
