// microgpt.cpp: microgpt.py bit for bit (see microgpt.h).
//
// [SECTION] Python's arithmetic: float ** as float_pow calls pow
// [SECTION] The scalar graph (Value): nodes in an arena, backward in the script's order
// [SECTION] The model: linear, softmax, rmsnorm, gpt
// [SECTION] Reading the input
// [SECTION] Microgpt: init, Step (forward, backward, Adam), Sample
// [SECTION] For the window: one document's attention under one checkpoint
// [SECTION] The printed lines
//
// This file must be compiled with -ffp-contract=off (core/CMakeLists.txt's engine options):
// every a * b + c of the script is two roundings.
#include "attnlab/lessons/microgpt.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

namespace attnlab {

// ---------------------------------------------------------------------------------------------
// [SECTION] Python's arithmetic: float ** as float_pow calls pow
// ---------------------------------------------------------------------------------------------
namespace {

// x ** y for Python floats (Objects/floatobject.c, float_pow), on the values this program
// meets: y == 0 and x == 1 give 1; a negative x with an integral y is raised as |x| and the
// sign put back for an odd y; otherwise the C library's pow. The empty asm hides y's value from
// the compiler, which would otherwise replace pow(x, 2.0) by x * x and pow(x, -1.0) by 1 / x:
// the same to within an ulp, but not always to the bit.
double PyPow(double x, double y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  if (x == 0.0 && y < 0.0) throw std::domain_error("0.0 cannot be raised to a negative power");
  bool negate = false;
  if (x < 0.0 && std::isfinite(x) && std::floor(y) == y) {
    x = -x;
    negate = std::fmod(std::fabs(y), 2.0) == 1.0;
  }
  __asm__("" : "+x"(y));
  const double r = std::pow(x, y);
  return negate ? -r : r;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] The scalar graph (Value): nodes in an arena, backward in the script's order
// ---------------------------------------------------------------------------------------------

// One Value per node. Its children are node indices (-1: none); local[i] is the script's
// _local_grads[i]. A constant the script wraps in Value(c) is a leaf that no other node
// shares: it is left out (its grad is never read) and its value folded into the op, which
// leaves the order of every other node's gradient additions as it was.
struct Microgpt::Graph {
  struct Node {
    double data, grad;
    double local[2];
    int32_t child[2];
    uint32_t mark;  // == epoch: visited by this backward's depth-first walk
  };
  std::vector<Node> nodes;  // the parameters first (0 .. P-1), then this step's nodes
  int32_t num_params = 0;
  uint32_t epoch = 0;
  std::vector<int32_t> topo;
  std::vector<std::pair<int32_t, int>> stack;

  double Data(int32_t a) const { return nodes[a].data; }
  int32_t New(double data, int32_t c0, double l0, int32_t c1 = -1, double l1 = 0.0) {
    nodes.push_back(Node{data, 0.0, {l0, l1}, {c0, c1}, 0});
    return static_cast<int32_t>(nodes.size() - 1);
  }
  // Value.__add__ / __mul__ of two Values, and of a Value and a constant c.
  int32_t Add(int32_t a, int32_t b) { return New(Data(a) + Data(b), a, 1.0, b, 1.0); }
  int32_t AddC(int32_t a, double c) { return New(Data(a) + c, a, 1.0); }
  int32_t Mul(int32_t a, int32_t b) { return New(Data(a) * Data(b), a, Data(b), b, Data(a)); }
  int32_t MulC(int32_t a, double c) { return New(Data(a) * c, a, c); }
  // Value.__pow__(k): data ** k, local k * data ** (k - 1).
  int32_t Pow(int32_t a, double k) {
    return New(PyPow(Data(a), k), a, k * PyPow(Data(a), k - 1.0));
  }
  // Value.log: math.log (which refuses 0: "math domain error"), local 1 / data.
  int32_t Log(int32_t a) {
    const double d = Data(a);
    if (!(d > 0.0))
      throw std::domain_error("math domain error: log of a probability of " + std::to_string(d));
    return New(std::log(d), a, 1.0 / d);
  }
  int32_t Exp(int32_t a) { return New(std::exp(Data(a)), a, std::exp(Data(a))); }
  // Value.relu: max(0, data) (0 unless data > 0), local float(data > 0).
  int32_t Relu(int32_t a) {
    const double d = Data(a);
    return New(d > 0.0 ? d : 0.0, a, d > 0.0 ? 1.0 : 0.0);
  }
  // Value.__neg__: self * -1.
  int32_t Neg(int32_t a) { return MulC(a, -1.0); }
  // sum(values) of Values: Python's sum starts from the int 0, so the first term is
  // values[0] + 0 (Value.__radd__), each next one acc + values[i].
  int32_t Sum(const int32_t* values, size_t n) {
    int32_t acc = AddC(values[0], 0.0);
    for (size_t i = 1; i < n; ++i) acc = Add(acc, values[i]);
    return acc;
  }

