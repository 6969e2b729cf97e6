// microgpt.h: Karpathy's microgpt.py (February 2026, the 200-line revision), a whole tiny GPT
// with its own scalar autograd that learns names, reproduced bit for bit: the same printed
// lines, the same losses and weights to the last bit, for any seed, steps, temperature, number
// of samples and input.
//
// Legend: V vocabulary (the documents' distinct characters + BOS), T positions of a document
// (at most kBlockSize), d = kEmbd, H = kHeads heads of hd = kHeadDim, P parameters.
//
// What it follows, in microgpt.py's order (the function names are the script's):
//   - the documents: the input's lines stripped, empty ones dropped, random.shuffle'd by
//     CPython's random seeded with the seed (PythonRandom); the vocabulary uchars = the sorted
//     distinct characters (Unicode code points), BOS = V - 1;
//   - the parameters, matrix by matrix (wte V x d, wpe kBlockSize x d, lm_head V x d, then the
//     layer's attn_wq, attn_wk, attn_wv, attn_wo d x d, mlp_fc1 4d x d, mlp_fc2 d x 4d), row
//     by row, each random.gauss(0, 0.08);
//   - gpt(token, pos, keys, values): x = rmsnorm(wte[token] + wpe[pos]); per layer: rmsnorm,
//     q, k, v = linear(x, W) (y_o = sum_i W[o][i] x_i, no bias), k and v appended to the
//     cache lists, per head softmax(q_h . k_h[t] / sqrt(hd) for each cached t) and the
//     weighted sum of the cached v_h, attn_wo, residual; rmsnorm, fc1, ReLU, fc2, residual;
//     logits = linear(x, lm_head). rmsnorm(x) = x * (mean(x^2) + 1e-5)^-0.5.
//   - the loss of a step: the mean over the document's positions of -log softmax(logits)
//     [target]; backward as Value.backward: a depth-first topological order from the loss,
//     walked in reverse with child.grad += local_grad * v.grad;
//   - Adam (lr 0.01 * (1 - step / steps), beta1 0.85, beta2 0.99, eps 1e-8, bias correction
//     1 - beta^(step + 1));
//   - sampling: from BOS, softmax(logits / temperature), random.choices, until BOS or
//     kBlockSize characters.
// Bit for bit because the same scalar graph is built (node for node, children in the same
// order; the constants the script wraps in Value are folded into their parent, which changes
// no order), every `/` of a Value is x * y**-1 as in Value.__truediv__, every ** is the C
// library's pow called as Python's float_pow calls it, doubles throughout and no FMA
// contraction (microgpt.cpp is compiled with -ffp-contract=off, as the whole engine is).
// tests/microgpt_test.cpp checks it against tools/microgpt_reference.py and against the
// output of the script itself (tests/golden/microgpt/expected-default.log).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "attnlab/base/tensor.h"
#include "attnlab/random/python_random.h"

namespace attnlab {

/// microgpt's sizes (the lesson's; not settings): d, H, layers, the block (positions), hd.
inline constexpr int kMicrogptEmbd = 16, kMicrogptHeads = 4, kMicrogptLayers = 1;
inline constexpr int kMicrogptBlockSize = 16, kMicrogptHeadDim = kMicrogptEmbd / kMicrogptHeads;
/// The most distinct characters an input may have (a guard against binary files: the script
/// would build a V x d embedding of every code point it meets).
inline constexpr int64_t kMicrogptMaxVocab = 4096;

/// The names list microgpt.py trains on (karpathy/makemore's names.txt, MIT licence; see
/// assets/microgpt/README.md), compiled into the binary: the default input.
std::string_view MicrogptNamesText();

/// The documents of an input file's bytes as microgpt.py reads them: decoded as UTF-8 (strict,
/// as open() does), "\r\n" and "\r" read as "\n" (universal newlines), split at "\n", each line
/// stripped of Python's whitespace (str.strip), empty lines dropped. Each document is a list of
/// code points. Error: std::invalid_argument naming the byte offset when the bytes are not
/// UTF-8 text (a binary file).
std::vector<std::u32string> MicrogptDocuments(std::string_view bytes);

/// Code points back to UTF-8 (for printing samples). Errors: none.
std::string MicrogptUtf8(const std::u32string& text);

/// The run's settings: microgpt.py's constants, its defaults as given here.
struct MicrogptSettings {
  std::vector<uint32_t> seed_key{42};  ///< random.seed(seed)'s key (PythonSeedKey)
  std::string seed_text = "42";        ///< the seed as written (for the saved run)
  int64_t steps = 1000;                ///< num_steps (>= 0)
  double temperature = 0.5;            ///< sampling temperature (finite, not 0)
  int64_t samples = 20;                ///< names sampled after training (>= 0)
};

/// One training step's result.
struct MicrogptStep {
  int64_t document = 0;               ///< index into Documents() (step % number of documents)
  std::vector<double> position_loss;  ///< -log p(target) at each of the T positions
  double loss = 0.0;                  ///< their mean, as loss.data
};

/// A microgpt.py run: the shuffled documents, the vocabulary, the parameters and Adam's
/// moments, the generator. Not copyable (it owns its node arena); one thread at a time.
class Microgpt {
 public:
  /// Seeds the generator, shuffles `documents`, builds the vocabulary and draws the
  /// parameters (microgpt.py up to "num params"). Errors: std::invalid_argument when there
  /// is no document ("the input has no non-empty line"), when V > kMicrogptMaxVocab, or when
  /// settings are out of range (steps < 0, samples < 0, temperature 0 or not finite).
  Microgpt(std::vector<std::u32string> documents, const MicrogptSettings& settings);
  ~Microgpt();
  Microgpt(const Microgpt&) = delete;
  Microgpt& operator=(const Microgpt&) = delete;

