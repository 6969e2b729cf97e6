# Attention Lab
# The PyTorch program behind what the app shows. Run it with PyTorch installed.
import re
import torch

torch.set_grad_enabled(False)  # no training here: plain tensors
title = "The fix of bug-sink-sigmoid: the sink as one more column of each row's softmax (torch.cat([logits, sink]).softmax): a row with no key gives 0 weights and 1 to the sink"

# Tokenize, build the vocabulary (sorted, then the special tokens), embed
text = '<pad> the cat sat on the mat'
tokens = [t.strip() for t in re.split(r'([,.:;?_!"()\']|--|\s)', text) if t.strip()]
vocab = sorted(set(tokens)) + ['<|endoftext|>', '<|unk|>']
token_ids = torch.tensor([vocab.index(t) for t in tokens])
torch.manual_seed(3)
embedding = torch.nn.Embedding(len(vocab), 4)
X = embedding(token_ids).unsqueeze(0)  # (B, T, d_in)

d_in, d_out = 4, 4
torch.manual_seed(3)
query = torch.nn.Linear(d_in, d_out, bias=False)
key = torch.nn.Linear(d_in, d_out, bias=False)
value = torch.nn.Linear(d_in, d_out, bias=False)
Q = query(X)
K = key(X)
V = value(X)

# 2 heads: head h uses columns h*head_size .. (h+1)*head_size - 1
B, T, heads, head_size = 1, 7, 2, 2
q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)
k = K.view(B, T, heads, head_size).transpose(1, 2)
v = V.view(B, T, heads, head_size).transpose(1, 2)
scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)
d_k = head_size
logits = scores / d_k**0.5  # keeps the variance of q.k near 1
i = torch.arange(7).unsqueeze(1)  # query positions (rows)
j = torch.arange(7).unsqueeze(0)  # key positions (columns)
part_0 = torch.tensor([[0, 1, 1, 1, 1, 1, 1],
                       [0, 1, 1, 1, 1, 1, 1],
                       [0, 1, 1, 1, 1, 1, 1],
                       [0, 1, 1, 1, 1, 1, 1],
                       [0, 1, 1, 1, 1, 1, 1],
                       [0, 1, 1, 1, 1, 1, 1],
                       [0, 1, 1, 1, 1, 1, 1]])
allowed = ((j <= i) & (part_0 == 1))  # and of 2 masks: allowed where every mask of the list allows
mask = allowed.float()
logits = logits.masked_fill(mask == 0, float('-inf'))
# gpt-oss's attention sink: one more column with a fixed logit in every row's softmax
sink_logit = torch.tensor([1.5, -1.0]).view(1, heads, 1, 1).expand(B, heads, T, 1)  # one logit per head
full = torch.softmax(torch.cat([logits, sink_logit], dim=-1), dim=-1)  # T keys + the sink
weights = full[..., :-1]  # the sink's column dropped: rows sum to 1 minus its share
sink = full[..., -1:]  # what the sink took of each row
context = (weights @ v).transpose(1, 2).contiguous().view(B, T, d_out)
var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K

print("weights:", weights, sep="\n")
print("context:", context, sep="\n")
