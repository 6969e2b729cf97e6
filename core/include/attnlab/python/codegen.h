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

#include "attnlab/model/scenario.h"
#include "attnlab/lessons/train.h"

namespace attnlab {

/// The program for `scenario` (validated first), as Python 3 source text (UTF-8): PyTorch, or
/// NumPy in the NumPy notebook's style (np.random.seed, np.random.randn, np.matmul, a 0 / -inf
/// mask added to the scaled scores, its own softmax) when input.generator is "numpy". For qkv
/// input the program draws or writes q, k, v and sets Q, K, V = q, k, v (no X, no W).
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
/// Errors: ScenarioError as ValidateScenario, for either scenario.
ProgramDiff DiffPrograms(const Scenario& right, const Scenario& wrong);

/// `program` (GeneratePyTorchCode's text) as a Jupyter notebook: nbformat 4 JSON (minor 4, no
/// cell ids), one markdown cell of one line naming the program's library, then one code cell
/// per step, the program cut at its blank lines (the steps GeneratePyTorchCode separates),
/// so that the cells run in order are the program. UTF-8 text, ends with a newline.
std::string ProgramAsNotebook(const std::string& program);

/// The PyTorch program of a training run (train.h, TrainAttentionHead; codegen_train.cpp): the head drawn as the scenario
/// draws it (its seed, or its input's draws replayed; W written as numbers when they are not
/// torch draws), the task, and the Adam loop; it leaves `losses` (a list of floats, one per
/// step) and prints the first and last. Errors as TrainAttentionHead.
std::string GenerateTrainingCode(const Scenario& scenario, const TrainOptions& options);

}  // namespace attnlab
