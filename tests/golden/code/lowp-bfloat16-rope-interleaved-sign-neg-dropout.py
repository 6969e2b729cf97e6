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

torch.manual_seed(31)
X = torch.randn(9, 8)  # (T, d_in)
X = stored(X)  # drawn or written in float32, then stored

d_in, d_out = 8, 6
torch.manual_seed(36)
W_query = torch.nn.Parameter(torch.rand(d_in, d_out))
W_key = torch.nn.Parameter(torch.rand(d_in, d_out))
W_value = torch.nn.Parameter(torch.rand(d_in, d_out))
W_query, W_key, W_value = stored(W_query), stored(W_key), stored(W_value)  # drawn in float32, then stored
Q = X @ W_query
K = X @ W_key
V = X @ W_value
Q, K, V = stored(Q), stored(K), stored(V)

# RoPE: each head's q and k turn pair by pair, pair i by the angle position * theta**(-2i/head_size)
# interleaved (Meta's Llama): dimensions 2i and 2i + 1 pair up, as one complex number
# sign -1: every angle turns the other way, as nanochat's rotation
T, head_size, theta = 9, 6, 100.0
inv_freq = 1.0 / (theta ** (torch.arange(0, head_size, 2) / head_size))  # (head_size/2,)
angles = torch.arange(T)[:, None] * inv_freq[None, :] * -1  # (T, head_size/2): position times frequency
freqs_cis = torch.polar(torch.ones_like(angles), angles)  # cos + i sin

def rope(x):
    pairs = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))  # (2i, 2i + 1) as a + ib
    return stored(torch.view_as_real(pairs * freqs_cis).flatten(-2))  # computed in float32, stored

Q_rot, K_rot = rope(Q), rope(K)
scores = Q_rot @ K_rot.T  # (T, T)
d_k = K.shape[-1]
scores = stored(scores)
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
i = torch.arange(9).unsqueeze(1)  # query positions (rows)
j = torch.arange(9).unsqueeze(0)  # key positions (columns)
allowed = ((j <= i) & (i - j < 4))  # sliding window W = 4: 4 keys, this one included
mask = allowed.float()
logits = logits.masked_fill(mask == 0, float('-inf'))
logits = stored(logits)  # the whole rule (scaling, mask) in float32, stored once
weights = torch.softmax(logits, dim=-1)
weights = stored(weights)
torch.manual_seed(5)
dropout = torch.nn.Dropout(0.25)  # training mode
weights_dropped = dropout(weights)
weights_dropped = stored(weights_dropped)
context = weights_dropped @ V
context = stored(context)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights.to(dtype), sep="\n")
print("context:", context.to(dtype), sep="\n")