  // Drops this step's nodes; the parameters stay.
  void Reset() { nodes.resize(num_params); }

  // Value.backward from `root`: build_topo's depth-first walk (children in order, a node
  // appended after its children), then for each node from the last: child.grad +=
  // local_grad * v.grad. The walk is iterative (a document's graph is deep).
  void Backward(int32_t root) {
    ++epoch;
    topo.clear();
    stack.clear();
    nodes[root].mark = epoch;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [v, k] = stack.back();
      const Node& n = nodes[v];
      if (k < 2 && n.child[k] >= 0) {
        const int32_t c = n.child[k++];
        Node& cn = nodes[c];
        if (cn.mark != epoch) {
          cn.mark = epoch;
          if (cn.child[0] < 0)
            topo.push_back(c);  // a leaf (a parameter): appended at once
          else
            stack.emplace_back(c, 0);
        }
      } else {
        topo.push_back(v);
        stack.pop_back();
      }
    }
    nodes[root].grad = 1.0;
    for (size_t i = topo.size(); i-- > 0;) {
      const Node& n = nodes[topo[i]];
      const double g = n.grad;
      if (n.child[0] >= 0) nodes[n.child[0]].grad += n.local[0] * g;
      if (n.child[1] >= 0) nodes[n.child[1]].grad += n.local[1] * g;
    }
  }
};

// ---------------------------------------------------------------------------------------------
// [SECTION] The model: linear, softmax, rmsnorm, gpt
// ---------------------------------------------------------------------------------------------
namespace {

constexpr int kD = kMicrogptEmbd, kHd = kMicrogptHeadDim, kFf = 4 * kMicrogptEmbd;

}  // namespace

namespace microgpt_detail {

using G = Microgpt::Graph;
using Vec = std::vector<int32_t>;

// linear(x, w): y[o] = sum(w[o][i] * x[i] for i), w the rows x cols matrix at `w` (a node
// index: the parameters are nodes 0 .. P-1, row-major).
Vec Linear(G& g, const Vec& x, int32_t w, int rows, int cols) {
  Vec y(rows);
  Vec terms(cols);
  for (int o = 0; o < rows; ++o) {
    for (int i = 0; i < cols; ++i) terms[i] = g.Mul(w + o * cols + i, x[i]);
    y[o] = g.Sum(terms.data(), cols);
  }
  return y;
}

// softmax(logits): exp(l - max) (max over the values, a plain float), each divided by their
// sum as e * total**-1 (a new pow node per e, as Value.__truediv__ makes it).
Vec Softmax(G& g, const Vec& logits) {
  double max_val = g.Data(logits[0]);
  for (int32_t l : logits) max_val = std::max(max_val, g.Data(l));  // Python max: first max
  Vec exps(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) exps[i] = g.Exp(g.AddC(logits[i], -max_val));
  const int32_t total = g.Sum(exps.data(), exps.size());
  Vec probs(exps.size());
  for (size_t i = 0; i < exps.size(); ++i) probs[i] = g.Mul(exps[i], g.Pow(total, -1.0));
  return probs;
}

// rmsnorm(x): ms = sum(x_i * x_i) / len(x) (times len**-1 = 1/16), scale = (ms + 1e-5)**-0.5.
Vec Rmsnorm(G& g, const Vec& x) {
  Vec sq(x.size());
  for (size_t i = 0; i < x.size(); ++i) sq[i] = g.Mul(x[i], x[i]);
  const int32_t ms = g.MulC(g.Sum(sq.data(), sq.size()), PyPow(double(x.size()), -1.0));
  const int32_t scale = g.Pow(g.AddC(ms, 1e-5), -0.5);
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = g.Mul(x[i], scale);
  return y;
}

// The parameters' node offsets (Microgpt::Matrices order).
struct Weights {
  int32_t wte, wpe, lm_head, wq, wk, wv, wo, fc1, fc2;
};

// What one position's forward pass records for the window (microgpt.h MicrogptAttention):
// q, k, v (d each) and each head's softmax row over the cached positions (H x T, row-major).
struct Trace {
  std::vector<double> q, k, v, logits, weights;
};

// The attention of one position: for each head h, softmax(q_h . k_h[t] / sqrt(hd) for each
// cached t), then the weighted sum of the cached v_h; the heads' outputs side by side (d).
// With `trace`, each head's weights are appended to trace->weights (H rows of T).
Vec Attend(G& g, const Vec& q, const std::vector<Vec>& keys, const std::vector<Vec>& values,
           Trace* trace) {
  // head_dim**0.5 is 4 ** 0.5 = 2.0; "/ 2.0" is "* 2.0**-1"
  const double inv_scale = PyPow(PyPow(double(kHd), 0.5), -1.0);
  Vec x_attn;
  x_attn.reserve(kD);
  Vec terms(std::max<size_t>(kHd, keys.size()));
  const size_t T = keys.size();
  for (int h = 0; h < kMicrogptHeads; ++h) {
    const int hs = h * kHd;
    Vec attn_logits(T);
    for (size_t t = 0; t < T; ++t) {
      for (int j = 0; j < kHd; ++j) terms[j] = g.Mul(q[hs + j], keys[t][hs + j]);
      attn_logits[t] = g.MulC(g.Sum(terms.data(), kHd), inv_scale);
    }
    const Vec attn_weights = Softmax(g, attn_logits);
    if (trace)
      for (size_t t = 0; t < T; ++t) {
        trace->logits.push_back(g.Data(attn_logits[t]));
        trace->weights.push_back(g.Data(attn_weights[t]));
      }
    for (int j = 0; j < kHd; ++j) {
      for (size_t t = 0; t < T; ++t) terms[t] = g.Mul(attn_weights[t], values[t][hs + j]);
      x_attn.push_back(g.Sum(terms.data(), T));
    }
  }
  return x_attn;
}

// gpt(token_id, pos_id, keys, values): the logits (V nodes); k and v of this position are
// appended to keys and values (one list per layer: kMicrogptLayers == 1 here). With `trace`,
// this position's q, k, v and attention rows are recorded.
Vec Gpt(G& g, const Weights& w, int vocab, int token, int pos, std::vector<Vec>& keys,
        std::vector<Vec>& values, Trace* trace = nullptr) {
  Vec x(kD);
  for (int i = 0; i < kD; ++i) x[i] = g.Add(w.wte + token * kD + i, w.wpe + pos * kD + i);
  x = Rmsnorm(g, x);
  // attention: one layer
  Vec x_residual = x;
  x = Rmsnorm(g, x);
  const Vec q = Linear(g, x, w.wq, kD, kD);
  keys.push_back(Linear(g, x, w.wk, kD, kD));
  values.push_back(Linear(g, x, w.wv, kD, kD));
  if (trace) {
    for (int i = 0; i < kD; ++i) trace->q.push_back(g.Data(q[i]));
    for (int i = 0; i < kD; ++i) trace->k.push_back(g.Data(keys.back()[i]));
    for (int i = 0; i < kD; ++i) trace->v.push_back(g.Data(values.back()[i]));
  }
  x = Linear(g, Attend(g, q, keys, values, trace), w.wo, kD, kD);
  for (int i = 0; i < kD; ++i) x[i] = g.Add(x[i], x_residual[i]);
  // MLP
  x_residual = x;
  x = Rmsnorm(g, x);
  x = Linear(g, x, w.fc1, kFf, kD);
  for (int32_t& xi : x) xi = g.Relu(xi);
  x = Linear(g, x, w.fc2, kD, kFf);
  for (int i = 0; i < kD; ++i) x[i] = g.Add(x[i], x_residual[i]);
  return Linear(g, x, w.lm_head, vocab, kD);
}

}  // namespace microgpt_detail

// ---------------------------------------------------------------------------------------------
// [SECTION] Reading the input
// ---------------------------------------------------------------------------------------------
namespace {

// Python's str.isspace for one code point (Py_UNICODE_ISSPACE: the Unicode White_Space
// characters plus the separators U+001C..U+001F).
bool IsPySpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// Strict UTF-8 as Python's decoder: no overlong forms, no surrogates, nothing past U+10FFFF.
std::u32string DecodeUtf8(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  size_t i = 0;
  auto bad = [&](size_t at) {
    return std::invalid_argument("the input is not UTF-8 text (invalid byte 0x" +
                                 [](unsigned b) {
                                   char buf[3];
                                   std::snprintf(buf, sizeof buf, "%02x", b);
                                   return std::string(buf);
                                 }(static_cast<unsigned char>(s[at])) +
                                 " at byte " + std::to_string(at) + ")");
  };
  while (i < s.size()) {
    const unsigned char b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
      out.push_back(b0);
      ++i;
      continue;
    }
    int len;
    char32_t cp, min;
    if (b0 >= 0xC2 && b0 <= 0xDF)
      len = 2, cp = b0 & 0x1F, min = 0x80;
    else if (b0 >= 0xE0 && b0 <= 0xEF)
      len = 3, cp = b0 & 0x0F, min = 0x800;
    else if (b0 >= 0xF0 && b0 <= 0xF4)
      len = 4, cp = b0 & 0x07, min = 0x10000;
    else
      throw bad(i);
    if (i + len > s.size()) throw bad(i);
    for (int k = 1; k < len; ++k) {
      const unsigned char b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) throw bad(i + k);
      cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) throw bad(i);
    out.push_back(cp);
    i += len;
  }
  return out;
}

}  // namespace

