# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import math
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

# Input embeddings, one row per token
X = torch.tensor([[0.43, 0.15, -0.89],
                 [0.55, 0.87, 0.66],
                 [-0.57, 0.85, 0.64],
                 [0.22, -0.58, 0.33],
                 [0.77, 0.25, 0.1],
                 [0.05, 0.8, -0.55]])
X = X.unsqueeze(0)  # (B, T, d_in) with B = 1

d_in, d_out = 3, 3
# Simplified self-attention: no trainable weights, the embeddings themselves
Q, K, V = X, X, X

# 3 heads: head h uses columns h*head_size .. (h+1)*head_size - 1
B, T, heads, head_size = 1, 6, 3, 1
q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)
k = K.view(B, T, heads, head_size).transpose(1, 2)
v = V.view(B, T, heads, head_size).transpose(1, 2)
d_k = head_size
# PyTorch's scaled_dot_product_attention (its math path, aten's
# _scaled_dot_product_attention_math) scales q and k, each by sqrt(scale), before the
# product, where the notebooks scale the product: the same logits up to rounding
scale = 0.3 / math.sqrt(d_k)
f = math.sqrt(abs(scale))
q_s = q * f
k_s = k * f
scores = q_s @ k_s.transpose(-2, -1)  # (B, heads, T, T)
mask = torch.tril(torch.ones(6, 6))  # causal: no peeking ahead
logits = scores.masked_fill(mask == 0, float('-inf'))
weights = torch.softmax(logits, dim=-1)
context = (weights @ v).transpose(1, 2).contiguous().view(B, T, d_out)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
