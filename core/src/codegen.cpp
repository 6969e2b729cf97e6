// codegen.cpp: see codegen.h. Each block of the program mirrors one stage of the engine and
// one step of torch_scenario.py, so that the printed numbers agree with the app's.
#include "attnlab/codegen.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

namespace attnlab {
namespace {

// A Python float literal: the shortest text that reads back as the same value, with a decimal
// point so that torch.tensor makes float32 rather than int64.
template <typename T>
std::string PyFloat(T v) {
  if (std::isnan(v)) return "float('nan')";
  if (std::isinf(v)) return v > 0 ? "float('inf')" : "float('-inf')";
  char buf[40];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string PyString(const std::string& s) { return nlohmann::json(s).dump(); }

std::string PyList(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + PyString(v[i]);
  return out + "]";
}

// A matrix as a nested Python list, one row per line, indented to line up under "[".
std::string PyMatrix(const Matrix& m, int indent) {
  std::string pad(indent + 1, ' ');
  std::string out = "[";
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    out += r ? ",\n" + pad + "[" : "[";
    for (Eigen::Index c = 0; c < m.cols(); ++c) out += (c ? ", " : "") + PyFloat(m(r, c));
    out += "]";
  }
  return out + "]";
}

const char* kSplit = R"(re.split(r'([,.:;?_!"()\']|--|\s)', text))";

}  // namespace

