# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

# Input embeddings, one row per token
X = torch.tensor([[0.43, 0.15, 0.89],
                 [0.55, 0.87, 0.66],
                 [0.57, 0.85, 0.64],
                 [0.22, 0.58, 0.33]])

d_in, d_out = 3, 3
# Simplified self-attention: no trainable weights, the embeddings themselves
Q, K, V = X, X, X

scores = Q @ K.T  # (T, T)
d_k = K.shape[-1]
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
mask = torch.tensor([[1, 0, 0, 1],
                     [0, 0, 0, 0],
                     [1, 1, 0, 0],
                     [0, 1, 1, 1]])
weights = torch.softmax(logits, dim=-1)  # over every key: the mask comes after
masked = weights * mask  # 0 where attention is not allowed
weights = masked / masked.sum(dim=-1, keepdim=True)  # rows sum to 1 again
weights = weights.masked_fill(mask.sum(dim=-1, keepdim=True) == 0, 0.0)  # masked_rows "zero": a row with no allowed key gives 0, as PyTorch >= 2.5's SDPA
context = weights @ V
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
