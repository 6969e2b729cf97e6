# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import math
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

torch.manual_seed(50)
X = torch.randn(2, 5, 6)  # (B, T, d_in)

d_in, d_out = 6, 5
torch.manual_seed(51)
W_query = torch.nn.Parameter(torch.rand(d_in, d_out))
W_key = torch.nn.Parameter(torch.rand(d_in, d_out))
W_value = torch.nn.Parameter(torch.rand(d_in, d_out))
Q = X @ W_query
K = X @ W_key
V = X @ W_value

d_k = K.shape[-1]
# PyTorch's scaled_dot_product_attention (its math path, aten's
# _scaled_dot_product_attention_math) scales q and k, each by sqrt(scale), before the
# product, where the notebooks scale the product: the same logits up to rounding
scale = 0.3
f = math.sqrt(abs(scale))
Q_s = Q * f
K_s = K * f
scores = Q_s @ K_s.transpose(-2, -1)  # (B, T, T)
mask = torch.tril(torch.ones(5, 5))  # causal: no peeking ahead
logits = scores.masked_fill(mask == 0, float('-inf'))
weights = torch.softmax(logits, dim=-1)
context = weights @ V
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
