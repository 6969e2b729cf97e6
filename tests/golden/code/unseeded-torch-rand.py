# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

# Input embeddings, one row per token
X = torch.tensor([[1.0, 2.0],
                 [3.0, 4.0]])

d_in, d_out = 2, 2
# Unseeded: the app starts from PyTorch's default seed (libtorch's, which a new
# torch.Generator() holds); Python's torch replaces it by a random seed when it is
# imported, so without this line every run would differ.
torch.manual_seed(67280421310721)
W_query = torch.nn.Parameter(torch.rand(d_in, d_out))
W_key = torch.nn.Parameter(torch.rand(d_in, d_out))
W_value = torch.nn.Parameter(torch.rand(d_in, d_out))
Q = X @ W_query
K = X @ W_key
V = X @ W_value

scores = Q @ K.T  # (T, T)
d_k = K.shape[-1]
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
weights = torch.softmax(logits, dim=-1)
context = weights @ V
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