std::vector<std::u32string> MicrogptDocuments(std::string_view bytes) {
  const std::u32string text = DecodeUtf8(bytes);
  std::vector<std::u32string> docs;
  std::u32string line;
  auto finish = [&] {
    size_t a = 0, b = line.size();
    while (a < b && IsPySpace(line[a])) ++a;
    while (b > a && IsPySpace(line[b - 1])) --b;
    if (b > a) docs.emplace_back(line.substr(a, b - a));
    line.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char32_t c = text[i];
    if (c == U'\n' || c == U'\r') {  // universal newlines: \n, \r\n and \r end a line
      if (c == U'\r' && i + 1 < text.size() && text[i + 1] == U'\n') ++i;
      finish();
    } else {
      line.push_back(c);
    }
  }
  finish();
  return docs;
}

std::string MicrogptUtf8(const std::u32string& text) {
  std::string out;
  for (char32_t c : text) {
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Microgpt: init, Step (forward, backward, Adam), Sample
// ---------------------------------------------------------------------------------------------

std::vector<Microgpt::Matrix> MicrogptMatrices(int64_t V) {
  // state_dict's order: wte, wpe, lm_head, then the layer's matrices.
  const std::pair<const char*, std::pair<int64_t, int64_t>> shapes[] = {
      {"wte", {V, kD}},
      {"wpe", {kMicrogptBlockSize, kD}},
      {"lm_head", {V, kD}},
      {"layer0.attn_wq", {kD, kD}},
      {"layer0.attn_wk", {kD, kD}},
      {"layer0.attn_wv", {kD, kD}},
      {"layer0.attn_wo", {kD, kD}},
      {"layer0.mlp_fc1", {kFf, kD}},
      {"layer0.mlp_fc2", {kD, kFf}}};
  std::vector<Microgpt::Matrix> out;
  int64_t offset = 0;
  for (const auto& [name, rc] : shapes) {
    out.push_back(Microgpt::Matrix{name, rc.first, rc.second, offset});
    offset += rc.first * rc.second;
  }
  return out;
}

Microgpt::Microgpt(std::vector<std::u32string> documents, const MicrogptSettings& settings)
    : settings_(settings), docs_(std::move(documents)), graph_(new Graph) {
  std::unique_ptr<Graph> guard(graph_);
  if (settings_.steps < 0) throw std::invalid_argument("steps must be 0 or more");
  if (settings_.samples < 0) throw std::invalid_argument("samples must be 0 or more");
  if (!std::isfinite(settings_.temperature) || settings_.temperature == 0.0)
    throw std::invalid_argument("temperature must be a finite number other than 0");
  if (docs_.empty()) throw std::invalid_argument("the input has no non-empty line (no documents)");
  random_.SeedKey(settings_.seed_key);
  random_.Shuffle(docs_);
  std::set<char32_t> distinct;
  for (const std::u32string& d : docs_) distinct.insert(d.begin(), d.end());
  if (static_cast<int64_t>(distinct.size()) + 1 > kMicrogptMaxVocab)
    throw std::invalid_argument("the input has " + std::to_string(distinct.size()) +
                                " distinct characters; microgpt takes at most " +
                                std::to_string(kMicrogptMaxVocab - 1));
  chars_.assign(distinct.begin(), distinct.end());
  for (const Matrix& m : MicrogptMatrices(VocabSize()))
    for (int64_t i = 0; i < m.rows * m.cols; ++i)
      params_.push_back(random_.Gauss(0, 0.08));  // matrix(): random.gauss(0, std) row by row
  matrices_ = MicrogptMatrices(VocabSize());
  last_grads_.assign(params_.size(), 0.0);
  m_.assign(params_.size(), 0.0);
  v_.assign(params_.size(), 0.0);
  graph_->num_params = static_cast<int32_t>(params_.size());
  graph_->nodes.reserve(params_.size() + 200000);
  for (double p : params_) graph_->New(p, -1, 0.0);
  guard.release();
}

Microgpt::~Microgpt() { delete graph_; }

namespace {

microgpt_detail::Weights WeightsOf(const std::vector<Microgpt::Matrix>& m) {
  auto at = [&](int i) { return static_cast<int32_t>(m[i].offset); };
  return {at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7), at(8)};
}

}  // namespace

MicrogptStep Microgpt::Step() {
  using namespace microgpt_detail;
  Graph& g = *graph_;
  const int V = static_cast<int>(VocabSize()), bos = V - 1;
  const int64_t step = steps_done_, num_steps = settings_.steps;
  MicrogptStep out;
  out.document = step % static_cast<int64_t>(docs_.size());
  const std::u32string& doc = docs_[out.document];
  std::vector<int> tokens{bos};
  for (char32_t c : doc)
    tokens.push_back(static_cast<int>(std::lower_bound(chars_.begin(), chars_.end(), c) -
                                      chars_.begin()));  // uchars.index(ch)
  tokens.push_back(bos);
  const int n = std::min<int>(kMicrogptBlockSize, static_cast<int>(tokens.size()) - 1);

  const Weights w = WeightsOf(matrices_);
  std::vector<Vec> keys, values;
  Vec losses(n);
  g.Reset();
  try {
    for (int pos = 0; pos < n; ++pos) {
      const Vec logits = Gpt(g, w, V, tokens[pos], pos, keys, values);
      const Vec probs = Softmax(g, logits);
      losses[pos] = g.Neg(g.Log(probs[tokens[pos + 1]]));
      out.position_loss.push_back(g.Data(losses[pos]));
    }
  } catch (...) {
    g.Reset();
    throw;
  }
  // loss = (1 / n) * sum(losses): float.__mul__ gives way to Value.__rmul__, sum * (1/n)
  const int32_t loss = g.MulC(g.Sum(losses.data(), losses.size()), 1.0 / n);
  out.loss = g.Data(loss);
  g.Backward(loss);

  // Adam, parameter by parameter, as the script's loop writes each expression.
  const double learning_rate = 0.01, beta1 = 0.85, beta2 = 0.99, eps_adam = 1e-8;
  const double lr_t = learning_rate * (1.0 - double(step) / double(num_steps));
  const double bc1 = 1.0 - PyPow(beta1, double(step + 1)),
               bc2 = 1.0 - PyPow(beta2, double(step + 1));
  for (size_t i = 0; i < params_.size(); ++i) {
    Graph::Node& p = g.nodes[i];
    const double grad = p.grad;
    m_[i] = beta1 * m_[i] + (1.0 - beta1) * grad;
    v_[i] = beta2 * v_[i] + (1.0 - beta2) * PyPow(grad, 2.0);
    const double m_hat = m_[i] / bc1;
    const double v_hat = v_[i] / bc2;
    p.data -= lr_t * m_hat / (PyPow(v_hat, 0.5) + eps_adam);
    params_[i] = p.data;
    last_grads_[i] = grad;
    p.grad = 0.0;
  }
  g.Reset();
  ++steps_done_;
  return out;
}

std::u32string Microgpt::Sample() {
  using namespace microgpt_detail;
  Graph& g = *graph_;
  const int V = static_cast<int>(VocabSize()), bos = V - 1;
  const Weights w = WeightsOf(matrices_);
  const double inv_temperature = PyPow(settings_.temperature, -1.0);  // l / T = l * T**-1
  std::vector<Vec> keys, values;
  std::u32string sample;
  std::vector<double> weights(V);
  int token = bos;
  g.Reset();
  try {
    for (int pos = 0; pos < kMicrogptBlockSize; ++pos) {
      Vec logits = Gpt(g, w, V, token, pos, keys, values);
      for (int32_t& l : logits) l = g.MulC(l, inv_temperature);
      const Vec probs = Softmax(g, logits);
      for (int i = 0; i < V; ++i) weights[i] = g.Data(probs[i]);
      token = static_cast<int>(random_.ChooseIndex(weights));
      if (token == bos) break;
      sample.push_back(chars_[token]);
    }
  } catch (...) {
    g.Reset();
    throw;
  }
  g.Reset();
  return sample;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] For the window: one document's attention under one checkpoint
// ---------------------------------------------------------------------------------------------

namespace {

// The parameters as the graph's first nodes (leaves), as the Microgpt constructor puts them.
void LoadLeaves(Microgpt::Graph& g, const double* values, size_t n) {
  g.nodes.clear();
  g.nodes.reserve(n + 100000);
  for (size_t i = 0; i < n; ++i) g.New(values[i], -1, 0.0);
  g.num_params = static_cast<int32_t>(n);
}

}  // namespace

MicrogptAttention MicrogptAttentionOf(const std::u32string& chars,
                                      const std::vector<double>& params,
                                      const std::u32string& document) {
  using namespace microgpt_detail;
  const int V = static_cast<int>(chars.size()) + 1, bos = V - 1;
  const std::vector<Microgpt::Matrix> matrices = MicrogptMatrices(V);
  const int64_t P = matrices.back().offset + matrices.back().rows * matrices.back().cols;
  if (static_cast<int64_t>(params.size()) != P)
    throw std::invalid_argument("the checkpoint has " + std::to_string(params.size()) +
                                " parameters; a vocabulary of " + std::to_string(V) + " needs " +
                                std::to_string(P));
  MicrogptAttention out;
  out.tokens.push_back(bos);
  for (char32_t c : document) {
    const auto it = std::lower_bound(chars.begin(), chars.end(), c);
    if (it == chars.end() || *it != c)
      throw std::invalid_argument("the document \"" + MicrogptUtf8(document) +
                                  "\" has a character outside the vocabulary");
    out.tokens.push_back(static_cast<int>(it - chars.begin()));
  }
  out.tokens.push_back(bos);
  const int T = std::min<int>(kMicrogptBlockSize, static_cast<int>(out.tokens.size()) - 1);
  out.tokens.resize(T + 1);  // T inputs, then the last position's target

  Microgpt::Graph g;
  LoadLeaves(g, params.data(), params.size());
  const Weights w = WeightsOf(matrices);
  std::vector<Vec> keys, values;
  out.q = out.k = out.v = MatrixD::Zero(T, kD);
  out.weights.assign(kMicrogptHeads, MatrixD::Zero(T, T));
  out.logits = out.weights;
  for (int pos = 0; pos < T; ++pos) {
    Trace trace;
    Gpt(g, w, V, out.tokens[pos], pos, keys, values, &trace);
    for (int i = 0; i < kD; ++i) {
      out.q(pos, i) = trace.q[i];
      out.k(pos, i) = trace.k[i];
      out.v(pos, i) = trace.v[i];
    }
    for (int h = 0; h < kMicrogptHeads; ++h)
      for (int t = 0; t <= pos; ++t) {
        out.logits[h](pos, t) = trace.logits[h * (pos + 1) + t];
        out.weights[h](pos, t) = trace.weights[h * (pos + 1) + t];
      }
  }
  return out;
}

std::vector<MatrixD> MicrogptCausalAttention(const MatrixD& q, const MatrixD& k, const MatrixD& v) {
  using namespace microgpt_detail;
  const int64_t T = q.rows();
  if (q.cols() != kD || k.cols() != kD || v.cols() != kD || k.rows() != T || v.rows() != T ||
      T > kMicrogptBlockSize)
    throw std::invalid_argument("q, k and v must be T x " + std::to_string(kD) +
                                ", T <= " + std::to_string(kMicrogptBlockSize));
  // q, k, v as leaves: q's T * d values, then k's, then v's (row-major).
  std::vector<double> leaves(q.data(), q.data() + q.size());
  leaves.insert(leaves.end(), k.data(), k.data() + k.size());
  leaves.insert(leaves.end(), v.data(), v.data() + v.size());
  Microgpt::Graph g;
  LoadLeaves(g, leaves.data(), leaves.size());
  auto row = [&](int64_t base, int64_t t) {
    Vec r(kD);
    for (int i = 0; i < kD; ++i) r[i] = static_cast<int32_t>(base + t * kD + i);
    return r;
  };
  std::vector<MatrixD> out(kMicrogptHeads, MatrixD::Zero(T, T));
  std::vector<Vec> keys, values;
  for (int64_t t = 0; t < T; ++t) {  // the token loop: the cache grows by one each position
    keys.push_back(row(T * kD, t));
    values.push_back(row(2 * T * kD, t));
    Trace trace;
    Attend(g, row(0, t), keys, values, &trace);
    for (int h = 0; h < kMicrogptHeads; ++h)
      for (int64_t j = 0; j <= t; ++j) out[h](t, j) = trace.weights[h * (t + 1) + j];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The printed lines
// ---------------------------------------------------------------------------------------------

std::vector<std::string> MicrogptHeaderLines(const Microgpt& run) {
  return {"num docs: " + std::to_string(run.Documents().size()),
          "vocab size: " + std::to_string(run.VocabSize()),
          "num params: " + std::to_string(run.NumParams())};
}

std::string PythonFixed4(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", x);  // glibc rounds the exact binary value, as Python
  return buf;
}

std::string PythonFloatHex(double x) {
  // float_hex in Objects/floatobject.c: the mantissa scaled to [1, 2) (or [0, 1) for
  // subnormals, exponent -1022) and written as 1 + 13 hex digits.
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  const std::string sign = std::signbit(x) ? "-" : "";
  if (x == 0.0) return sign + "0x0.0p+0";
  int e;
  double m = std::frexp(std::fabs(x), &e);
  const int shift = 1 - std::max(-1021 - e, 0);  // DBL_MIN_EXP = -1021
  m = std::ldexp(m, shift);
  e -= shift;
  static const char kHex[] = "0123456789abcdef";
  std::string s = sign + "0x";
  int digit = static_cast<int>(m);
  s.push_back(kHex[digit]);
  m -= digit;
  s.push_back('.');
  for (int i = 0; i < 13; ++i) {
    m *= 16.0;
    digit = static_cast<int>(m);
    s.push_back(kHex[digit]);
    m -= digit;
  }
  s += "p" + std::string(e < 0 ? "-" : "+") + std::to_string(std::abs(e));
  return s;
}

std::string MicrogptStepLine(int64_t step, int64_t steps, double loss, bool hex) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "step %4lld / %4lld | loss ", static_cast<long long>(step),
                static_cast<long long>(steps));
  return buf + (hex ? PythonFloatHex(loss) : PythonFixed4(loss));
}

std::vector<std::string> MicrogptInferenceHeaderLines() {
  return {"", "--- inference (new, hallucinated names) ---"};
}

std::string MicrogptSampleLine(int64_t index, const std::u32string& sample) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "sample %2lld: ", static_cast<long long>(index));
  return buf + MicrogptUtf8(sample);
}

