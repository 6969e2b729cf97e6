// match.h: "my numbers differ from the book": which stage of a scenario a learner's pasted print
// (tensor_text.h) is, and when it is none of them, which known mistake explains it.
//
// A pasted tensor is compared with every stage of the scenario as the generated program holds
// it (torch_print.h PrintStage's shapes): the whole stage, one batch entry, one (batch, head)
// matrix, or a run of its rows (weights[2:4], a single row). Two numbers are equal "to the
// printed digits" when they differ by at most half a unit of the pasted number's last digit,
// plus 2^-20 of their size for the rounding by which the app's float32 products may differ
// from PyTorch's summation order.
//
// The answer, in this order:
//   1. match: a stage equals the pasted numbers to their printed digits;
//   2. close: a stage of the same shape is within 1% of its largest magnitude everywhere;
//      the differing cells and the largest difference;
//   3. explained: the first of KnownCauses() whose scenario variant has a stage that equals the
//      pasted numbers to their printed digits;
//   4. none: the stage of the same shape with the smallest largest difference.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attnlab/model/scenario.h"
#include "attnlab/python/tensor_text.h"

namespace attnlab {

/// A mistake a learner's program may hold, as the scenario variant that makes it. One list:
/// the bug gallery's bugs (bugs.h ApplyBug) are in it beside the setting slips.
struct KnownCause {
  std::string id;    ///< "scale-off", "bug-softmax-dim", ... (stable, for scripts)
  std::string text;  ///< one sentence for the learner
  /// The scenario with the mistake, or nullopt when the scenario has nothing it changes.
  std::function<std::optional<Scenario>(const Scenario&)> variant;
};

/// Every known cause, in the order `match` tries them: scaling off; dividing by d_k instead
/// of sqrt(d_k); the gallery's softmax over the wrong dim, mask after softmax, scaling by
/// d_model, view without transpose; K drawn before Q; one more nn.Linear created before the
/// seeded ones (of the same shape, or d_out x d_out); torch.rand instead of nn.Linear (and
/// back); dropout in eval mode where the scenario trains it; float64 instead of float32 (and
/// back); each seed one off (+1, then -1); then the rest of the gallery (window off by one,
/// RoPE pairs, float16 mask fill, top-left decode mask, sigmoid sink).
const std::vector<KnownCause>& KnownCauses();

/// match's verdict (see the file comment).
enum class MatchVerdict { kMatch, kClose, kExplained, kNone };
inline constexpr EnumName<MatchVerdict> kMatchVerdicts[] = {{MatchVerdict::kMatch, "match"},
                                                            {MatchVerdict::kClose, "close"},
                                                            {MatchVerdict::kExplained, "explained"},
                                                            {MatchVerdict::kNone, "none"}};
constexpr const auto& AllNames(MatchVerdict) { return kMatchVerdicts; }

/// What `match` found.
struct MatchResult {
  MatchVerdict verdict = MatchVerdict::kNone;
  std::string stage;        ///< a PrintableStageNames() name, "" when no stage has the pasted shape
  int64_t batch = -1;       ///< the batch entry compared, -1 when the whole stage (or no batch)
  int64_t head = -1;        ///< the head compared, -1 when every head (or no head dimension)
  int64_t row_begin = 0;    ///< rows [row_begin, row_end) of the (batch, head) matrix; both 0
  int64_t row_end = 0;      ///< when the pasted tensor is not a run of rows
  double max_abs_diff = 0;  ///< largest |pasted - stage| over finite pairs
  int64_t differing = 0;    ///< cells not equal to the printed digits
  /// Per pasted cell (C order): 1 where it does not equal the stage to its printed digits.
  std::vector<uint8_t> differs;
  std::string cause;       ///< KnownCause::id, "" unless explained
  std::string cause_text;  ///< KnownCause::text, or a sentence saying what was found
};

/// Compares `pasted` with the stages of `scenario` and its known causes' variants (the file
/// comment). Runs the scenario once and each applicable cause's variant at most once (a variant
/// that does not validate is skipped). Errors: ScenarioError when `scenario` itself does not
/// validate.
MatchResult MatchPasted(const Scenario& scenario, const PastedTensor& pasted);

}  // namespace attnlab
