// bugs.h: the bug gallery. Each classic attention mistake is a shipped preset whose id starts
// with "bug-" (assets/presets/bug-*.json): the buggy computation written as a scenario, so the
// generated program reproduces the wrong numbers. Its fix is the same scenario with the one
// setting that is wrong put right (BugFix); the Compare view shows the fix as A and the bug as
// B, with the diagnosis below and the two programs' differing lines in the Code view
// (codegen.h DiffPrograms).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attnlab/model/scenario.h"

namespace attnlab {

/// One entry of the gallery. `id` is the preset's id; `name` a short label for menus
/// ("softmax, then mask, no renormalisation"); `diagnosis` one sentence of what the numbers
/// show ("rows sum to less than 1: ..."); `source` the public thread where learners hit it;
/// `fix` what the fix does, for its title ("softmax over the keys (dim=-1): every row sums
/// to 1"). `decode`: the mistake shows only in a KV-cache decode step, where a step has fewer
/// queries than keys (the full T x T computation is the same for bug and fix): the Compare view
/// then shows both as decoded (inference.h DecodedStages) and the Code view diffs the decode
/// loops (codegen.h GenerateDecodeCode).
struct BugInfo {
  const char* id;
  const char* name;
  const char* diagnosis;
  const char* source;
  const char* fix;
  bool decode = false;
};

/// Every bug of the gallery, in menu order (each id names a shipped preset).
const std::vector<BugInfo>& Bugs();

/// The gallery entry of `id`, or nullptr when `id` is not a bug of the gallery.
const BugInfo* FindBug(const std::string& id);

/// The fix of `bug`, a scenario with the mistake of gallery entry `id`: the same scenario with
/// the wrong setting put right, titled "The fix of <id>: <BugInfo::fix>" (the bug's title
/// says what is wrong):
///   bug-softmax-dim         normalization softmax_dim_query -> softmax
///   bug-mask-after-softmax  normalization softmax_then_mask_no_renorm -> softmax_then_mask
///   bug-scale-d-model       scaling.multiplier d_in^-0.5 -> dh^-0.5 (head_size, d_out / heads)
///   bug-window-off-by-one   mask.window W + 1 -> W
///   bug-rope-pairs          positions.layout split_halves -> interleaved (dh >= 4: with
///                           dh = 2 the two layouts pair the same two dimensions)
///   bug-view-no-transpose   projections.head_split view_no_transpose -> transpose (H >= 2:
///                           one head is the same either way)
///   bug-fp16-mask-fill      mask.fill -1e9 -> finfo_min (torch.finfo(float16).min, -65504),
///                           in a float16 scenario
///   bug-decode-top-left     mask.align top_left -> bottom_right (with a mask: align means
///                           nothing without one)
///   bug-sink-sigmoid        scaling.sink_form sigmoid -> concat
/// Errors: ScenarioError naming the field that does not hold the bug (e.g. "mask.window: the
/// bug-window-off-by-one fix needs a sliding window of at least 2 keys"), or field "bug" for
/// an unknown id.
Scenario BugFix(const std::string& id, const Scenario& bug);

/// The mistake of gallery entry `id` made in `right`, a scenario without it: the inverse of
/// BugFix, the one setting put wrong (softmax -> softmax_dim_query; a mask's softmax ->
/// softmax_then_mask_no_renorm; sqrt_dk -> no sqrt_dk and the multiplier times d_in^-0.5;
/// window W -> W + 1; RoPE interleaved -> split_halves (dh >= 4); transpose ->
/// view_no_transpose (H >= 2); float16's mask fill -> -1e9; bottom_right -> top_left (with a
/// mask); a sink's concat -> sigmoid). nullopt when `right` has nothing the mistake could
/// change (no mask for the mask's bugs, one head for the view, ...), or `id` is not a bug of
/// the gallery. What `match` (match.h) tries for each bug. The result is not validated.
std::optional<Scenario> ApplyBug(const std::string& id, const Scenario& right);

}  // namespace attnlab