std::string GeneratePyTorchCode(const Scenario& s) {
  const Shape sh = ValidateScenario(s);
  const bool flat = sh.B == 1 && sh.H == 1;  // drop the batch and head dimensions
  const InputSpec& in = s.input;
  const ProjectionSpec& p = s.projections;
  std::ostringstream py;
  py << "# Attention Lab: " << (s.title.empty() ? "a scenario" : s.title) << "\n";
  py << "# The PyTorch program behind what the app shows. Run it with PyTorch installed.\n";
  if (in.source == InputSource::kText) py << "import re\n";
  py << "import torch\n\n";
  py << "torch.set_grad_enabled(False)  # no training here: plain tensors\n\n";

  // ---- input X ----
  const std::string x_shape = flat ? "(T, d_in)" : "(B, T, d_in)";
  switch (in.source) {
    case InputSource::kMatrix: {
      py << "# Input embeddings, one row per token\n";
      if (!in.tokens.empty()) py << "tokens = " << PyList(in.tokens) << "\n";
      if (sh.B == 1) {
        py << "X = torch.tensor(" << PyMatrix(in.values[0], 16) << ")\n";
        if (!flat) py << "X = X.unsqueeze(0)  # (B, T, d_in) with B = 1\n";
      } else {
        py << "X = torch.tensor([\n";
        for (size_t b = 0; b < in.values.size(); ++b)
          py << "    " << PyMatrix(in.values[b], 4) << (b + 1 < in.values.size() ? ",\n" : "\n");
        py << "])\n";
      }
      break;
    }
    case InputSource::kText: {
      py << "# Tokenize, build the vocabulary (sorted, then the special tokens), embed\n";
      py << "text = " << PyString(in.text) << "\n";
      switch (in.tokenizer) {
        case TokenizerKind::kWords:
          py << "tokens = [t.strip() for t in " << kSplit << " if t.strip()]\n";
          break;
        case TokenizerKind::kWordsAndSpaces:
          py << "tokens = [t for t in " << kSplit << " if t != \"\"]  # spaces are tokens too\n";
          break;
        case TokenizerKind::kChars:
          py << "tokens = list(text)\n";
          break;
      }
      py << "vocab = sorted(set(tokens)) + " << PyList(in.special_tokens) << "\n";
      py << "token_ids = torch.tensor([vocab.index(t) for t in tokens])\n";
      py << "torch.manual_seed(" << in.seed << ")\n";
      py << "embedding = torch.nn.Embedding(len(vocab), " << in.d_in << ")\n";
      py << "X = embedding(token_ids)" << (flat ? "" : ".unsqueeze(0)") << "  # " << x_shape
         << "\n";
      break;
    }
    case InputSource::kRandn:
      py << "torch.manual_seed(" << in.seed << ")\n";
      if (flat)
        py << "X = torch.randn(" << sh.T << ", " << sh.d_in << ")  # (T, d_in)\n";
      else
        py << "X = torch.randn(" << sh.B << ", " << sh.T << ", " << sh.d_in
           << ")  # (B, T, d_in)\n";
      break;
  }
  py << "\n";

  // ---- projections Q, K, V ----
  py << "d_in, d_out = " << sh.d_in << ", " << sh.d_out << "\n";
  const bool draws = p.init == ProjectionInit::kTorchRand || p.init == ProjectionInit::kRandn ||
                     p.init == ProjectionInit::kLinear;
  if (draws && p.seed) py << "torch.manual_seed(" << *p.seed << ")\n";
  switch (p.init) {
    case ProjectionInit::kIdentity:
      py << "# Simplified self-attention: no trainable weights, the embeddings themselves\n";
      py << "Q, K, V = X, X, X\n";
      break;
    case ProjectionInit::kTorchRand:
    case ProjectionInit::kRandn: {
      const char* fn = p.init == ProjectionInit::kTorchRand ? "torch.rand" : "torch.randn";
      for (Projection w : p.order)
        py << "W_" << Name(w) << " = torch.nn.Parameter(" << fn << "(d_in, d_out))\n";
      py << "Q = X @ W_query\nK = X @ W_key\nV = X @ W_value\n";
      break;
    }
    case ProjectionInit::kLinear:
      for (Projection w : p.order)
        py << Name(w) << " = torch.nn.Linear(d_in, d_out, bias=" << (p.bias ? "True" : "False")
           << ")\n";
      if (p.out_proj) py << "out_proj = torch.nn.Linear(d_out, d_out)\n";
      py << "Q = query(X)\nK = key(X)\nV = value(X)\n";
      break;
    case ProjectionInit::kMatrix:
      for (int w = 0; w < 3; ++w) {
        const std::string name = std::string("W_") + Name(static_cast<Projection>(w));
        py << name << " = torch.tensor(" << PyMatrix(p.W[w], static_cast<int>(name.size()) + 16)
           << ")\n";
      }
      py << "Q = X @ W_query\nK = X @ W_key\nV = X @ W_value\n";
      break;
  }
  py << "\n";

  // ---- scores ----
  if (sh.H > 1) {
    py << "# " << sh.H << " heads: head h uses columns h*head_size .. (h+1)*head_size - 1\n";
    py << "B, T, heads, head_size = " << sh.B << ", " << sh.T << ", " << sh.H << ", " << sh.dh
       << "\n";
    py << "q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)\n";
    py << "k = K.view(B, T, heads, head_size).transpose(1, 2)\n";
    py << "v = V.view(B, T, heads, head_size).transpose(1, 2)\n";
    py << "scores = q @ k.transpose(-2, -1)  # (B, heads, T, T)\n";
    py << "d_k = head_size\n";
  } else {
    py << "scores = Q @ K" << (flat ? ".T  # (T, T)" : ".transpose(-2, -1)  # (B, T, T)") << "\n";
    py << "d_k = K.shape[-1]\n";
  }

  // ---- logits: temperature (multiplier), scaling, mask ----
  std::string logits = "scores";
  if (s.scaling.multiplier != 1.0) {
    py << "logits = scores * " << PyFloat(s.scaling.multiplier)
       << "  # the multiplier (1/temperature)\n";
    logits = "logits";
  }
  if (s.scaling.sqrt_dk) {
    py << "logits = " << logits << " / d_k**0.5  # keeps the variance of q.k near 1\n";
    logits = "logits";
  }
  const bool has_mask = s.mask.kind != MaskKind::kNone;
  if (s.mask.kind == MaskKind::kCausal) {
    py << "mask = torch.tril(torch.ones(" << sh.T << ", " << sh.T
       << "))  # causal: no peeking ahead\n";
  } else if (s.mask.kind == MaskKind::kCustom) {
    py << "mask = torch.tensor([";
    for (Eigen::Index r = 0; r < s.mask.allowed.rows(); ++r) {
      py << (r ? ",\n                     [" : "[");
      for (Eigen::Index c = 0; c < s.mask.allowed.cols(); ++c)
        py << (c ? ", " : "") << int(s.mask.allowed(r, c));
      py << "]";
    }
    py << "])\n";
  }
  if (has_mask)
    py << "logits = " << logits << ".masked_fill(mask == 0, float('-inf'))\n";
  else if (logits != "logits")
    py << "logits = scores  # no scaling, no mask\n";

  // ---- weights ----
  switch (s.normalization) {
    case Normalization::kSoftmax:
      py << "weights = torch.softmax(logits, dim=-1)\n";
      break;
    case Normalization::kSoftmaxNaive:
      py << "weights = torch.exp(logits) / torch.exp(logits).sum(dim=-1, keepdim=True)"
            "  # overflows for large logits\n";
      break;
    case Normalization::kSum:
      if (has_mask)
        py << "z = logits.masked_fill(mask == 0, 0.0)\n";
      else
        py << "z = logits\n";
      py << "weights = z / z.sum(dim=-1, keepdim=True)  # can go negative\n";
      break;
    case Normalization::kMean:
      if (!has_mask) py << "mask = torch.ones(" << sh.T << ", " << sh.T << ")\n";
      py << "weights = (mask / mask.sum(dim=-1, keepdim=True)).expand_as(scores)"
            "  # averaging: every allowed key alike\n";
      break;
  }

  // ---- dropout and context ----
  std::string used = "weights";
  if (s.dropout.p > 0) {
    if (s.dropout.seed) py << "torch.manual_seed(" << *s.dropout.seed << ")\n";
    py << "dropout = torch.nn.Dropout(" << PyFloat(s.dropout.p) << ")  # training mode\n";
    py << "weights_dropped = dropout(weights)\n";
    used = "weights_dropped";
  }
  if (sh.H > 1) {
    py << "context = (" << used << " @ v).transpose(1, 2).contiguous().view(B, T, d_out)\n";
  } else {
    py << "context = " << used << " @ V\n";
  }
  if (p.out_proj) py << "context = out_proj(context)\n";
  py << "\nprint(\"weights:\", weights, sep=\"\\n\")\nprint(\"context:\", context, sep=\"\\n\")\n";
  return py.str();
}

}  // namespace attnlab