std::string MicrogptRunJson(const Microgpt& run, const MicrogptRecord& record) {
  using nlohmann::ordered_json;
  const MicrogptSettings& s = run.Settings();
  ordered_json j;
  j["format"] = "attention-lab microgpt run";
  j["version"] = 1;
  j["settings"] = {{"seed", s.seed_text},
                   {"steps", s.steps},
                   {"temperature", s.temperature},
                   {"samples", s.samples}};
  j["sizes"] = {{"n_embd", kMicrogptEmbd},           {"n_head", kMicrogptHeads},
                {"n_layer", kMicrogptLayers},        {"block_size", kMicrogptBlockSize},
                {"vocab_size", run.VocabSize()},     {"num_params", run.NumParams()},
                {"num_docs", run.Documents().size()}};
  j["vocab"] = MicrogptUtf8(run.Characters());
  ordered_json mats = ordered_json::array();
  for (const Microgpt::Matrix& m : run.Matrices())
    mats.push_back({{"name", m.name}, {"rows", m.rows}, {"cols", m.cols}, {"offset", m.offset}});
  j["matrices"] = mats;
  j["losses"] = record.losses;  // nlohmann writes the shortest text that reads back exactly
  ordered_json hex = ordered_json::array();
  for (double l : record.losses) hex.push_back(PythonFloatHex(l));
  j["losses_hex"] = hex;
  ordered_json checkpoints = ordered_json::array();
  for (const auto& [step, params] : record.params)
    checkpoints.push_back({{"step", step}, {"params", params}});
  j["checkpoints"] = checkpoints;
  ordered_json samples = ordered_json::array();
  for (const std::u32string& x : record.samples) samples.push_back(MicrogptUtf8(x));
  j["samples"] = samples;
  j["stopped"] = record.stopped;
  if (!record.documents.empty()) {
    ordered_json docs = ordered_json::array();
    for (const std::u32string& d : record.documents) docs.push_back(MicrogptUtf8(d));
    j["step_documents"] = docs;
  }
  return j.dump(1) + "\n";
}

