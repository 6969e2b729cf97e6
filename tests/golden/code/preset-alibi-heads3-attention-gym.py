# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import re
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors
title = "ALiBi with 3 heads, attention-gym's slopes (2^(-8(h+1)/3): 0.157, 0.025, 1/256, as generate_alibi_bias and flash-attention's tests); compare alibi-heads3-paper"

# Tokenize, build the vocabulary (sorted, then the special tokens), embed
text = 'the cat sat on the mat because it was warm'
tokens = [t.strip() for t in re.split(r'([,.:;?_!"()\']|--|\s)', text) if t.strip()]
vocab = sorted(set(tokens)) + ['<|endoftext|>', '<|unk|>']
token_ids = torch.tensor([vocab.index(t) for t in tokens])
torch.manual_seed(5)
embedding = torch.nn.Embedding(len(vocab), 6)
X = embedding(token_ids).unsqueeze(0)  # (B, T, d_in)

d_in, d_out = 6, 6
torch.manual_seed(5)
query = torch.nn.Linear(d_in, d_out, bias=False)
key = torch.nn.Linear(d_in, d_out, bias=False)
value = torch.nn.Linear(d_in, d_out, bias=False)
Q = query(X)
K = key(X)
V = value(X)

# 3 heads: head h uses columns h*head_size .. (h+1)*head_size - 1
B, T, heads, head_size = 1, 10, 3, 2
q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)
k = K.view(B, T, heads, head_size).transpose(1, 2)
v = V.view(B, T, heads, head_size).transpose(1, 2)
scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)
d_k = head_size
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
# ALiBi (Press et al.): a penalty growing with the distance i - j, one slope per head
slopes = torch.tensor([0.15749011933803558, 0.02480313926935196, 0.00390625])  # attention-gym's 2^(-8(h+1)/H), h = 0..H-1
i = torch.arange(10).unsqueeze(1)  # query positions (rows)
j = torch.arange(10).unsqueeze(0)  # key positions (columns)
alibi = -(slopes.view(heads, 1, 1) * (i - j))  # (heads, T, T)
logits = logits + alibi
mask = torch.tril(torch.ones(10, 10))  # causal: no peeking ahead
logits = logits.masked_fill(mask == 0, float('-inf'))
weights = torch.softmax(logits, dim=-1)
context = (weights @ v).transpose(1, 2).contiguous().view(B, T, d_out)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
