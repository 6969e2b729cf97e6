// codegen.cpp: see codegen.h. Each block of the program mirrors one stage of the engine and
// one step of torch_scenario.py, so that the printed numbers agree with the app's.
//
// [SECTION] Python literals
// [SECTION] The writer's context and shared pieces (seeds, heads, stored values)
// [SECTION] Header and input
// [SECTION] Projections, RoPE, the heads and NumPy's scores
// [SECTION] Masks, positions, ALiBi, soft-capping, sinks
// [SECTION] NumPy: logits, weights, context
// [SECTION] PyTorch: scores, logits, weights, context
// [SECTION] Notebook outputs; GeneratePyTorchCode, DiffPrograms, ProgramAsNotebook
#include "attnlab/python/codegen.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <type_traits>

#include "attnlab/base/text.h"
#include "attnlab/python/torch_print.h"
#include "python/codegen_parts.h"

namespace attnlab {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Python literals
// ---------------------------------------------------------------------------------------------

// A Python float literal: the shortest text that reads back as the same value, with a decimal
// point so that torch.tensor makes float32 rather than int64.
template <typename T>
std::string PyFloat(T v) {
  if (std::isnan(v)) return "float('nan')";
  if (std::isinf(v)) return v > 0 ? "float('inf')" : "float('-inf')";
  std::string s = std::is_same_v<T, float> ? ShortestFloat(static_cast<float>(v))
                                           : ShortestDouble(static_cast<double>(v));
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// Python's str.isprintable() is false for these non-ASCII code points, so repr escapes them:
// controls (Cc), spaces other than ' ' (Zs), line and paragraph separators (Zl, Zp), format
// characters (Cf, Unicode 14, as Python 3.11; the bidi controls among them), private use (Co)
// and the noncharacters. Other unassigned code points (Cn, which depend on the Python's Unicode
// version) are written as they are: the literal still reads back as the same string.
bool PyEscapes(char32_t cp) {
  struct Range {
    char32_t lo, hi;
  };
  static constexpr Range kFormat[] = {{0xAD, 0xAD},       {0x600, 0x605},     {0x61C, 0x61C},
                                      {0x6DD, 0x6DD},     {0x70F, 0x70F},     {0x890, 0x891},
                                      {0x8E2, 0x8E2},     {0x180E, 0x180E},   {0x200B, 0x200F},
                                      {0x202A, 0x202E},   {0x2060, 0x2064},   {0x2066, 0x206F},
                                      {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD},
                                      {0x110CD, 0x110CD}, {0x13430, 0x13438}, {0x1BCA0, 0x1BCA3},
                                      {0x1D173, 0x1D17A}, {0xE0001, 0xE0001}, {0xE0020, 0xE007F}};
  if (cp < 0xA0 || IsPythonSpace(cp)) return true;  // C0, DEL, C1 controls; Zs, Zl, Zp
  if ((cp >= 0xE000 && cp <= 0xF8FF) || cp >= 0xF0000) return true;            // private use planes
  if ((cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE) return true;  // nonchars
  for (const Range& r : kFormat)
    if (cp >= r.lo && cp <= r.hi) return true;
  return false;
}

// A Python string literal that evaluates to s, written as Python's repr(s) writes it: single
// quotes unless s holds a ' and no ", backslash escapes for \\, the quote, \t, \n, \r, and
// \xhh, \uhhhh or \Uhhhhhhhh for other non-printable characters (NUL, ESC, U+2028, bidi
// controls, ...). So every user string in the program is one line of data, never code.
std::string PyString(const std::string& s) {
  const std::vector<char32_t> cps = DecodeUtf8(s);
  bool single = false, dbl = false;
  for (char32_t c : cps) single |= c == '\'', dbl |= c == '"';
  const char quote = single && !dbl ? '"' : '\'';
  std::string out(1, quote);
  char buf[16];
  for (char32_t c : cps) {
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\t' || c == '\n' || c == '\r') {
      out += c == '\t' ? "\\t" : c == '\n' ? "\\n" : "\\r";
    } else if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else if (PyEscapes(c)) {
      std::snprintf(buf, sizeof buf,
                    c < 0x100     ? "\\x%02x"
                    : c < 0x10000 ? "\\u%04x"
                                  : "\\U%08x",
                    static_cast<unsigned>(c));
      out += buf;
    } else {
      out += EncodeUtf8(c);
    }
  }
  return out + quote;
}

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

// ---------------------------------------------------------------------------------------------
// [SECTION] The writer's context and shared pieces (seeds, heads, stored values)
// ---------------------------------------------------------------------------------------------

// What every step of the program needs. Every user string (title, text, tokens, special
// tokens) goes through PyString into a literal; comments hold only the app's own text.
struct Ctx {
  const Scenario& s;
  const Shape& sh;
  bool flat;  // B = 1 and one head: the batch and head dimensions are dropped
  std::ostringstream& py;
  bool numpy = false;  // input.generator "numpy": the program is NumPy, as the NumPy notebook
  // dtype float64 in PyTorch: ", dtype=torch.float64" after every tensor the program creates
  // (NumPy arrays are float64 already); "" otherwise.
  std::string dt = "";
  // dtype bfloat16 / float16: every stage computed in float32 from the stored
  // values of the stages before it, its result then stored (the program's stored(), StoreAs's
  // rule), so the variables are float32 tensors holding bfloat16 / float16 numbers.
  bool low = false;
};

// Low precision: `names` (one stage, or "Q, K, V") stored in the dtype after the float32
// operation that made them, as the engine's Store; nothing otherwise.
void WriteStore(const Ctx& c, const std::string& names, const char* comment = "") {
  if (!c.low) return;
  std::string rhs;
  std::istringstream in(names);
  for (std::string n; std::getline(in, n, ',');) {
    n.erase(0, n.find_first_not_of(' '));
    rhs += (rhs.empty() ? "stored(" : ", stored(") + n + ")";
  }
  c.py << names << " = " << rhs << comment << "\n";
}

// scaling.scale_at "q_and_k": the program scales q and k before the product (WriteQkScale).
bool QkScaled(const Ctx& c) { return c.s.scaling.scale_at == ScaleAt::kQAndK; }

// Low precision and the scenario has nn.Linear layers (projections or out_proj).
bool LowLinear(const Ctx& c) {
  return c.low && ((c.s.input.source != InputSource::kQkv &&
                    c.s.projections.init == ProjectionInit::kLinear) ||
                   c.s.projections.out_proj);
}

// codegen_parts::LinearCall for the program's dtype.
std::string LinearCall(const Ctx& c, const std::string& layer, const std::string& x) {
  return codegen_parts::LinearCall(c.low, layer, x);
}

// Low precision: `layer` (a new nn.Linear expression) with its float32 draws stored.
std::string StoredLayer(const Ctx& c, const std::string& layer) {
  return c.low ? "stored_layer(" + layer + ")" : layer;
}

// out_proj's nn.Linear: with its bias (PyTorch's default), or bias=False (out_proj.bias).
std::string OutProjLayer(const Ctx& c) {
  return std::string("torch.nn.Linear(d_out, d_out") +
         (c.s.projections.out_proj_bias ? "" : ", bias=False") + c.dt + ")";
}

// "(T, d)" or "(B, T, d)" as the arguments of a draw, and its shape comment.
std::string DrawShape(const Ctx& c, int64_t d) {
  return (c.flat ? "" : std::to_string(c.sh.B) + ", ") + std::to_string(c.sh.T) + ", " +
         std::to_string(d);
}

const char* Seeding(const Ctx& c) { return c.numpy ? "np.random.seed(" : "torch.manual_seed("; }

// Before the scenario's first draw when nothing seeded the generator (FirstUnseededDraw): the
// seed the app started from, pinned, since a fresh Python's generator starts elsewhere.
void WritePinnedSeed(const Ctx& c) {
  if (c.numpy)
    c.py << "# Unseeded: NumPy seeds its global generator from the operating system when it is\n"
            "# imported, so every run would differ; the app starts unseeded draws at seed 0.\n";
  else
    c.py << "# Unseeded: the app starts from PyTorch's default seed (libtorch's, which a new\n"
            "# torch.Generator() holds); Python's torch replaces it by a random seed when it is\n"
            "# imported, so without this line every run would differ.\n";
  c.py << Seeding(c) << DefaultSeed(c.s.input.generator) << ")\n";
}

// V has its own width d_v (qkv input): the program names it d_v and splits V by d_v // heads.
bool OwnValueWidth(const Ctx& c) { return c.sh.d_v != c.sh.d_out; }

// The width the context is reshaped to after the heads, and head h's share of V.
const char* ContextWidth(const Ctx& c) { return OwnValueWidth(c) ? "d_v" : "d_out"; }
const char* HeadValueWidth(const Ctx& c) { return OwnValueWidth(c) ? "d_v // heads" : "head_size"; }

// Which columns each head takes, as a comment above the split.
void WriteHeadsComment(const Ctx& c) {
  c.py << "# " << c.sh.H << " heads: head h uses columns h*head_size .. (h+1)*head_size - 1";
  if (OwnValueWidth(c)) c.py << " of Q and K,\n# and its own d_v // heads columns of V";
  if (GroupsKv(c.sh))
    c.py << " of Q;\n# K and V have kv_heads = " << c.sh.Kv()
         << " heads, each shared by heads // kv_heads = " << c.sh.H / c.sh.Kv()
         << " query heads in a row\n# (repeat_interleave, as LLMs-from-scratch's "
            "GroupedQueryAttention)";
  c.py << "\n";
}

// projections.head_split "view_no_transpose" with several heads: the program writes the bug.
bool BuggySplit(const Ctx& c) {
  return c.sh.H > 1 && c.s.projections.head_split == HeadSplit::kViewNoTranspose;
}

// `name` (Q, K or V) split into `heads` heads of `width` columns: (B, heads, T, width); with
// the bug (BuggySplit) the view without the transpose, (B, heads, T, width) read straight.
std::string Split(const Ctx& c, char name, const std::string& heads, const char* width) {
  if (BuggySplit(c))
    return std::string(1, name) + (c.numpy ? ".reshape(B, " : ".view(B, ") + heads + ", T, " +
           width + ")";
  return c.numpy
             ? std::string(1, name) + ".reshape(B, T, " + heads + ", " + width +
                   ").transpose(0, 2, 1, 3)"
             : std::string(1, name) + ".view(B, T, " + heads + ", " + width + ").transpose(1, 2)";
}

// With grouped K/V heads, each K/V head repeated for the query heads that share it
// (torch.repeat_interleave / np.repeat along the head axis: heads 0..g-1 read K/V head 0, and
// so on); "" without grouping.
std::string RepeatKv(const Ctx& c) {
  if (!GroupsKv(c.sh)) return "";
  return c.numpy ? ".repeat(heads // kv_heads, axis=1)"
                 : ".repeat_interleave(heads // kv_heads, dim=1)";
}

// The split of K or V (`name`, "K" or "V") into heads, then RepeatKv.
std::string HeadSplit(const Ctx& c, char name, const char* width) {
  return Split(c, name, GroupsKv(c.sh) ? "kv_heads" : "heads", width) + RepeatKv(c);
}

// "B, T, heads, head_size = ..." (and kv_heads when K/V heads are grouped).
void WriteHeadSizes(const Ctx& c) {
  c.py << "B, T, heads, head_size = " << c.sh.B << ", " << c.sh.T << ", " << c.sh.H << ", "
       << c.sh.dh << "\n";
  if (GroupsKv(c.sh)) c.py << "kv_heads = " << c.sh.Kv() << "\n";
}

// Low precision in NumPy: stored(x), x rounded to float32 (as the app rounds NumPy's float64
// draws) and then to the dtype, widened back to a float32 array. float16 with NumPy's own
// float16; bfloat16, which NumPy lacks, by rounding float32's bits to their top 16, to nearest,
// ties to even (StoreAs's rule: + 0x7FFF + the lowest kept bit, then the low 16 bits cleared;
// an overflow carries into the exponent and gives inf; nan stays nan).
void WriteNumpyStored(const Ctx& c) {
  if (!c.low) return;
  const char* name = Name(c.s.dtype);
  c.py << "# dtype " << name
       << ": every stage is computed in float32 from the stored values of the\n"
          "# stages before it, and its result is stored in "
       << name
       << " (rounded to nearest even).\n"
          "# stored() rounds and widens back: the arrays are float32 holding "
       << name << " numbers.\n";
  if (c.s.dtype == Dtype::kFloat16) {
    c.py
        << "\n\ndef stored(x):\n"
           "    return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float32)\n\n\n";
    return;
  }
  c.py << "# NumPy has no bfloat16: its 16 bits are float32's top 16, rounded to nearest, ties to\n"
          "# even (add 0x7FFF and the lowest kept bit, clear the low 16 bits).\n\n\n"
          "def stored(x):\n"
          "    x = np.ascontiguousarray(x, dtype=np.float32)\n"
          "    bits = x.view(np.uint32)\n"
          "    bits = (bits + np.uint32(0x7FFF) + ((bits >> 16) & 1)) & np.uint32(0xFFFF0000)\n"
          "    return np.where(np.isnan(x), x, bits.view(np.float32))\n\n\n";
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Header and input
// ---------------------------------------------------------------------------------------------

void WriteHeader(const Ctx& c) {
  c.py << "# Attention Lab\n";
  if (c.numpy) {
    if (c.s.dtype == Dtype::kFloat64)
      c.py << "# The NumPy program behind what the app shows, in float64 as the app computes it\n"
              "# (dtype float64) and as the NumPy notebook does. Run it with NumPy installed.\n";
    else if (c.low)
      c.py << "# The NumPy program behind what the app shows, each stage stored in "
           << Name(c.s.dtype) << "\n# as the app stores it. Run it with NumPy installed.\n";
    else
      c.py << "# The NumPy program behind what the app shows (the app computes in float32, this\n"
              "# program in float64 as the NumPy notebook does). Run it with NumPy installed.\n";
    c.py << "import numpy as np\nimport math\n\n";
    if (!c.s.title.empty()) c.py << "title = " << PyString(c.s.title) << "\n";
    c.py << "\n";
    WriteNumpyStored(c);
    return;
  }
  c.py << "# The PyTorch program behind what the app shows. Run it with PyTorch installed.\n";
  if (!c.dt.empty()) c.py << "# dtype float64: every tensor is made as torch.float64.\n";
  if (c.s.positions.kind == PositionKind::kSinusoidal || QkScaled(c)) c.py << "import math\n";
  if (c.s.input.source == InputSource::kText) c.py << "import re\n";
  c.py << "import torch\n\n";
  c.py << "torch.set_grad_enabled(False)  # no training here: plain tensors\n";
  if (!c.s.title.empty()) c.py << "title = " << PyString(c.s.title) << "\n";
  c.py << "\n";
  if (!c.low) return;
  const char* name = Name(c.s.dtype);
  c.py << "# dtype " << name
       << ": every stage is computed in float32 from the stored values of the\n"
          "# stages before it, and its result is stored in "
       << name
       << " (rounded to nearest even),\n"
          "# as PyTorch's GPU kernels accumulate in float32. stored() rounds and widens back: the\n"
          "# variables are float32 tensors holding "
       << name << " numbers.\n";
  c.py << "dtype = torch." << name << "\n\n\ndef stored(t):\n    return t.to(dtype).float()\n";
  if (LowLinear(c))
    c.py << "\n\ndef stored_layer(layer):  # nn.Linear's float32 draws stored in " << name
         << "\n"
            "    layer.weight.copy_(stored(layer.weight))\n"
            "    if layer.bias is not None:\n"
            "        layer.bias.copy_(stored(layer.bias))\n"
            "    return layer\n\n\n"
            "def linear(layer, x):  # x @ W stored, then + bias stored: two operations\n"
            "    y = stored(x @ layer.weight.T)\n"
            "    return y if layer.bias is None else stored(y + layer.bias)\n";
  c.py << "\n";
}

// name = torch.tensor(...) or np.array(...) of B matrices (one when B = 1).
void WriteStack(const Ctx& c, const std::string& name, const MatrixStack& stack) {
  const std::string fn = c.numpy ? "np.array(" : "torch.tensor(";
  if (stack.size() == 1) {
    c.py << name << " = " << fn
         << PyMatrix(stack[0], static_cast<int>(name.size() + 3 + fn.size() - 1)) << c.dt << ")\n";
    if (!c.flat)
      c.py << name << " = " << name << (c.numpy ? "[np.newaxis]" : ".unsqueeze(0)") << "  # (B, T, "
           << (name == "X"   ? "d_in"
               : name == "V" ? "d_v"
                             : "d_k")
           << ") with B = 1\n";
  } else {
    c.py << name << " = " << fn << "[\n";
    for (size_t b = 0; b < stack.size(); ++b)
      c.py << "    " << PyMatrix(stack[b], 4) << (b + 1 < stack.size() ? ",\n" : "\n");
    c.py << "]" << c.dt << ")\n";
  }
}

void WriteMatrixInput(const Ctx& c) {
  const InputSpec& in = c.s.input;
  c.py << "# Input embeddings, one row per token\n";
  if (!in.tokens.empty()) c.py << "tokens = " << PyList(in.tokens) << "\n";
  WriteStack(c, "X", in.values);
}

// Q, K and V without X or projections: given, or drawn in input.order right after the seed.
void WriteQkvInput(const Ctx& c) {
  const InputSpec& in = c.s.input;
  c.py << "# Query, key and value vectors directly: no embeddings, no projections\n";
  if (!in.tokens.empty()) c.py << "tokens = " << PyList(in.tokens) << "\n";
  if (in.QkvGiven()) {
    WriteStack(c, "Q", in.Q);
    WriteStack(c, "K", in.K);
    WriteStack(c, "V", in.V);
  } else {
    c.py << Seeding(c) << in.seed << ")\n";
    const char* fn = c.numpy ? "np.random.randn(" : "torch.randn(";
    for (Projection w : in.order) {
      const char letter = Name(w)[0];  // q, k, v
      const int64_t d = w == Projection::kValue ? c.sh.d_v : c.sh.d_out;
      c.py << letter << " = " << fn << DrawShape(c, d) << c.dt << ")\n";
    }
    c.py << "Q, K, V = q, k, v\n";
  }
  if (OwnValueWidth(c)) {
    c.py << "d_out = " << c.sh.d_out << "  # the width of Q and K (d_k)\n";
    c.py << "d_v = " << c.sh.d_v << "  # the width of V, and so of the context\n";
  } else {
    c.py << "d_out = " << c.sh.d_out << "  # the width of Q, K and V\n";
  }
}

void WriteTextInput(const Ctx& c) {
  const InputSpec& in = c.s.input;
  c.py << "# Tokenize, build the vocabulary (sorted, then the special tokens), embed\n";
  c.py << "text = " << PyString(in.text) << "\n";
  switch (in.tokenizer) {
    case TokenizerKind::kWords:
      c.py << "tokens = [t.strip() for t in " << kSplit << " if t.strip()]\n";
      break;
    case TokenizerKind::kWordsAndSpaces:
      c.py << "tokens = [t for t in " << kSplit << " if t != \"\"]  # spaces are tokens too\n";
      break;
    case TokenizerKind::kChars:
      c.py << "tokens = list(text)\n";
      break;
  }
  c.py << "vocab = sorted(set(tokens)) + " << PyList(in.special_tokens) << "\n";
  c.py << "token_ids = torch.tensor([vocab.index(t) for t in tokens])\n";
  c.py << "torch.manual_seed(" << in.seed << ")\n";
  c.py << "embedding = torch.nn.Embedding(len(vocab), " << in.d_in << c.dt << ")\n";
  c.py << "X = embedding(token_ids)" << (c.flat ? "" : ".unsqueeze(0)") << "  # "
       << (c.flat ? "(T, d_in)" : "(B, T, d_in)") << "\n";
}

void WriteInput(const Ctx& c) {
  switch (c.s.input.source) {
    case InputSource::kMatrix:
      WriteMatrixInput(c);
      break;
    case InputSource::kText:
      WriteTextInput(c);
      break;
    case InputSource::kRandn:
      c.py << Seeding(c) << c.s.input.seed << ")\n";
      c.py << "X = " << (c.numpy ? "np.random.randn(" : "torch.randn(") << DrawShape(c, c.sh.d_in)
           << c.dt << (c.flat ? ")  # (T, d_in)\n" : ")  # (B, T, d_in)\n");
      break;
    case InputSource::kQkv:
      WriteQkvInput(c);
      break;
  }
  WriteStore(c, c.s.input.source == InputSource::kQkv ? "Q, K, V" : "X",
             "  # drawn or written in float32, then stored");
  if (c.s.positions.kind == PositionKind::kSinusoidal) {
    // stage_rules.h SinusoidalEncoding, as the Annotated Transformer's PositionalEncoding
    const std::string np = c.numpy ? "np" : "torch";
    c.py
        << "\n# The original Transformer's positional encoding (Vaswani et al. 2017), added to X:\n"
           "# sin on even, cos on odd dimensions, frequencies 10000**(-2i/d_in)\n";
    c.py << "T, d_in = " << c.sh.T << ", " << c.sh.d_in << "\n";
    c.py << "pe = " << np << ".zeros(" << (c.numpy ? "(T, d_in))" : "T, d_in" + c.dt + ")") << "\n";
    c.py << "position = " << np << ".arange(T)[:, None]\n";
    c.py << "div_term = " << np << ".exp(" << np << ".arange(0, d_in, 2" << c.dt
         << ") * -(math.log(10000.0) / d_in))\n";
    c.py << "pe[:, 0::2] = " << np << ".sin(position * div_term)\n";
    c.py << "pe[:, 1::2] = " << np << ".cos(position * div_term[: d_in // 2])\n";
    WriteStore(c, "pe");
    c.py << "X = X + pe  # every token's embedding plus its position's encoding\n";
    WriteStore(c, "X");
  }
  c.py << "\n";
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Projections, RoPE, the heads and NumPy's scores
// ---------------------------------------------------------------------------------------------

// projections.per_head: the loops of ProjectionDraws, one module per head (LLMs-from-scratch
// ch03 MultiHeadAttentionWrapper), each head's layers or matrices side by side.
void WritePerHeadProjections(const Ctx& c) {
  const ProjectionSpec& p = c.s.projections;
  const std::string dh = std::to_string(c.sh.dh), names = "(\"" + std::string(Name(p.order[0])) +
                                                          "\", \"" + Name(p.order[1]) + "\", \"" +
                                                          Name(p.order[2]) + "\")";
  c.py << "# One module per head, as MultiHeadAttentionWrapper: head h draws its own query, key\n"
          "# and value (d_in x "
       << dh << " each) after head h - 1's; side by side they make W.\n";
  const bool linear = p.init == ProjectionInit::kLinear;
  c.py << "per_head = []\nfor h in range(" << c.sh.H << "):\n    drawn = {}\n"
       << "    for name in " << names << ":  # the draw order\n        drawn[name] = ";
  if (linear) {
    c.py << StoredLayer(c, "torch.nn.Linear(d_in, " + dh + ", bias=" + (p.bias ? "True" : "False") +
                               c.dt + ")")
         << "\n";
  } else {
    const bool rand = p.init == ProjectionInit::kTorchRand;
    c.py << (c.numpy ? (rand ? "np.random.rand(" : "np.random.randn(")
                     : (rand ? "torch.rand(" : "torch.randn("))
         << "d_in, " << dh << c.dt << ")\n";
  }
  c.py << "    per_head.append(drawn)\n";
  if (p.out_proj) c.py << "out_proj = " << StoredLayer(c, OutProjLayer(c)) << "\n";
  const char* cat = c.numpy ? "np.concatenate(" : "torch.cat(";
  const char* axis = c.numpy ? "axis=" : "dim=";
  for (const char* n : {"query", "key", "value"}) {
    const char upper = static_cast<char>(n[0] - 'a' + 'A');
    if (linear)
      c.py << upper << " = torch.cat([" << LinearCall(c, "drawn[\"" + std::string(n) + "\"]", "X")
           << " for drawn in per_head], dim=-1)\n";
    else
      c.py << "W_" << n << " = " << cat << "[drawn[\"" << n << "\"] for drawn in per_head], "
           << axis << "1)\n";
  }
  if (!linear) {
    WriteStore(c, "W_query, W_key, W_value");
    c.py << "Q = X @ W_query\nK = X @ W_key\nV = X @ W_value\n";
    WriteStore(c, "Q, K, V");
  }
  c.py << "\n";
}

void WriteProjections(const Ctx& c) {
  const ProjectionSpec& p = c.s.projections;
  if (c.s.input.source == InputSource::kQkv) return;
  c.py << "d_in, d_out = " << c.sh.d_in << ", " << c.sh.d_out << "\n";
  // Grouped K/V heads: W_key and W_value are d_in x d_kv (LLMs-from-scratch's GQA module's
  // nn.Linear(d_in, num_kv_groups * head_dim)).
  const bool grouped = GroupsKv(c.sh);
  if (grouped)
    c.py << "d_kv = " << c.sh.KWidth() << "  # kv_heads * head_size = " << c.sh.Kv() << " * "
         << c.sh.dh << ": K and V have " << c.sh.Kv() << " heads, Q has " << c.sh.H << "\n";
  const auto width = [&](Projection w) {
    return grouped && w != Projection::kQuery ? "d_kv" : "d_out";
  };
  const bool draws = ProjectionInitDraws(p.init);
  if (draws && p.seed) c.py << Seeding(c) << *p.seed << ")\n";
  if (FirstUnseededDraw(c.s) == UnseededDraw::kProjections) WritePinnedSeed(c);
  if (draws && p.per_head) return WritePerHeadProjections(c);
  switch (p.init) {
    case ProjectionInit::kIdentity:
      c.py << "# Simplified self-attention: no trainable weights, the embeddings themselves\n";
      c.py << "Q, K, V = X, X, X\n";
      break;
    case ProjectionInit::kTorchRand:
    case ProjectionInit::kRandn: {
      const bool rand = p.init == ProjectionInit::kTorchRand;
      const char* fn = c.numpy ? (rand ? "np.random.rand" : "np.random.randn")
                               : (rand ? "torch.rand" : "torch.randn");
      for (Projection w : p.order)
        c.py << "W_" << Name(w) << " = "
             << (c.numpy
                     ? std::string(fn) + "(d_in, " + width(w) + ")"
                     : "torch.nn.Parameter(" + std::string(fn) + "(d_in, " + width(w) + c.dt + "))")
             << "\n";
      WriteStore(c, "W_query, W_key, W_value", "  # drawn in float32, then stored");
      c.py << "Q = X @ W_query\nK = X @ W_key\nV = X @ W_value\n";
      WriteStore(c, "Q, K, V");
      break;
    }
    case ProjectionInit::kLinear:
      for (Projection w : p.order)
        c.py << Name(w) << " = "
             << StoredLayer(c, std::string("torch.nn.Linear(d_in, ") + width(w) +
                                   ", bias=" + (p.bias ? "True" : "False") + c.dt + ")")
             << "\n";
      if (p.out_proj) c.py << "out_proj = " << StoredLayer(c, OutProjLayer(c)) << "\n";
      c.py << "Q = " << LinearCall(c, "query", "X") << "\nK = " << LinearCall(c, "key", "X")
           << "\nV = " << LinearCall(c, "value", "X") << "\n";
      break;
    case ProjectionInit::kMatrix:
      for (int w = 0; w < 3; ++w) {
        const std::string name = std::string("W_") + Name(static_cast<Projection>(w));
        c.py << name << (c.numpy ? " = np.array(" : " = torch.tensor(")
             << PyMatrix(p.W[w], static_cast<int>(name.size()) + (c.numpy ? 13 : 16)) << c.dt
             << ")\n";
      }
      WriteStore(c, "W_query, W_key, W_value");
      c.py << "Q = X @ W_query\nK = X @ W_key\nV = X @ W_value\n";
      WriteStore(c, "Q, K, V");
      break;
  }
  c.py << "\n";
}

bool Rope(const Ctx& c) { return c.s.positions.kind == PositionKind::kRope; }

// positions "rope": the angles and a function rope(x) that rotates the last dimension of x
// (one head's head_size columns, positions along the dimension before it), each layout written
// as its reference implementation writes it (stage_rules.h RopeRotate is the engine's rule).
void WriteRope(const Ctx& c) {
  if (!Rope(c)) return;
  const PositionsSpec& p = c.s.positions;
  const bool halves = p.layout == RopeLayout::kSplitHalves;
  const std::string np = c.numpy ? "np" : "torch";
  c.py << "# RoPE: each head's q and k turn pair by pair, pair i by the angle position * "
          "theta**(-2i/head_size)\n";
  c.py << (halves ? "# split halves (Hugging Face, LLMs-from-scratch): dimensions i and i + "
                    "head_size/2 pair up\n"
                  : "# interleaved (Meta's Llama): dimensions 2i and 2i + 1 pair up, as one "
                    "complex number\n");
  if (p.sign < 0) c.py << "# sign -1: every angle turns the other way, as nanochat's rotation\n";
  c.py << "T, head_size, theta = " << c.sh.T << ", " << c.sh.dh << ", " << PyFloat(p.theta) << "\n";
  c.py << "inv_freq = 1.0 / (theta ** (" << np << ".arange(0, head_size, 2"
       << (c.dt.empty() ? "" : c.dt) << ") / head_size))  # (head_size/2,)\n";
  c.py << "angles = " << np << ".arange(T)[:, None] * inv_freq[None, :]"
       << (p.sign < 0 ? " * -1" : "") << "  # (T, head_size/2): position times frequency\n";
  if (halves) {
    c.py << "angles = "
         << (c.numpy ? "np.concatenate([angles, angles], axis=-1)"
                     : "torch.cat([angles, angles], dim=-1)")
         << "  # (T, head_size)\n";
    c.py << "cos, sin = " << np << ".cos(angles), " << np << ".sin(angles)\n\n";
    c.py << "def rope(x):\n"
            "    x1, x2 = x[..., : head_size // 2], x[..., head_size // 2 :]\n"
         << "    return " << (c.low ? "stored(" : "") << "x * cos + "
         << (c.numpy ? "np.concatenate((-x2, x1), axis=-1)" : "torch.cat((-x2, x1), dim=-1)")
         << " * sin" << (c.low ? ")" : "") << "  # rotate_half(x) = (-x2, x1)\n\n";
  } else if (c.numpy) {
    c.py << "cos, sin = np.cos(angles), np.sin(angles)\n\n";
    c.py << "def rope(x):\n"
            "    a, b = x[..., 0::2], x[..., 1::2]  # the pairs (2i, 2i + 1)\n"
            "    out = np.empty_like(x)\n"
            "    out[..., 0::2] = a * cos - b * sin  # (a + ib)(cos + i sin), real part\n"
            "    out[..., 1::2] = a * sin + b * cos  # imaginary part\n"
         << (c.low ? "    return stored(out)\n\n" : "    return out\n\n");
  } else {
    c.py << "freqs_cis = torch.polar(torch.ones_like(angles), angles)  # cos + i sin\n\n";
    c.py << "def rope(x):\n"
            "    pairs = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))  # (2i, 2i + 1) as "
            "a + ib\n"
            "    return "
         << (c.low ? "stored(torch.view_as_real(pairs * freqs_cis).flatten(-2))  # computed in "
                     "float32, stored\n\n"
                   : "torch.view_as_real(pairs * freqs_cis).flatten(-2)\n\n");
  }
}

// projections.qk_norm: a function qk_norm(x) that normalizes each head's head_size numbers of
// the last dimension (Q and K side by side, or q and k split), F.rms_norm written out (torch
// 1.13 has none), then applied: to Q and K here, or after the rotation by wrapping rope(x)
// ("after_rope" with RoPE, nanochat's order). stage_rules.h QkNormRows is the engine's rule.
void WriteQkNorm(const Ctx& c) {
  if (!c.s.projections.qk_norm) return;
  const QkNormSpec& q = *c.s.projections.qk_norm;
  const bool after = q.after_rope && Rope(c);
  c.py << "# QK-norm: RMSNorm of each head's q and k, x * rsqrt(mean(x**2) + eps)"
       << (q.weight.empty() ? "" : " * weight")
       << (after ? ", after the rotation (nanochat)"
                 : (Rope(c) ? ", before the rotation (Gemma)" : ""))
       << "\n";
  c.py << "qk_head_size, qk_eps = " << c.sh.dh << ", " << PyFloat(QkNormEps(q, c.s.dtype))
       << (q.eps ? "" : "  # torch.finfo(dtype).eps, F.rms_norm's default") << "\n";
  if (!q.weight.empty()) {
    c.py << "qk_weight = " << (c.numpy ? "np.array([" : "torch.tensor([");
    for (size_t i = 0; i < q.weight.size(); ++i)
      c.py << (i ? ", " : "") << PyFloat(static_cast<float>(q.weight[i]));
    c.py << "]" << c.dt << ")\n";
  }
  c.py << "\ndef qk_norm(x):\n";
  c.py << "    h = x.reshape(*x.shape[:-1], -1, qk_head_size)  # each head's numbers on the last "
          "axis\n";
  if (c.numpy)
    c.py << "    y = h * (1 / np.sqrt(np.mean(h * h, axis=-1, keepdims=True) + qk_eps))\n";
  else
    c.py << "    y = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + qk_eps)\n";
  if (!q.weight.empty()) c.py << "    y = y * qk_weight\n";
  if (c.low) c.py << "    y = stored(y)\n";
  if (q.scale != 1.0)
    c.py << "    y = " << (c.low ? "stored(" : "") << "y * " << PyFloat(q.scale)
         << (c.low ? ")" : "") << "  # q and k times the scale after the norm\n";
  c.py << "    return y.reshape(x.shape)\n\n";
  if (after)
    c.py << "rotate_only = rope\n\n\ndef rope(x):  # the rotation, then the norm\n"
            "    return qk_norm(rotate_only(x))\n\n";
  else
    c.py << "Q, K = qk_norm(Q), qk_norm(K)\n\n";
}

// The sizes, then q, k, v split into heads (B, heads, T, head_size), for both programs. With
// RoPE, q and k are rotated head by head (K's kv_heads heads before they are repeated for the
// query heads that share them) and Q_rot, K_rot put the heads side by side as the app shows them.
void WriteHeadSplits(const Ctx& c) {
  WriteHeadSizes(c);
  const std::string kv = GroupsKv(c.sh) ? "kv_heads" : "heads";
  const char* back = c.numpy ? ".transpose(0, 2, 1, 3)" : ".transpose(1, 2)";
  if (BuggySplit(c)) {  // bug-view-no-transpose: the wrong lines, then as the app shows them
    c.py << "q = " << Split(c, 'Q', "heads", "head_size")
         << "  # no transpose: head h's rows are pieces of other tokens' rows\n";
    c.py << "k = " << Split(c, 'K', kv, "head_size") << "\n";
    c.py << "v = " << Split(c, 'V', kv, "head_size") << "\n";
    c.py << "Q, K, V = (m" << back
         << ".reshape(B, T, -1) for m in (q, k, v))  # what each head reads, side by side, as the "
            "app shows them\n";
    if (Rope(c)) {
      c.py << "q, k = rope(q), rope(k)\n";
      c.py << "Q_rot = q" << back << ".reshape(B, T, " << c.sh.d_out << ")\n";
      c.py << "K_rot = k" << back << ".reshape(B, T, " << c.sh.KWidth() << ")\n";
    }
    if (GroupsKv(c.sh)) c.py << "k, v = k" << RepeatKv(c) << ", v" << RepeatKv(c) << "\n";
    return;
  }
  if (Rope(c)) {
    c.py << "q = rope(" << Split(c, 'Q', "heads", "head_size") << ")  # (B, heads, T, head_size)\n";
    c.py << "k = rope(" << Split(c, 'K', kv, "head_size") << ")\n";
    c.py << "Q_rot = q" << back << ".reshape(B, T, " << c.sh.d_out
         << ")  # the heads side by side, as the app shows them\n";
    c.py << "K_rot = k" << back << ".reshape(B, T, " << c.sh.KWidth() << ")\n";
    if (GroupsKv(c.sh)) c.py << "k = k" << RepeatKv(c) << "\n";
  } else {
    c.py << "q = " << Split(c, 'Q', "heads", "head_size") << "  # (B, heads, T, head_size)\n";
    c.py << "k = " << HeadSplit(c, 'K', "head_size") << "\n";
  }
  c.py << "v = " << HeadSplit(c, 'V', HeadValueWidth(c)) << "\n";
}

// scaling.scale_at "q_and_k": `d_k` (its line written here, before the product), the scale
// and its square root, and the operands q and k times it, as PyTorch's math path of
// scaled_dot_product_attention makes them (QkScaleOf); `q` and `k` become the scaled names.
void WriteQkScale(const Ctx& c, const std::string& d_k, std::string& q, std::string& k) {
  const ScalingSpec& sc = c.s.scaling;
  c.py << "d_k = " << d_k << "\n";
  c.py << "# PyTorch's scaled_dot_product_attention (its math path, aten's\n"
          "# _scaled_dot_product_attention_math) scales q and k, each by sqrt(scale), before the\n"
          "# product, where the notebooks scale the product: the same logits up to rounding\n";
  c.py << "scale = " << (sc.multiplier == 1.0 ? "1" : PyFloat(sc.multiplier));
  if (sc.sqrt_dk) c.py << " / math.sqrt(d_k)";
  c.py << "\nf = math.sqrt(abs(scale))\n";
  const QkScale f = QkScaleOf(sc, c.sh.dh);
  c.py << q << "_s = " << q << " * " << (f.q < 0 ? "-f  # a negative scale goes to q" : "f")
       << "\n";
  c.py << k << "_s = " << k << " * f\n";
  q += "_s", k += "_s";
  WriteStore(c, q + ", " + k);
}

void WriteNumpyScores(const Ctx& c) {
  std::string q = c.sh.H > 1 ? "q" : Rope(c) ? "Q_rot" : "Q";
  std::string k = c.sh.H > 1 ? "k" : Rope(c) ? "K_rot" : "K";
  const std::string d_k = c.sh.H > 1 ? "head_size" : "K.shape[-1]";
  if (c.sh.H > 1) {
    WriteHeadsComment(c);
    WriteHeadSplits(c);
  } else if (Rope(c)) {
    c.py << "Q_rot, K_rot = rope(Q), rope(K)\n";
  }
  if (QkScaled(c)) WriteQkScale(c, d_k, q, k);
  if (c.sh.H > 1)
    c.py << "scores = np.matmul(" << q << ", " << k
         << ".transpose(0, 1, 3, 2))  # (B, heads, T, T)\n";
  else
    c.py << "scores = np.matmul(" << q << ", " << k
         << (c.flat ? ".T)  # (T, T)" : ".transpose(0, 2, 1))  # (B, T, T)") << "\n";
  if (!QkScaled(c)) c.py << "d_k = " << d_k << "\n";
  WriteStore(c, "scores");
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Masks, positions, ALiBi, soft-capping, sinks
// ---------------------------------------------------------------------------------------------

// The 0/1 rows of a custom mask as a nested list literal, rows after the first indented by
// `indent` spaces; `suffix` follows every number ("." for NumPy floats).
std::string MaskRows(const MaskMatrix& allowed, int indent, const char* suffix) {
  std::string out = "[";
  for (Eigen::Index r = 0; r < allowed.rows(); ++r) {
    out += r ? ",\n" + std::string(static_cast<size_t>(indent), ' ') + "[" : "[";
    for (Eigen::Index col = 0; col < allowed.cols(); ++col)
      out += (col ? ", " : "") + std::to_string(int(allowed(r, col))) + suffix;
    out += "]";
  }
  return out + "]";
}

// Whether the program builds the mask from the positions i (rows) and j (columns): every kind
// but none, causal and custom, as attention-gym's mask_mod functions.
bool MaskFromPositions(MaskKind kind) {
  return kind != MaskKind::kNone && kind != MaskKind::kCausal && kind != MaskKind::kCustom;
}

// A boolean expression of i and j that is true where `m` allows query i to see key j (the
// same cells as AllowedCells); the tensors it needs (document ids, custom masks) are written
// first as doc_ids / part_N.
std::string AllowedExpr(const Ctx& c, const MaskSpec& m, int& parts) {
  switch (m.kind) {
    case MaskKind::kNone:
      return "(j >= 0)";
    case MaskKind::kCausal:
      return "(j <= i)";
    case MaskKind::kSlidingWindow:
      return "((j <= i) & (i - j < " + std::to_string(m.window) + "))";
    case MaskKind::kPrefixLm:
      return "((j <= i) | (j < " + std::to_string(m.prefix) + "))";
    case MaskKind::kDocument: {
      const std::string name = "doc_ids" + (parts ? "_" + std::to_string(parts) : std::string());
      ++parts;
      c.py << name << " = " << (c.numpy ? "np.array([" : "torch.tensor([");
      for (size_t k = 0; k < m.doc_ids.size(); ++k) c.py << (k ? ", " : "") << m.doc_ids[k];
      c.py << "])  # the document of each token\n";
      return "((j <= i) & (" + name + "[:, None] == " + name + "[None, :]))";
    }
    case MaskKind::kCustom: {
      const std::string name = "part_" + std::to_string(parts++);
      const std::string head = name + " = " + (c.numpy ? "np.array(" : "torch.tensor(");
      c.py << head << MaskRows(m.allowed, static_cast<int>(head.size()) + 1, "") << ")\n";
      return "(" + name + " == 1)";
    }
    case MaskKind::kAnd:
    case MaskKind::kOr: {
      std::string out = "(";
      for (size_t k = 0; k < m.of.size(); ++k)
        out +=
            (k ? (m.kind == MaskKind::kAnd ? " & " : " | ") : "") + AllowedExpr(c, m.of[k], parts);
      return out + ")";
    }
  }
  return "";
}

// i (query positions, a column) and j (key positions, a row), for masks and ALiBi.
void WritePositions(const Ctx& c) {
  const std::string T = std::to_string(c.sh.T);
  if (c.numpy)
    c.py << "i = np.arange(" << T << ")[:, None]  # query positions (rows)\n"
         << "j = np.arange(" << T << ")[None, :]  # key positions (columns)\n";
  else
    c.py << "i = torch.arange(" << T << ").unsqueeze(1)  # query positions (rows)\n"
         << "j = torch.arange(" << T << ").unsqueeze(0)  # key positions (columns)\n";
}

// mask = 0/1 of `s.mask` built from the positions (MaskFromPositions kinds).
void WritePositionMask(const Ctx& c) {
  WritePositions(c);
  int parts = 0;
  const std::string expr = AllowedExpr(c, c.s.mask, parts);
  c.py << "allowed = " << expr << "  # " << MaskName(c.s.mask) << ": " << MaskLegend(c.s.mask)
       << "\n";
  if (c.numpy)
    c.py << "mask = allowed.astype(float)\n";
  else
    c.py << "mask = allowed." << (c.dt.empty() ? "float()" : "double()") << "\n";
}

// masked_rows "zero": rows with no allowed key get 0 weights instead of softmax's nan.
void WriteMaskedRows(const Ctx& c) {
  if (c.s.mask.kind == MaskKind::kNone || c.s.mask.masked_rows != MaskedRows::kZero) return;
  if (c.numpy)  // the mask is 0 / -inf when added to the logits, else 0 / 1
    c.py << "weights = np.where((mask == " << (MaskAppliesToLogits(c.s.normalization) ? "0" : "1")
         << ").any(axis=-1, keepdims=True), weights, 0.0)"
            "  # masked_rows \"zero\": a row with no allowed key gives 0 weights\n";
  else
    c.py << "weights = weights.masked_fill(mask.sum(dim=-1, keepdim=True) == 0, 0.0)"
            "  # masked_rows \"zero\": a row with no allowed key gives 0, as PyTorch >= 2.5's "
            "SDPA\n";
}

// The NumPy programs' stable softmax, as the notebook defines it.
void WriteNumpySoftmaxDef(const Ctx& c) {
  c.py << "\n\ndef softmax(x):  # stable: the row's largest value is subtracted first\n"
          "    e = np.exp(x - x.max(axis=-1, keepdims=True))\n"
          "    return e / e.sum(axis=-1, keepdims=True)\n\n\n";
}

// positions "alibi": ALiBi's -(slope_h * (i - j)) (|i - j| when symmetric) added to `from`,
// head h's slope from AlibiSlopesOf (the paper's get_slopes, attention-gym's or given), before
// the cap and the mask.
void WriteAlibi(const Ctx& c, const std::string& from) {
  if (c.s.positions.kind != PositionKind::kAlibi) return;
  const PositionsSpec& p = c.s.positions;
  const std::vector<double> slopes = AlibiSlopesOf(p, c.sh.H);
  c.py << "# ALiBi (Press et al.): a penalty growing with the distance "
       << (p.symmetric ? "|i - j|" : "i - j") << ", one slope per head\n";
  c.py << "slopes = " << (c.numpy ? "np.array([" : "torch.tensor([");
  for (size_t h = 0; h < slopes.size(); ++h) c.py << (h ? ", " : "") << PyFloat(slopes[h]);
  const bool power_of_2 = (c.sh.H & (c.sh.H - 1)) == 0;
  c.py << "]" << c.dt << ")  # "
       << (p.slope_rule == AlibiSlopeRule::kGiven ? "the scenario's slopes"
           : p.slope_rule == AlibiSlopeRule::kAttentionGym
               ? "attention-gym's 2^(-8(h+1)/H), h = 0..H-1"
           : power_of_2 ? "2^(-8h/H), h = 1..H"
                        : "the paper's get_slopes: H is not a power of two")
       << "\n";
  WritePositions(c);
  const bool heads = c.sh.H > 1;
  const std::string distance =
      p.symmetric ? (c.numpy ? "np.abs(i - j)" : "(i - j).abs()") : "(i - j)";
  c.py << "alibi = -(slopes"
       << (heads ? (c.numpy ? ".reshape(heads, 1, 1)" : ".view(heads, 1, 1)") : "[0]") << " * "
       << distance << ")  # " << (heads ? "(heads, T, T)" : "(T, T)") << "\n";
  c.py << "logits = " << from << " + alibi\n";
}

// scaling.softcap: logits = c * tanh(`from` / c), before the mask (Gemma 2).
void WriteSoftcap(const Ctx& c, const std::string& from) {
  if (!c.s.scaling.softcap) return;
  const std::string cap = PyFloat(*c.s.scaling.softcap);
  c.py << "logits = " << cap << " * " << (c.numpy ? "np" : "torch") << ".tanh(" << from << " / "
       << cap << ")  # soft-capping (Gemma 2): every logit within (-" << cap << ", " << cap
       << ")\n";
}

// scaling.sink_form "sigmoid" (sink_logit written): the sink applied after attention as
// torchtitan does (PR #2211), each row's softmax times sigmoid(lse - sink_logit).
void WriteSinkSigmoid(const Ctx& c) {
  if (c.numpy) {
    WriteNumpySoftmaxDef(c);
    c.py << "m = logits.max(axis=-1, keepdims=True)\n"
            "m = np.where(np.isinf(m), 0.0, m)  # as torch.logsumexp: a row of -inf gives -inf\n"
            "with np.errstate(divide=\"ignore\"):  # log(0) = -inf: a row that sees no key\n"
            "    lse = np.log(np.exp(logits - m).sum(axis=-1, keepdims=True)) + m\n"
            "gate = 1 / (1 + np.exp(-(lse - sink_logit)))  # sigmoid\n"
            "weights = softmax(logits) * gate  # a row that sees no key: nan * 0 = nan\n";
  } else {
    c.py << "lse = torch.logsumexp(logits, dim=-1, keepdim=True)  # -inf for a row that sees no "
            "key\n"
            "gate = torch.sigmoid(lse - sink_logit)\n"
            "weights = torch.softmax(logits, dim=-1) * gate  # a row that sees no key: nan * 0 = "
            "nan\n";
  }
  c.py << "sink = 1 - gate  # what the sink took of each row\n";
}

// scaling.sink: the softmax over each row's keys and one more column holding head h's sink
// logit, the sink's column then dropped before weights @ V, as gpt-oss's reference sdpa does;
// scaling.sink_form "sigmoid": WriteSinkSigmoid.
void WriteSinkSoftmax(const Ctx& c) {
  const std::vector<double>& sink = c.s.scaling.sink;
  c.py << (c.s.scaling.sink_form == SinkForm::kSigmoid
               ? "# gpt-oss's attention sink applied after attention (torchtitan's FlexAttention "
                 "rescale): sigmoid(lse - sink_logit)\n"
               : "# gpt-oss's attention sink: one more column with a fixed logit in every row's "
                 "softmax\n");
  if (sink.size() == 1) {
    c.py << "sink_logit = " << (c.numpy ? "np" : "torch") << ".full((*logits.shape[:-1], 1), "
         << PyFloat(sink[0]) << c.dt << ")\n";
  } else {
    c.py << "sink_logit = " << (c.numpy ? "np.array([" : "torch.tensor([");
    for (size_t h = 0; h < sink.size(); ++h) c.py << (h ? ", " : "") << PyFloat(sink[h]);
    c.py << "]" << c.dt << ")";
    if (c.numpy)
      c.py << ".reshape(1, heads, 1, 1) * np.ones((B, heads, T, 1))  # one logit per head\n";
    else
      c.py << ".view(1, heads, 1, 1).expand(B, heads, T, 1)  # one logit per head\n";
  }
  if (c.s.scaling.sink_form == SinkForm::kSigmoid) return WriteSinkSigmoid(c);
  if (c.numpy) {
    WriteNumpySoftmaxDef(c);
    c.py << "full = softmax(np.concatenate([logits, sink_logit], axis=-1))  # T keys + the sink\n";
  } else {
    c.py << "full = torch.softmax(torch.cat([logits, sink_logit], dim=-1), dim=-1)  # T keys + "
            "the sink\n";
  }
  c.py << "weights = full[..., :-1]  # the sink's column dropped: rows sum to 1 minus its share\n"
          "sink = full[..., -1:]  # what the sink took of each row\n";
}

// ---------------------------------------------------------------------------------------------
// [SECTION] NumPy: logits, weights, context
// ---------------------------------------------------------------------------------------------

// The NumPy notebook's scaling and mask: / math.sqrt(d_k), then a 0 / -inf mask added.
void WriteNumpyLogitRule(const Ctx& c) {
  const Scenario& s = c.s;
  c.py << "logits = scores";
  if (QkScaled(c)) c.py << "  # already scaled: q and k were";
  if (s.scaling.multiplier != 1.0 && !QkScaled(c))
    c.py << " * " << PyFloat(s.scaling.multiplier) << "  # the multiplier (1/temperature)\n"
         << "logits = logits";
  if (s.scaling.sqrt_dk && !QkScaled(c))
    c.py << " / math.sqrt(d_k)  # keeps the variance of q.k near 1";
  c.py << "\n";
  WriteAlibi(c, "logits");
  WriteSoftcap(c, "logits");
  if (s.mask.kind == MaskKind::kNone) return;
  if (s.mask.kind == MaskKind::kCausal) {
    c.py << "mask = np.tril(np.ones((" << c.sh.T << ", " << c.sh.T
         << ")))  # causal: no peeking ahead\n";
  } else if (MaskFromPositions(s.mask.kind)) {
    WritePositionMask(c);
  } else {
    c.py << "mask = np.array(" << MaskRows(s.mask.allowed, 17, ".") << ")\n";
  }
  if (!MaskAppliesToLogits(s.normalization)) return;  // the weights are masked instead
  c.py << "mask[mask == 0] = -np.inf\nmask[mask == 1] = 0\n";
  c.py << "logits = logits + mask  # -inf where attention is not allowed\n";
}

// The NumPy logits, then (low precision) stored once for the whole rule.
void WriteNumpyLogits(const Ctx& c) {
  WriteNumpyLogitRule(c);
  WriteStore(c, "logits", "  # the whole rule (scaling, mask) in float32, stored once");
}

void WriteNumpyWeights(const Ctx& c) {
  const bool has_mask = c.s.mask.kind != MaskKind::kNone;
  if (!c.s.scaling.sink.empty()) return WriteSinkSoftmax(c);
  switch (c.s.normalization) {
    case Normalization::kSoftmax:
      WriteNumpySoftmaxDef(c);
      c.py << "weights = softmax(logits)\n";
      break;
    case Normalization::kSoftmaxNaive:
      c.py << "weights = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)"
              "  # overflows for large logits\n";
      break;
    case Normalization::kSum:
      c.py << (has_mask ? "z = np.where(mask == 0, logits, 0.0)\n" : "z = logits\n");
      c.py << "weights = z / z.sum(axis=-1, keepdims=True)  # can go negative\n";
      break;
    case Normalization::kMean:
      c.py << (has_mask ? "allowed = (mask == 0).astype(float)\n"
                        : "allowed = np.ones((" + std::to_string(c.sh.T) + ", " +
                              std::to_string(c.sh.T) + "))\n");
      c.py << "weights = np.broadcast_to(allowed / allowed.sum(axis=-1, keepdims=True), "
              "scores.shape)  # averaging: every allowed key alike\n";
      break;
    case Normalization::kSoftmaxThenMask:
    case Normalization::kSoftmaxThenMaskNoRenorm:
      if (!has_mask) c.py << "mask = np.ones((" << c.sh.T << ", " << c.sh.T << "))\n";
      WriteNumpySoftmaxDef(c);
      c.py << "weights = softmax(logits)  # over every key: the mask comes after\n";
      if (c.s.normalization == Normalization::kSoftmaxThenMaskNoRenorm)
        c.py << "weights = weights * mask  # 0 where not allowed, and no renormalisation\n";
      else
        c.py << "masked = weights * mask  # 0 where attention is not allowed\n"
                "weights = masked / masked.sum(axis=-1, keepdims=True)  # rows sum to 1 again\n";
      break;
    case Normalization::kSoftmaxDimQuery:
      c.py << "weights = np.exp(logits - logits.max(axis=-2, keepdims=True))\n"
              "weights = weights / weights.sum(axis=-2, keepdims=True)  # over the queries "
              "(down each column)\n";
      break;
  }
}

void WriteNumpyContext(const Ctx& c) {
  if (BuggySplit(c))
    c.py << "context = np.matmul(weights, v).reshape(B, T, " << ContextWidth(c)
         << ")  # no transpose back either\n";
  else if (c.sh.H > 1)
    c.py << "context = np.matmul(weights, v).transpose(0, 2, 1, 3).reshape(B, T, "
         << ContextWidth(c) << ")\n";
  else
    c.py << "context = np.matmul(weights, V)\n";
  WriteStore(c, "context");
  c.py << "var_K = K.var()  # NumPy's var: ddof = 0 (divides by n), as the app's var_K\n";
  c.py
      << "\nprint(\"weights:\", weights, sep=\"\\n\")\nprint(\"context:\", context, sep=\"\\n\")\n";
}

// ---------------------------------------------------------------------------------------------
// [SECTION] PyTorch: scores, logits, weights, context
// ---------------------------------------------------------------------------------------------

void WriteScores(const Ctx& c) {
  std::string q = c.sh.H > 1 ? "q" : Rope(c) ? "Q_rot" : "Q";
  std::string k = c.sh.H > 1 ? "k" : Rope(c) ? "K_rot" : "K";
  const std::string d_k = c.sh.H > 1 ? "head_size" : "K.shape[-1]";
  if (c.sh.H > 1) {
    WriteHeadsComment(c);
    WriteHeadSplits(c);
  } else if (Rope(c)) {
    c.py << "Q_rot, K_rot = rope(Q), rope(K)\n";
  }
  if (QkScaled(c)) WriteQkScale(c, d_k, q, k);
  if (c.sh.H > 1)
    c.py << "scores = " << q << " @ " << k << ".transpose(-2, -1)  # (B, heads, T, T)\n";
  else
    c.py << "scores = " << q << " @ " << k
         << (c.flat ? ".T  # (T, T)" : ".transpose(-2, -1)  # (B, T, T)") << "\n";
  if (!QkScaled(c)) c.py << "d_k = " << d_k << "\n";
  WriteStore(c, "scores");
}

// The multiplier as the program writes it, with its comment: Karpathy's scales
// `head_size**-0.5` and `C**-0.5` (C = d_in, the embedding width: bug-scale-d-model) when the
// multiplier is exactly that power (Python's int ** float is C's pow, as std::pow here),
// else the number, a temperature's inverse.
std::string MultiplierText(const Ctx& c) {
  const double m = c.s.scaling.multiplier;
  if (!c.s.scaling.sqrt_dk && c.sh.dh > 0 && m == std::pow(static_cast<double>(c.sh.dh), -0.5))
    return std::to_string(c.sh.dh) + "**-0.5  # 1 / sqrt(head_size): q.k keeps a variance near 1";
  if (!c.s.scaling.sqrt_dk && c.sh.d_in > 0 && m == std::pow(static_cast<double>(c.sh.d_in), -0.5))
    return std::to_string(c.sh.d_in) + "**-0.5  # 1 / sqrt(C), C = d_in the embedding width";
  return PyFloat(m) + "  # the multiplier (1/temperature)";
}

// The multiplier (1/temperature), 1/sqrt(d_k) and the mask, as the program applies them.
void WriteLogits(const Ctx& c) {
  const Scenario& s = c.s;
  std::string logits = "scores";
  if (s.scaling.multiplier != 1.0 && !QkScaled(c)) {
    c.py << "logits = scores * " << MultiplierText(c) << "\n";
    logits = "logits";
  }
  if (s.scaling.sqrt_dk && !QkScaled(c)) {
    c.py << "logits = " << logits << " / d_k**0.5  # keeps the variance of q.k near 1\n";
    logits = "logits";
  }
  if (s.positions.kind == PositionKind::kAlibi) {
    WriteAlibi(c, logits);
    logits = "logits";
  }
  if (s.scaling.softcap) {
    WriteSoftcap(c, logits);
    logits = "logits";
  }
  if (s.mask.kind == MaskKind::kCausal) {
    c.py << "mask = torch.tril(torch.ones(" << c.sh.T << ", " << c.sh.T << c.dt
         << "))  # causal: no peeking ahead\n";
  } else if (s.mask.kind == MaskKind::kCustom) {
    c.py << "mask = torch.tensor(" << MaskRows(s.mask.allowed, 21, "") << c.dt << ")\n";
  } else if (MaskFromPositions(s.mask.kind)) {
    WritePositionMask(c);
  }
  if (s.mask.kind != MaskKind::kNone && MaskAppliesToLogits(s.normalization))
    c.py << "logits = " << logits << ".masked_fill(mask == 0, "
         << (s.mask.fill == MaskFill::kNegInf ? "float('-inf')"
             : s.mask.fill == MaskFill::kFinfoMin
                 ? (c.low ? "torch.finfo(dtype).min" : "torch.finfo(logits.dtype).min")
                 : Name(s.mask.fill))
         << ")\n";
  else if (logits != "logits")
    c.py << "logits = scores  # "
         << (QkScaled(c) ? "already scaled (q and k were), " : "no scaling, ")
         << (s.mask.kind == MaskKind::kNone ? "no mask" : "the mask comes after the softmax")
         << "\n";
  WriteStore(c, "logits", "  # the whole rule (scaling, mask) in float32, stored once");
}

void WriteWeights(const Ctx& c) {
  const bool has_mask = c.s.mask.kind != MaskKind::kNone;
  if (!c.s.scaling.sink.empty()) return WriteSinkSoftmax(c);
  switch (c.s.normalization) {
    case Normalization::kSoftmax:
      c.py << "weights = torch.softmax(logits, dim=-1)\n";
      break;
    case Normalization::kSoftmaxNaive:
      c.py << "weights = torch.exp(logits) / torch.exp(logits).sum(dim=-1, keepdim=True)"
              "  # overflows for large logits\n";
      break;
    case Normalization::kSum:
      if (has_mask)
        c.py << "z = logits.masked_fill(mask == 0, 0.0)\n";
      else
        c.py << "z = logits\n";
      c.py << "weights = z / z.sum(dim=-1, keepdim=True)  # can go negative\n";
      break;
    case Normalization::kMean:
      if (!has_mask) c.py << "mask = torch.ones(" << c.sh.T << ", " << c.sh.T << c.dt << ")\n";
      c.py << "weights = (mask / mask.sum(dim=-1, keepdim=True)).expand_as(scores)"
              "  # averaging: every allowed key alike\n";
      break;
    case Normalization::kSoftmaxThenMask:
    case Normalization::kSoftmaxThenMaskNoRenorm:
      if (!has_mask) c.py << "mask = torch.ones(" << c.sh.T << ", " << c.sh.T << c.dt << ")\n";
      c.py << "weights = torch.softmax(logits, dim=-1)  # over every key: the mask comes after\n";
      if (c.s.normalization == Normalization::kSoftmaxThenMaskNoRenorm)
        c.py << "weights = weights * mask  # 0 where not allowed, and no renormalisation\n";
      else
        c.py << "masked = weights * mask  # 0 where attention is not allowed\n"
                "weights = masked / masked.sum(dim=-1, keepdim=True)  # rows sum to 1 again\n";
      break;
    case Normalization::kSoftmaxDimQuery:
      c.py << "weights = torch.softmax(logits, dim=-2)  # over the queries (down each column)\n";
      break;
  }
}

// Low precision: the weights (and the sink's share) stored, unless scaling.softmax_dtype
// "float32" keeps them in float32 (the upcast softmax, the usual fix).
void WriteWeightsStore(const Ctx& c) {
  if (!c.low) return;
  if (c.s.scaling.softmax_dtype == SoftmaxDtype::kFloat32) {
    c.py << "# softmax_dtype float32: the weights stay float32 (the upcast softmax), not stored\n";
    return;
  }
  WriteStore(c, c.s.scaling.sink.empty() ? "weights" : "weights, sink");
}

void WriteContext(const Ctx& c) {
  std::string used = "weights";
  if (c.s.dropout.p > 0) {
    if (c.s.dropout.seed) c.py << "torch.manual_seed(" << *c.s.dropout.seed << ")\n";
    if (FirstUnseededDraw(c.s) == UnseededDraw::kDropout) WritePinnedSeed(c);
    c.py << "dropout = torch.nn.Dropout(" << PyFloat(c.s.dropout.p) << ")  # training mode\n";
    if (c.s.projections.per_head && c.sh.H > 1)  // each head's module drops its own weights
      c.py << "weights_dropped = torch.stack([dropout(weights[:, h].contiguous()) "
              "for h in range(heads)], dim=1)\n";
    else
      c.py << "weights_dropped = dropout(weights)\n";
    if (c.s.scaling.softmax_dtype != SoftmaxDtype::kFloat32) WriteStore(c, "weights_dropped");
    used = "weights_dropped";
  }
  if (BuggySplit(c))
    c.py << "context = (" << used << " @ v).view(B, T, " << ContextWidth(c)
         << ")  # no transpose back either\n";
  else if (c.sh.H > 1)
    c.py << "context = (" << used << " @ v).transpose(1, 2).contiguous().view(B, T, "
         << ContextWidth(c) << ")\n";
  else
    c.py << "context = " << used << " @ V\n";
  WriteStore(c, "context");
  if (c.s.projections.out_proj)
    c.py << "context = " << LinearCall(c, "out_proj", "context") << "\n";
  c.py << "var_K = K.var()  # unbiased (divides by n - 1), as the app's var_K\n";
  if (c.low) {  // printed as the stored tensors they are
    const bool f32 = c.s.scaling.softmax_dtype == SoftmaxDtype::kFloat32;
    c.py << "\nprint(\"weights:\", weights" << (f32 ? "" : ".to(dtype)")
         << ", sep=\"\\n\")\nprint(\"context:\", context.to(dtype), sep=\"\\n\")\n";
    return;
  }
  c.py
      << "\nprint(\"weights:\", weights, sep=\"\\n\")\nprint(\"context:\", context, sep=\"\\n\")\n";
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Notebook outputs; GeneratePyTorchCode, DiffPrograms, ProgramAsNotebook
// ---------------------------------------------------------------------------------------------

// nbformat 4 display_data outputs: text/plain as a list of lines (each but the last with its
// "\n"), image/png in base64.
nlohmann::json OutputsJson(const std::vector<NotebookOutput>& outputs) {
  using nlohmann::json;
  json list = json::array();
  for (const NotebookOutput& o : outputs) {
    json lines = json::array();
    std::istringstream in(o.text);
    for (std::string line; std::getline(in, line);) lines.push_back(line + "\n");
    if (!lines.empty()) {
      std::string last = lines.back();
      last.pop_back();
      lines.back() = last;
    }
    json data = {{"text/plain", lines}};
    if (!o.png.empty()) data["image/png"] = Base64Encode(o.png);
    list.push_back({{"output_type", "display_data"}, {"data", data}, {"metadata", json::object()}});
  }
  return list;
}

}  // namespace

std::string GeneratePyTorchCode(const Scenario& s) {
  const Shape sh = ValidateScenario(s);
  std::ostringstream py;
  const bool numpy = s.input.generator == Generator::kNumpy;
  // bfloat16 / float16: the products are written in float32 on the stored operands and each
  // stage's result stored (stored()), not as torch.bfloat16 tensors: torch 1.13's CPU bfloat16
  // matmul rounds its partial sums, and it has no CPU float16 matmul; NumPy has no bfloat16.
  const Ctx c{s,
              sh,
              sh.B == 1 && sh.H == 1,
              py,
              numpy,
              !numpy && s.dtype == Dtype::kFloat64 ? ", dtype=torch.float64" : "",
              IsLowPrecision(s.dtype)};
  WriteHeader(c);
  WriteInput(c);
  WriteProjections(c);
  WriteRope(c);
  WriteQkNorm(c);
  if (c.numpy) {
    WriteNumpyScores(c);
    WriteNumpyLogits(c);
    WriteNumpyWeights(c);
    WriteMaskedRows(c);
    WriteWeightsStore(c);
    WriteNumpyContext(c);
  } else {
    WriteScores(c);
    WriteLogits(c);
    WriteWeights(c);
    WriteMaskedRows(c);
    WriteWeightsStore(c);
    WriteContext(c);
  }
  return py.str();
}

namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

ProgramDiff DiffPrograms(const Scenario& right, const Scenario& wrong,
                         const DecodeOptions* decode) {
  Scenario same_title = wrong;
  same_title.title = right.title;  // the title is data, not the computation
  const auto program = [decode](const Scenario& s) {
    return decode ? GenerateDecodeCode(s, *decode) : GeneratePyTorchCode(s);
  };
  const std::vector<std::string> a = Lines(program(right));
  const std::vector<std::string> b = Lines(program(same_title));
  // Longest common subsequence of lines (programs of a few dozen lines: n * m is small).
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  ProgramDiff d;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      ++i, ++j;
    } else if (j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j])) {
      d.wrong.push_back(b[j++]);
    } else {
      d.right.push_back(a[i++]);
    }
  }
  return d;
}

std::string ProgramAsNotebook(const std::string& program) { return ProgramAsNotebook(program, {}); }

std::string ProgramAsNotebook(const std::string& program,
                              const std::vector<NotebookOutput>& outputs) {
  using nlohmann::json;
  // Lines of each cell, as nbformat stores a source: every line but the last keeps its "\n".
  std::vector<std::vector<std::string>> cells(1);
  std::istringstream in(program);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) {
      if (!cells.back().empty()) cells.emplace_back();
      continue;
    }
    cells.back().push_back(line);
  }
  if (cells.back().empty()) cells.pop_back();
  const bool numpy = program.find("import numpy as np") != std::string::npos;
  std::string intro = std::string("**Attention Lab**: the ") + (numpy ? "NumPy" : "PyTorch") +
                      " program behind the app's stages, one cell per step; run the cells in "
                      "order.";
  if (!outputs.empty())
    intro += " The last cell's outputs were saved by the app: its values as " +
             std::string(numpy ? "NumPy" : "PyTorch") + " prints them, and its heatmap.";
  json nb_cells = json::array();
  nb_cells.push_back(
      {{"cell_type", "markdown"}, {"metadata", json::object()}, {"source", json::array({intro})}});
  for (size_t c = 0; c < cells.size(); ++c) {
    const auto& lines = cells[c];
    json source = json::array();
    for (size_t i = 0; i < lines.size(); ++i)
      source.push_back(lines[i] + (i + 1 < lines.size() ? "\n" : ""));
    nb_cells.push_back({{"cell_type", "code"},
                        {"execution_count", nullptr},
                        {"metadata", json::object()},
                        {"outputs", c + 1 == cells.size() ? OutputsJson(outputs) : json::array()},
                        {"source", source}});
  }
  const json nb = {
      {"cells", nb_cells},
      {"metadata",
       {{"kernelspec", {{"display_name", "Python 3"}, {"language", "python"}, {"name", "python3"}}},
        {"language_info", {{"name", "python"}}}}},
      {"nbformat", 4},
      {"nbformat_minor", 4}};
  return nb.dump(1) + "\n";
}

std::vector<NotebookOutput> PrintedOutputs(const Stages& stages) {
  std::vector<NotebookOutput> out;
  for (const char* name : {"weights", "context"}) {
    const std::optional<PrintedStage> p = PrintStage(stages, name);
    if (p && p->present) out.push_back({std::string(name) + ":\n" + p->text, ""});
  }
  return out;
}

namespace codegen_parts {

std::string PythonFloat(double v) { return PyFloat(v); }

std::string LinearCall(bool low, const std::string& layer, const std::string& x) {
  return low ? "linear(" + layer + ", " + x + ")" : layer + "(" + x + ")";
}

std::string AllowedCellsLines(const Scenario& s, const Shape& sh, bool numpy) {
  std::ostringstream py;
  const Ctx c{s, sh, false, py, numpy, ""};
  WritePositions(c);
  int parts = 0;
  const std::string expr = AllowedExpr(c, s.mask, parts);
  py << "allowed_full = " << expr << " & (i >= 0)  # (T, T): " << MaskName(s.mask) << "\n";
  return py.str();
}

}  // namespace codegen_parts
}  // namespace attnlab
