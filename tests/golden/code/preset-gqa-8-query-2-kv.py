# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import re
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors
title = "GQA, 8 query heads and 2 K/V heads (Llama 3, Qwen, LLMs-from-scratch's GQA): query heads 0-3 share K/V head 0, heads 4-7 share K/V head 1, so the K/V cache is 4 times smaller"

# Tokenize, build the vocabulary (sorted, then the special tokens), embed
text = 'the cat sat on the mat and slept'
tokens = [t.strip() for t in re.split(r'([,.:;?_!"()\']|--|\s)', text) if t.strip()]
vocab = sorted(set(tokens)) + ['<|endoftext|>', '<|unk|>']
token_ids = torch.tensor([vocab.index(t) for t in tokens])
torch.manual_seed(3)
embedding = torch.nn.Embedding(len(vocab), 16)
X = embedding(token_ids).unsqueeze(0)  # (B, T, d_in)

d_in, d_out = 16, 16
d_kv = 4  # kv_heads * head_size = 2 * 2: K and V have 2 heads, Q has 8
torch.manual_seed(3)
key = torch.nn.Linear(d_in, d_kv, bias=False)
value = torch.nn.Linear(d_in, d_kv, bias=False)
query = torch.nn.Linear(d_in, d_out, bias=False)
Q = query(X)
K = key(X)
V = value(X)

# 8 heads: head h uses columns h*head_size .. (h+1)*head_size - 1 of Q;
# K and V have kv_heads = 2 heads, each shared by heads // kv_heads = 4 query heads in a row
# (repeat_interleave, as LLMs-from-scratch's GroupedQueryAttention)
B, T, heads, head_size = 1, 8, 8, 2
kv_heads = 2
q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)
k = K.view(B, T, kv_heads, head_size).transpose(1, 2).repeat_interleave(heads // kv_heads, dim=1)
v = V.view(B, T, kv_heads, head_size).transpose(1, 2).repeat_interleave(heads // kv_heads, dim=1)
scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)
d_k = head_size
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
mask = torch.tril(torch.ones(8, 8))  # causal: no peeking ahead
logits = logits.masked_fill(mask == 0, float('-inf'))
weights = torch.softmax(logits, dim=-1)
context = (weights @ v).transpose(1, 2).contiguous().view(B, T, d_out)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