MicrogptSavedRun ReadMicrogptRunJson(std::string_view text) {
  using nlohmann::json;
  MicrogptSavedRun out;
  try {
    const json j = json::parse(text);
    if (j.value("format", "") != "attention-lab microgpt run")
      throw std::invalid_argument(
          "not a saved microgpt run (\"format\" is not "
          "\"attention-lab microgpt run\")");
    const json& s = j.at("settings");
    out.settings.seed_text = s.at("seed").get<std::string>();
    out.settings.seed_key = PythonSeedKey(out.settings.seed_text);
    out.settings.steps = s.at("steps").get<int64_t>();
    out.settings.temperature = s.at("temperature").get<double>();
    out.settings.samples = s.at("samples").get<int64_t>();
    out.chars = DecodeUtf8(j.at("vocab").get<std::string>());
    out.num_docs = j.at("sizes").at("num_docs").get<int64_t>();
    const int64_t V = static_cast<int64_t>(out.chars.size()) + 1;
    const Microgpt::Matrix last = MicrogptMatrices(V).back();  // a copy: the vector is a temporary
    const size_t P = static_cast<size_t>(last.offset + last.rows * last.cols);
    out.record.losses = j.at("losses").get<std::vector<double>>();
    for (const json& c : j.at("checkpoints")) {
      std::vector<double> params = c.at("params").get<std::vector<double>>();
      if (params.size() != P)
        throw std::invalid_argument("a checkpoint has " + std::to_string(params.size()) +
                                    " parameters, the vocabulary needs " + std::to_string(P));
      out.record.params.emplace_back(c.at("step").get<int64_t>(), std::move(params));
    }
    for (const json& x : j.value("samples", json::array()))
      out.record.samples.push_back(DecodeUtf8(x.get<std::string>()));
    for (const json& x : j.value("step_documents", json::array()))
      out.record.documents.push_back(DecodeUtf8(x.get<std::string>()));
    out.record.stopped = j.value("stopped", false);
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("not a readable saved microgpt run: ") + e.what());
  }
  return out;
}

void RunMicrogpt(Microgpt& run, bool hex, const std::function<void(const std::string&)>& print,
                 const std::function<bool()>& stop,
                 const std::function<void(const Microgpt&, const MicrogptStep&)>& on_step,
                 std::vector<std::u32string>* samples) {
  for (const std::string& line : MicrogptHeaderLines(run)) print(line);
  const int64_t steps = run.Settings().steps;
  while (run.StepsDone() < steps) {
    const MicrogptStep s = run.Step();
    print(MicrogptStepLine(run.StepsDone(), steps, s.loss, hex));
    if (on_step) on_step(run, s);
    if (stop && stop()) return;
  }
  for (const std::string& line : MicrogptInferenceHeaderLines()) print(line);
  for (int64_t i = 0; i < run.Settings().samples; ++i) {
    const std::u32string sample = run.Sample();
    print(MicrogptSampleLine(i + 1, sample));
    if (samples) samples->push_back(sample);
    if (stop && stop()) return;
  }
}

}  // namespace attnlab
