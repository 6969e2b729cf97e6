# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

# Input embeddings, one row per token
X = torch.tensor([[1.0, 0.0],
                 [-1.0, 0.0],
                 [0.0, 1.0]])

d_in, d_out = 2, 2
# Simplified self-attention: no trainable weights, the embeddings themselves
Q, K, V = X, X, X

scores = Q @ K.T  # (T, T)
d_k = K.shape[-1]
logits = scores  # no scaling, no mask
z = logits
weights = z / z.sum(dim=-1, keepdim=True)  # can go negative
torch.manual_seed(3)
dropout = torch.nn.Dropout(0.5)  # training mode
weights_dropped = dropout(weights)
context = weights_dropped @ V
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
