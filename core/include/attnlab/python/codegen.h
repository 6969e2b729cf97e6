// codegen.h: the PyTorch program that computes a scenario, in the notebooks' own style
// (torch.manual_seed, torch.rand or nn.Linear, masked_fill(..., float('-inf')),
// torch.softmax(scores / d_k**0.5, dim=-1), ...). Pasted into Python with PyTorch it prints the
// numbers the app shows: it does what the engine (pipeline.h) does operation for operation, so
// the generator draws and the arithmetic are the same (the ctest codegen_runs_in_pytorch runs it).
//
// The program leaves the spec's stage names as variables: X, Q, K, V, scores, logits, weights
// (and weights_dropped), context, holding those tensors. Dimensions of size one are dropped when
// the batch is 1 and there is one head (X is T x d_in, scores T x T), as a notebook writes it.
//
// Every user string (title, text, tokens, special tokens) is data: a Python string literal
// written as Python's repr() writes it (the title as `title = '...'`), never a comment or code,
// so a shared scenario file cannot make the program do anything but compute. Comments hold only
// the app's own text.
#pragma once

#include <string>
#include <vector>

#include "attnlab/lessons/inference.h"
#include "attnlab/lessons/train.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/scenario.h"

namespace attnlab {

/// The program for `scenario` (validated first), as Python 3 source text (UTF-8): PyTorch, or
/// NumPy in the NumPy notebook's style (np.random.seed, np.random.randn, np.matmul, a 0 / -inf
/// mask added to the scaled scores, its own softmax) when input.generator is "numpy". For qkv
/// input the program draws or writes q, k, v and sets Q, K, V = q, k, v (no X, no W).
/// dtype "bfloat16" / "float16" (PyTorch only): the program defines dtype and stored(t)
/// (t.to(dtype).float()) and computes every stage in float32 from the stored values of the
/// stages before it, then stores its result, as the engine (pipeline.h, "bfloat16 and
/// float16"); nn.Linear's draws are stored (stored_layer) and applied as x @ W stored, then
/// + bias stored (linear); the upcast softmax (scaling.softmax_dtype "float32") leaves the
/// weights in float32. The variables are float32 tensors holding the dtype's numbers; the
/// final prints show weights and context as dtype tensors.
/// Errors: ScenarioError as ValidateScenario.
std::string GeneratePyTorchCode(const Scenario& scenario);

/// The lines two programs differ in: `wrong` holds the lines only the bug's program has,
/// `right` those only the fix's has, each in program order (a line diff, longest common
/// subsequence of lines).
struct ProgramDiff {
  std::vector<std::string> wrong, right;
};

/// The difference between the PyTorch programs (GeneratePyTorchCode) of `right` and `wrong`,
/// titles aside: for a bug of the gallery (bugs.h) and its fix, the wrong line and the right
/// line, e.g. "weights = weights * mask  # ..." against "masked = weights * mask ...".
/// With `decode`, the programs diffed are the decode loops (GenerateDecodeCode with those
/// options): a bug that only a decode step shows (BugInfo::decode, e.g. mask.align's line).
/// Errors: ScenarioError as ValidateScenario, for either scenario; with `decode` also those of
/// GenerateDecodeCode (InferenceError).
ProgramDiff DiffPrograms(const Scenario& right, const Scenario& wrong,
                         const DecodeOptions* decode = nullptr);

/// `program` (GeneratePyTorchCode's text) as a Jupyter notebook: nbformat 4 JSON (minor 4, no
/// cell ids), one markdown cell of one line naming the program's library, then one code cell
/// per step, the program cut at its blank lines (the steps GeneratePyTorchCode separates),
/// so that the cells run in order are the program. UTF-8 text, ends with a newline.
std::string ProgramAsNotebook(const std::string& program);

/// One output saved in a notebook (nbformat 4 display_data), so that it reads complete without
/// running: a tensor as PyTorch (or NumPy) shows it, or a figure.
struct NotebookOutput {
  std::string text;  ///< text/plain: "weights:\n" and the tensor's text, or a figure's caption
  std::string png;   ///< image/png bytes (a core figure, figures/png.h), "" for text only
};

/// ProgramAsNotebook with `outputs` saved, in order, as display_data outputs of its last code
/// cell (the one that prints), PNGs in base64; the markdown line says they were saved by the app.
/// Deterministic: the same program and outputs give the same bytes.
std::string ProgramAsNotebook(const std::string& program,
                              const std::vector<NotebookOutput>& outputs);

/// The tensors GeneratePyTorchCode's program prints at its end, weights then context, each as
/// PrintStage gives it (torch's print, or NumPy's repr for a numpy scenario; autograd's
/// "grad_fn=" left out), with its "name:" line, as two text outputs.
std::vector<NotebookOutput> PrintedOutputs(const Stages& stages);

/// The PyTorch program of a training run (train.h, TrainAttentionHead; codegen_train.cpp): the head
/// drawn as the scenario draws it (its seed, or its input's draws replayed; W written as numbers
/// when they are not torch draws), the task, and the Adam loop; it leaves `losses` (a list of
/// floats, one per step) and prints the first and last. Errors as TrainAttentionHead.
std::string GenerateTrainingCode(const Scenario& scenario, const TrainOptions& options);

/// The scenario's program (GeneratePyTorchCode: PyTorch or NumPy) followed by the KV-cache
/// decode loop of RunDecode written out (codegen_loops.cpp): per K/V head a cache of K and V
/// rows grown with cat / concatenate, the prefill in chunks, one token per step after it, the
/// sliding window's ring buffer, the mask at mask.align's positions. It leaves
/// `decode_context` (B x T x d_v) and `decode_steps` (per step a dict of "first", "t", "keys",
/// "cache_len", "evicted" and "weights", B x heads x q_len x keys: the keys of
/// `attention-lab decode`'s JSON) and prints the largest |decode_context - context|.
/// Errors: ScenarioError as ValidateScenario, and naming `dtype` for bfloat16 / float16 (no
/// loop program for them yet: "dtype: the decode loop's program is not written for
/// \"bfloat16\" yet; ..."); InferenceError as CheckDecode, and for a normalization other than
/// softmax or softmax_then_mask (the loop writes softmax).
std::string GenerateDecodeCode(const Scenario& scenario, const DecodeOptions& options);

/// The scenario's program followed by FlashAttention's forward loop of RunTiled written out
/// (Br x Bc tiles; per row the running maximum m, the running sum l, the unnormalised O and
/// the rescale exp(m_old - m_new); masked tiles skipped; O / l at the end). It leaves
/// `tiled_context` (B x T x d_v), `skipped_tiles` and `tile_steps` (per tile a dict of
/// "batch", "head", "rows", "keys" ([first, end)), "skipped", "m", "l", "rescale", "O": the
/// keys of `attention-lab tiled`'s JSON) and prints the largest |tiled_context - context|.
/// Errors: ScenarioError as ValidateScenario and for bfloat16 / float16 (as
/// GenerateDecodeCode, naming the tiled loop); InferenceError as CheckTiled.
std::string GenerateTiledCode(const Scenario& scenario, int64_t block_q, int64_t block_k);

}  // namespace attnlab
