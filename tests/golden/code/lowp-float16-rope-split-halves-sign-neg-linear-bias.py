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


def stored_layer(layer):  # nn.Linear's float32 draws stored in float16
    layer.weight.copy_(stored(layer.weight))
    if layer.bias is not None:
        layer.bias.copy_(stored(layer.bias))
    return layer


def linear(layer, x):  # x @ W stored, then + bias stored: two operations
    y = stored(x @ layer.weight.T)
    return y if layer.bias is None else stored(y + layer.bias)

torch.manual_seed(31)
X = torch.randn(9, 8)  # (T, d_in)
X = stored(X)  # drawn or written in float32, then stored

d_in, d_out = 8, 8
torch.manual_seed(33)
query = stored_layer(torch.nn.Linear(d_in, d_out, bias=True))
key = stored_layer(torch.nn.Linear(d_in, d_out, bias=True))
value = stored_layer(torch.nn.Linear(d_in, d_out, bias=True))
out_proj = stored_layer(torch.nn.Linear(d_out, d_out))
Q = linear(query, X)
K = linear(key, X)
V = linear(value, X)

# RoPE: each head's q and k turn pair by pair, pair i by the angle position * theta**(-2i/head_size)
# split halves (Hugging Face, LLMs-from-scratch): dimensions i and i + head_size/2 pair up
# sign -1: every angle turns the other way, as nanochat's rotation
T, head_size, theta = 9, 8, 10000.0
inv_freq = 1.0 / (theta ** (torch.arange(0, head_size, 2) / head_size))  # (head_size/2,)
angles = torch.arange(T)[:, None] * inv_freq[None, :] * -1  # (T, head_size/2): position times frequency
angles = torch.cat([angles, angles], dim=-1)  # (T, head_size)
cos, sin = torch.cos(angles), torch.sin(angles)

def rope(x):
    x1, x2 = x[..., : head_size // 2], x[..., head_size // 2 :]
    return stored(x * cos + torch.cat((-x2, x1), dim=-1) * sin)  # rotate_half(x) = (-x2, x1)

Q_rot, K_rot = rope(Q), rope(K)
scores = Q_rot @ K_rot.T  # (T, T)
d_k = K.shape[-1]
scores = stored(scores)
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
mask = torch.tril(torch.ones(9, 9))  # causal: no peeking ahead
logits = logits.masked_fill(mask == 0, float('-inf'))
logits = stored(logits)  # the whole rule (scaling, mask) in float32, stored once
weights = torch.softmax(logits, dim=-1)
weights = stored(weights)
context = weights @ V
context = stored(context)
context = linear(out_proj, context)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights.to(dtype), sep="\n")
print("context:", context.to(dtype), sep="\n")
