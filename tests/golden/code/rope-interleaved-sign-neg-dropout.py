# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors

torch.manual_seed(31)
X = torch.randn(9, 8)  # (T, d_in)

d_in, d_out = 8, 6
torch.manual_seed(36)
W_query = torch.nn.Parameter(torch.rand(d_in, d_out))
W_key = torch.nn.Parameter(torch.rand(d_in, d_out))
W_value = torch.nn.Parameter(torch.rand(d_in, d_out))
Q = X @ W_query
K = X @ W_key
V = X @ W_value

# RoPE: each head's q and k turn pair by pair, pair i by the angle position * theta**(-2i/head_size)
# interleaved (Meta's Llama): dimensions 2i and 2i + 1 pair up, as one complex number
# sign -1: every angle turns the other way, as nanochat's rotation
T, head_size, theta = 9, 6, 100.0
inv_freq = 1.0 / (theta ** (torch.arange(0, head_size, 2) / head_size))  # (head_size/2,)
angles = torch.arange(T)[:, None] * inv_freq[None, :] * -1  # (T, head_size/2): position times frequency
freqs_cis = torch.polar(torch.ones_like(angles), angles)  # cos + i sin

def rope(x):
    pairs = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))  # (2i, 2i + 1) as a + ib
    return torch.view_as_real(pairs * freqs_cis).flatten(-2)

Q_rot, K_rot = rope(Q), rope(K)
scores = Q_rot @ K_rot.T  # (T, T)
d_k = K.shape[-1]
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
i = torch.arange(9).unsqueeze(1)  # query positions (rows)
j = torch.arange(9).unsqueeze(0)  # key positions (columns)
allowed = ((j <= i) & (i - j < 4))  # sliding window W = 4: 4 keys, this one included
mask = allowed.float()
logits = logits.masked_fill(mask == 0, float('-inf'))
weights = torch.softmax(logits, dim=-1)
torch.manual_seed(5)
dropout = torch.nn.Dropout(0.25)  # training mode
weights_dropped = dropout(weights)
context = weights_dropped @ V
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
