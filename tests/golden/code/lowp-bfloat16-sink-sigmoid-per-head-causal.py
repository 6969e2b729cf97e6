# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

# dtype bfloat16: every stage is computed in float32 from the stored values of the
# stages before it, and its result is stored in bfloat16 (rounded to nearest even),
# as PyTorch's GPU kernels accumulate in float32. stored() rounds and widens back: the
# variables are float32 tensors holding bfloat16 numbers.
dtype = torch.bfloat16


def stored(t):
    return t.to(dtype).float()

torch.manual_seed(21)
X = torch.randn(1, 8, 4)  # (B, T, d_in)
X = stored(X)  # drawn or written in float32, then stored

d_in, d_out = 4, 4
torch.manual_seed(22)
W_query = torch.nn.Parameter(torch.randn(d_in, d_out))
W_key = torch.nn.Parameter(torch.randn(d_in, d_out))
W_value = torch.nn.Parameter(torch.randn(d_in, d_out))
W_query, W_key, W_value = stored(W_query), stored(W_key), stored(W_value)  # drawn in float32, then stored
Q = X @ W_query
K = X @ W_key
V = X @ W_value
Q, K, V = stored(Q), stored(K), stored(V)

# 2 heads: head h uses columns h*head_size .. (h+1)*head_size - 1
B, T, heads, head_size = 1, 8, 2, 2
q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)
k = K.view(B, T, heads, head_size).transpose(1, 2)
v = V.view(B, T, heads, head_size).transpose(1, 2)
scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)
d_k = head_size
scores = stored(scores)
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
mask = torch.tril(torch.ones(8, 8))  # causal: no peeking ahead
logits = logits.masked_fill(mask == 0, float('-inf'))
logits = stored(logits)  # the whole rule (scaling, mask) in float32, stored once
# gpt-oss's attention sink applied after attention (torchtitan's FlexAttention rescale): sigmoid(lse - sink_logit)
sink_logit = torch.tensor([0.5, -2.0]).view(1, heads, 1, 1).expand(B, heads, T, 1)  # one logit per head
lse = torch.logsumexp(logits, dim=-1, keepdim=True)  # -inf for a row that sees no key
gate = torch.sigmoid(lse - sink_logit)
weights = torch.softmax(logits, dim=-1) * gate  # a row that sees no key: nan * 0 = nan
sink = 1 - gate  # what the sink took of each row
weights, sink = stored(weights), stored(sink)
context = (weights @ v).transpose(1, 2).contiguous().view(B, T, d_out)
context = stored(context)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights.to(dtype), sep="\n")
print("context:", context.to(dtype), sep="\n")