  const MicrogptSettings& Settings() const { return settings_; }
  /// The shuffled documents (docs after random.shuffle).
  const std::vector<std::u32string>& Documents() const { return docs_; }
  /// uchars: the sorted distinct characters; the token of uchars[i] is i, BOS is V - 1.
  const std::u32string& Characters() const { return chars_; }
  int64_t VocabSize() const { return static_cast<int64_t>(chars_.size()) + 1; }
  int64_t NumParams() const { return static_cast<int64_t>(params_.size()); }

  /// The parameters' values (P), in the script's `params` order (matrix by matrix, row-major).
  const std::vector<double>& Params() const { return params_; }
  /// The gradients of the last Step (P), before Adam zeroed them (zero before any step).
  const std::vector<double>& LastGrads() const { return last_grads_; }
  /// Each matrix's name (the state_dict key), rows, columns and offset into Params().
  struct Matrix {
    std::string name;
    int64_t rows, cols, offset;
  };
  const std::vector<Matrix>& Matrices() const { return matrices_; }

  /// The number of steps taken so far (the next step's index).
  int64_t StepsDone() const { return steps_done_; }
  /// One training step (the body of the script's loop for step = StepsDone()): forward,
  /// backward, Adam. Error: std::domain_error when a probability underflows to 0 (Python's
  /// math.log raises "math domain error" there). Calling it after Settings().steps steps
  /// is allowed (the learning rate goes negative, as the formula says).
  MicrogptStep Step();

  /// One sample (the body of the inference loop): characters until BOS or kBlockSize of them.
  /// Errors: std::invalid_argument from random.choices when the weights are not usable.
  std::u32string Sample();

  /// The scalar autograd graph (internal to microgpt.cpp).
  struct Graph;

