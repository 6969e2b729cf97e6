# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors
title = 'Raschka 3.3.1: the scores normalised by their sum, attn_scores_2 / attn_scores_2.sum() (row "journey": 0.1455, 0.2278, ...), before the chapter turns to softmax'

# Input embeddings, one row per token
tokens = ['Your', 'journey', 'starts', 'with', 'one', 'step']
X = torch.tensor([[0.43, 0.15, 0.89],
                 [0.55, 0.87, 0.66],
                 [0.57, 0.85, 0.64],
                 [0.22, 0.58, 0.33],
                 [0.77, 0.25, 0.1],
                 [0.05, 0.8, 0.55]])

d_in, d_out = 3, 3
# Simplified self-attention: no trainable weights, the embeddings themselves
Q, K, V = X, X, X

scores = Q @ K.T  # (T, T)
d_k = K.shape[-1]
logits = scores  # no scaling, no mask
z = logits
weights = z / z.sum(dim=-1, keepdim=True)  # can go negative
context = weights @ V
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
