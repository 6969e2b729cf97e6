# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors
title = "Karpathy's a @ b demo: after torch.manual_seed(42), b = torch.randint(0, 10, (3, 2)).float() = [[2, 7], [6, 4], [6, 5]] (written here as the input; the format has no randint source), a = tril(ones(3, 3)) with each row divided by its sum (the weights: mean over the causal mask), c = a @ b (the context)"

# Input embeddings, one row per token
X = torch.tensor([[2.0, 7.0],
                 [6.0, 4.0],
                 [6.0, 5.0]])

d_in, d_out = 2, 2
# Simplified self-attention: no trainable weights, the embeddings themselves
Q, K, V = X, X, X

scores = Q @ K.T  # (T, T)
d_k = K.shape[-1]
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
mask = torch.tril(torch.ones(3, 3))  # causal: no peeking ahead
logits = logits.masked_fill(mask == 0, float('-inf'))
weights = (mask / mask.sum(dim=-1, keepdim=True)).expand_as(scores)  # averaging: every allowed key alike
context = weights @ V
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
