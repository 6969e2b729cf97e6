# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import re
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors
title = 'Sliding window W = 3 (gpt-oss, Mistral, mlx-lm): each word sees 3 keys, itself included, never further back'

# Tokenize, build the vocabulary (sorted, then the special tokens), embed
text = 'the cat sat on the mat and then it slept'
tokens = [t.strip() for t in re.split(r'([,.:;?_!"()\']|--|\s)', text) if t.strip()]
vocab = sorted(set(tokens)) + ['<|endoftext|>', '<|unk|>']
token_ids = torch.tensor([vocab.index(t) for t in tokens])
torch.manual_seed(3)
embedding = torch.nn.Embedding(len(vocab), 8)
X = embedding(token_ids).unsqueeze(0)  # (B, T, d_in)

d_in, d_out = 8, 8
torch.manual_seed(3)
query = torch.nn.Linear(d_in, d_out, bias=False)
key = torch.nn.Linear(d_in, d_out, bias=False)
value = torch.nn.Linear(d_in, d_out, bias=False)
Q = query(X)
K = key(X)
V = value(X)

# 2 heads: head h uses columns h*head_size .. (h+1)*head_size - 1
B, T, heads, head_size = 1, 10, 2, 4
q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)
k = K.view(B, T, heads, head_size).transpose(1, 2)
v = V.view(B, T, heads, head_size).transpose(1, 2)
scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)
d_k = head_size
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
i = torch.arange(10).unsqueeze(1)  # query positions (rows)
j = torch.arange(10).unsqueeze(0)  # key positions (columns)
allowed = ((j <= i) & (i - j < 3))  # sliding window W = 3: 3 keys, this one included
mask = allowed.float()
logits = logits.masked_fill(mask == 0, float('-inf'))
weights = torch.softmax(logits, dim=-1)
context = (weights @ v).transpose(1, 2).contiguous().view(B, T, d_out)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