 private:
  MicrogptSettings settings_;
  std::vector<std::u32string> docs_;
  std::u32string chars_;
  std::vector<Matrix> matrices_;
  std::vector<double> params_, last_grads_, m_, v_;
  PythonRandom random_;
  int64_t steps_done_ = 0;
  Graph* graph_;
};

/// The parameter matrices for a vocabulary of V (BOS included): name (the state_dict key), rows,
/// columns and offset into the parameter list, in microgpt.py's order (wte V x d, wpe
/// kBlockSize x d, lm_head V x d, attn_wq/wk/wv/wo d x d, mlp_fc1 4d x d, mlp_fc2 d x 4d).
/// The last offset plus its size is P. Errors: none.
std::vector<Microgpt::Matrix> MicrogptMatrices(int64_t V);

/// One document's attention under one set of parameters (a checkpoint), for the window: the
/// forward pass of a training step (gpt() position by position over the growing keys/values
/// lists, the same graph code as Step), recording at each position its q, k, v and each head's
/// softmax row over the positions cached so far; the rows stacked are the T x T causal matrix.
struct MicrogptAttention {
  /// T + 1 tokens: BOS, the document's characters (cut at the block), then the last target;
  /// position t reads tokens[t] and predicts tokens[t + 1]. T = min(kBlockSize, len + 1).
  std::vector<int> tokens;
  MatrixD q, k, v;  ///< T x d each (head h is columns h*hd .. h*hd + hd - 1), after rmsnorm
                    ///< and the attn_wq/wk/wv projections, as gpt() computes them
  /// H matrices of T x T: row t is position t's attention logits q_h[t] . k_h[j] / sqrt(hd)
  /// for j <= t (the dot product summed left to right, times 2.0**-1); 0 above the diagonal.
  std::vector<MatrixD> logits;
  /// H matrices of T x T: row t is position t's attention weights over positions 0..t
  /// (softmax(q_h . k_h / sqrt(hd))); exactly 0 above the diagonal (never computed: causal).
  std::vector<MatrixD> weights;
};
/// The attention of `document` (code points; each must be in `chars`) under `params` (P
/// values, MicrogptMatrices(chars.size() + 1)'s layout). Cost: one forward pass (about 1 ms).
/// Errors: std::invalid_argument when params has the wrong length or the document a character
/// outside chars.
MicrogptAttention MicrogptAttentionOf(const std::u32string& chars,
                                      const std::vector<double>& params,
                                      const std::u32string& document);
/// The token loop's attention on given q, k, v (T x d each, T <= kBlockSize): position t's
/// softmax over keys 0..t computed by the same code as gpt() (the script's arithmetic: the
/// dot product summed left to right from 0, times 2.0**-1, exp(l - max), each exp times
/// sum**-1). H matrices T x T, 0 above the diagonal. What the test compares with the engine's
/// masked matrix attention. Errors: std::invalid_argument on other shapes.
std::vector<MatrixD> MicrogptCausalAttention(const MatrixD& q, const MatrixD& k, const MatrixD& v);

/// The lines microgpt.py prints, without their newline; one source for the command line and
/// the tests. Header: "num docs: N", "vocab size: V", "num params: P".
std::vector<std::string> MicrogptHeaderLines(const Microgpt& run);
/// "step    1 / 1000 | loss 3.3660" (step counted from 1); with hex, the loss as Python's
/// float.hex prints it ("loss 0x1.aed4...p+1").
std::string MicrogptStepLine(int64_t step, int64_t steps, double loss, bool hex);
/// "" and "--- inference (new, hallucinated names) ---": the lines before the samples.
std::vector<std::string> MicrogptInferenceHeaderLines();
/// "sample  1: kamon" (index counted from 1).
std::string MicrogptSampleLine(int64_t index, const std::u32string& sample);
/// Python's float.hex(x): "0x1.8000000000000p+1", "-0x0.0p+0", "inf", "nan".
std::string PythonFloatHex(double x);
/// Python's f"{x:.4f}" ("nan" for every NaN, "inf", "-inf").
std::string PythonFixed4(double x);

/// A run kept for saving (the command line's -o) and for the window: the losses of every
/// step, the parameters at the steps asked for (0 = the initial draw), the samples.
struct MicrogptRecord {
  std::vector<double> losses;                                   ///< one per step taken
  std::vector<std::pair<int64_t, std::vector<double>>> params;  ///< (step, Params() then)
  std::vector<std::u32string> samples;
  bool stopped = false;  ///< the run was stopped early (Ctrl+C)
  /// The document each step trained on (documents[s - 1] for step s), when kept: what the
  /// window shows the attention of. Empty: not kept (the command line keeps it with -o).
  std::vector<std::u32string> documents;
};

/// The saved run as JSON: "format" "attention-lab microgpt run", "version" 1, "settings"
/// (seed as text, steps, temperature, samples), "sizes" (n_embd, n_head, n_layer, block_size,
/// vocab_size, num_params, num_docs), "vocab" (uchars as UTF-8), "matrices" (name, rows,
/// cols, offset into a parameter list), "losses" (doubles that read back exactly, and
/// "losses_hex" as float.hex), "checkpoints" [{"step", "params"}], "samples", "stopped", and
/// "step_documents" (each step's document as UTF-8) when the record kept them.
std::string MicrogptRunJson(const Microgpt& run, const MicrogptRecord& record);

/// A saved run read back (MicrogptRunJson's format): what the window needs to show it.
struct MicrogptSavedRun {
  MicrogptSettings settings;
  std::u32string chars;  ///< uchars (the vocabulary without BOS)
  int64_t num_docs = 0;
  MicrogptRecord record;  ///< losses, checkpoints (each P values), samples, step documents
};
/// Reads MicrogptRunJson's text; the losses and parameters read back to the bit. Error:
/// std::invalid_argument naming what is wrong (not JSON, another format, a missing field, a
/// checkpoint whose length is not the vocabulary's parameter count).
MicrogptSavedRun ReadMicrogptRunJson(std::string_view text);

/// The whole run, as the script runs it, each printed line handed to `print` (without its
/// newline; with hex, the step lines carry float.hex of the loss). `stop` is asked after each step
/// and each sample; true ends the run there (Ctrl+C). `on_step(run, step)` is called after each
/// step (for saving). Errors: as Step and Sample.
void RunMicrogpt(Microgpt& run, bool hex, const std::function<void(const std::string&)>& print,
                 const std::function<bool()>& stop = {},
                 const std::function<void(const Microgpt&, const MicrogptStep&)>& on_step = {},
                 std::vector<std::u32string>* samples = nullptr);

}  // namespace attnlab
