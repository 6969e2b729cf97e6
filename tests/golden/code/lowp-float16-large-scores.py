# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

# dtype float16: every stage is computed in float32 from the stored values of the
# stages before it, and its result is stored in float16 (rounded to nearest even),
# as PyTorch's GPU kernels accumulate in float32. stored() rounds and widens back: the
# variables are float32 tensors holding float16 numbers.
dtype = torch.float16


def stored(t):
    return t.to(dtype).float()

# Input embeddings, one row per token
X = torch.tensor([[200.0, 150.0, 100.0],
                 [120.0, 250.0, 90.0],
                 [60.0, 40.0, 300.0],
                 [1.0, 2.0, 3.0]])
X = stored(X)  # drawn or written in float32, then stored

d_in, d_out = 3, 3
# Simplified self-attention: no trainable weights, the embeddings themselves
Q, K, V = X, X, X

scores = Q @ K.T  # (T, T)
d_k = K.shape[-1]
scores = stored(scores)
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
mask = torch.tril(torch.ones(4, 4))  # causal: no peeking ahead
logits = logits.masked_fill(mask == 0, float('-inf'))
logits = stored(logits)  # the whole rule (scaling, mask) in float32, stored once
weights = torch.softmax(logits, dim=-1)
weights = stored(weights)
context = weights @ V
context = stored(context)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights.to(dtype), sep="\n")
print("context:", context.to(dtype), sep="\n")
