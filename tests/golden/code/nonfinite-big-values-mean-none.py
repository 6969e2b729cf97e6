# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

# Input embeddings, one row per token
X = torch.tensor([[4e+19, -3e+19],
                 [2e+19, 1e+19],
                 [-1e+19, 3e+19]])

d_in, d_out = 2, 2
# Simplified self-attention: no trainable weights, the embeddings themselves
Q, K, V = X, X, X

scores = Q @ K.T  # (T, T)
d_k = K.shape[-1]
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
mask = torch.ones(3, 3)
weights = (mask / mask.sum(dim=-1, keepdim=True)).expand_as(scores)  # averaging: every allowed key alike
context = weights @ V
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
