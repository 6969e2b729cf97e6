# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

# Input embeddings, one row per token
X = torch.tensor([[3.0, 1.0],
                 [2.0, 2.0],
                 [1.0, 3.0],
                 [-1.0, 4.0]])

d_in, d_out = 2, 2
# Simplified self-attention: no trainable weights, the embeddings themselves
Q, K, V = X, X, X

scores = Q @ K.T  # (T, T)
d_k = K.shape[-1]
logits = scores * 40.0  # the multiplier (1/temperature)
logits = logits / d_k**0.5  # keeps the variance of q.k near 1
mask = torch.tensor([[1, 0, 0, 1],
                     [0, 0, 0, 0],
                     [1, 1, 1, 1],
                     [1, 1, 1, 1]])
weights = torch.softmax(logits, dim=-1)  # over every key: the mask comes after
masked = weights * mask  # 0 where attention is not allowed
weights = masked / masked.sum(dim=-1, keepdim=True)  # rows sum to 1 again
context = weights @ V
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
