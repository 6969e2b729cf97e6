# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import math
import re
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors
title = 'The original Transformer\'s sinusoidal encoding added to X: the two "the" rows differ by their positions, so attention can tell them apart'

# Tokenize, build the vocabulary (sorted, then the special tokens), embed
text = 'the cat saw the dog'
tokens = [t.strip() for t in re.split(r'([,.:;?_!"()\']|--|\s)', text) if t.strip()]
vocab = sorted(set(tokens)) + ['<|endoftext|>', '<|unk|>']
token_ids = torch.tensor([vocab.index(t) for t in tokens])
torch.manual_seed(2)
embedding = torch.nn.Embedding(len(vocab), 8)
X = embedding(token_ids)  # (T, d_in)

# The original Transformer's positional encoding (Vaswani et al. 2017), added to X:
# sin on even, cos on odd dimensions, frequencies 10000**(-2i/d_in)
T, d_in = 5, 8
pe = torch.zeros(T, d_in)
position = torch.arange(T)[:, None]
div_term = torch.exp(torch.arange(0, d_in, 2) * -(math.log(10000.0) / d_in))
pe[:, 0::2] = torch.sin(position * div_term)
pe[:, 1::2] = torch.cos(position * div_term[: d_in // 2])
X = X + pe  # every token's embedding plus its position's encoding

d_in, d_out = 8, 8
torch.manual_seed(2)
query = torch.nn.Linear(d_in, d_out, bias=False)
key = torch.nn.Linear(d_in, d_out, bias=False)
value = torch.nn.Linear(d_in, d_out, bias=False)
Q = query(X)
K = key(X)
V = value(X)

scores = Q @ K.T  # (T, T)
d_k = K.shape[-1]
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
mask = torch.tril(torch.ones(5, 5))  # causal: no peeking ahead
logits = logits.masked_fill(mask == 0, float('-inf'))
weights = torch.softmax(logits, dim=-1)
context = weights @ V
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
