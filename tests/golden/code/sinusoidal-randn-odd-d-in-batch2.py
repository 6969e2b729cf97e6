# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import math
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

torch.manual_seed(39)
X = torch.randn(2, 12, 5)  # (B, T, d_in)

# The original Transformer's positional encoding (Vaswani et al. 2017), added to X:
# sin on even, cos on odd dimensions, frequencies 10000**(-2i/d_in)
T, d_in = 12, 5
pe = torch.zeros(T, d_in)
position = torch.arange(T)[:, None]
div_term = torch.exp(torch.arange(0, d_in, 2) * -(math.log(10000.0) / d_in))
pe[:, 0::2] = torch.sin(position * div_term)
pe[:, 1::2] = torch.cos(position * div_term[: d_in // 2])
X = X + pe  # every token's embedding plus its position's encoding

d_in, d_out = 5, 4
torch.manual_seed(40)
W_query = torch.nn.Parameter(torch.randn(d_in, d_out))
W_key = torch.nn.Parameter(torch.randn(d_in, d_out))
W_value = torch.nn.Parameter(torch.randn(d_in, d_out))
Q = X @ W_query
K = X @ W_key
V = X @ W_value

scores = Q @ K.transpose(-2, -1)  # (B, T, T)
d_k = K.shape[-1]
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
weights = torch.softmax(logits, dim=-1)
context = weights @ V
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
