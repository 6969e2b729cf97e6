# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors
title = 'Why scale: View > Training trains this head with and without 1/sqrt(d_k) at d_k = 256, same task, same seed'

torch.manual_seed(0)
X = torch.randn(8, 32)  # (T, d_in)

d_in, d_out = 32, 16
torch.manual_seed(123)
query = torch.nn.Linear(d_in, d_out, bias=False)
key = torch.nn.Linear(d_in, d_out, bias=False)
value = torch.nn.Linear(d_in, d_out, bias=False)
Q = query(X)
K = key(X)
V = value(X)

scores = Q @ K.T  # (T, T)
d_k = K.shape[-1]
logits = scores  # no scaling, no mask
weights = torch.softmax(logits, dim=-1)
context = weights @ V
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
