// views.cpp: see views.h.
//
// [SECTION] Code
// [SECTION] The averaging trick
// [SECTION] Compare: B's scenario, its run, the views
// [SECTION] JSON for scripts
#include "gui/actions/views.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "attnlab/lessons/train.h"
#include "attnlab/python/codegen.h"
#include "gui/actions/apply.h"
#include "gui/actions/microgpt_view.h"
#include "gui/actions/training.h"
#include "gui/state/gradient_state.h"
#include "gui/widgets/plot.h"
#include "gui/widgets/stage_info.h"

namespace attnlab::gui {
namespace {

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// True when a heavy view should wait: a slider is held, T is large, and it refreshed less than
/// kHeldRefreshSeconds ago.
bool HoldBack(const AppState& state, double refreshed_at) {
  const Shape& sh = ShownShape(state);
  const bool held = !state.history.open_merge_key.empty() || state.script_drag;
  return held && sh.T * sh.T >= kHeavyCells && Seconds() - refreshed_at < kHeldRefreshSeconds;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] Code

void RefreshCode(AppState& state) {
  CodeState& c = state.code;
  if (!HasShownRun(state)) return;
  const TrainOptions o = TrainViewOptions(state, c.training_scaled);
  const InferenceViewState& inf = state.inference;
  const std::string made_for =
      c.training ? std::string(Name(o.task)) + "/" + std::to_string(o.steps) + "/" +
                       std::to_string(o.d_k) + "/" + (o.scale ? "scaled" : "unscaled")
      : c.loop == "decode"
          ? "decode/" + std::to_string(inf.prefill) + "/" + std::to_string(inf.chunk)
      : c.loop == "tiled"
          ? "tiled/" + std::to_string(inf.block_q) + "/" + std::to_string(inf.block_k)
          : "";
  if (c.version == state.shown_version && c.made_for == made_for) return;
  c.version = state.shown_version;
  c.made_for = made_for;
  try {
    c.text = c.training           ? GenerateTrainingCode(state.shown, o)
             : c.loop == "decode" ? GenerateDecodeCode(state.shown, {inf.prefill, inf.chunk})
             : c.loop == "tiled"  ? GenerateTiledCode(state.shown, inf.block_q, inf.block_k)
                                  : GeneratePyTorchCode(state.shown);
    c.error.clear();
  } catch (const std::exception& e) {
    c.text.clear();
    c.error = e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The averaging trick

void RefreshTrick(AppState& state, bool now) {
  TrickState& t = state.trick;
  // During a background run the steps of the last run stay; they follow its result.
  if (!HasShownRun(state) || !ReadableStages(state)) return;
  if (t.version == state.shown_version && t.batch == state.batch) return;
  if (!now && HoldBack(state, t.refreshed_at)) return;
  t.refreshed_at = Seconds();
  t.version = state.shown_version;
  t.batch = state.batch;
  try {
    t.steps = AveragingTrick(ShownStages(state), state.shown, state.batch);
    t.error.clear();
  } catch (const std::exception& e) {
    t.steps.clear();
    t.error = e.what();
  }
  for (HeatmapSlot& s : t.weight_maps) s.dirty = true;
  for (HeatmapSlot& s : t.result_maps) s.dirty = true;
}

const char* TrickResultName(int step) {
  static const char* names[] = {"xbow", "xbow2", "xbow3", "out"};
  return names[std::clamp(step, 0, 3)];
}

std::string TrickVerdict(const TrickStep& step, int i, bool* shapes_differ) {
  const bool differ = std::isinf(step.max_diff_from_v1);
  if (shapes_differ) *shapes_differ = differ;
  if (i == 0) return "xbow: the reference";
  return std::string("torch.allclose(xbow, ") + TrickResultName(i) + ") \u2192 " +
         (step.allclose_to_v1 ? "True" : "False");
}

std::string TrickMaxDiff(const AppState& state, const TrickStep& step, int i) {
  if (i == 0) return "";
  const std::vector<TrickStep>& steps = state.trick.steps;
  if (std::isinf(step.max_diff_from_v1) && !steps.empty()) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s (%lld \u00D7 %lld) and xbow (%lld \u00D7 %lld) differ",
                  TrickResultName(i), static_cast<long long>(step.result.rows()),
                  static_cast<long long>(step.result.cols()),
                  static_cast<long long>(steps[0].result.rows()),
                  static_cast<long long>(steps[0].result.cols()));
    return buf;
  }
  char buf[192];
  std::snprintf(buf, sizeof buf,
                "max |%s \u2212 xbow| = %.3g; worst cell against its tolerance: %.3g vs %.3g",
                TrickResultName(i), step.max_diff_from_v1, step.worst_diff, step.worst_tolerance);
  return buf;
}

std::string TrickRoundingNote(const TrickStep& step, int i) {
  if (i == 0) return "";
  char buf[512];
  if (step.near_tolerance) {
    std::snprintf(buf, sizeof buf,
                  "The verdict sits within float32 rounding of the tolerance: the worst cell "
                  "differs by %.3g where allclose allows %.3g (1e-8 + 1e-5 |b|). Summed in "
                  "another order (another CPU or PyTorch build) the same cell can land on the "
                  "other side, so a notebook may print the other verdict.",
                  step.worst_diff, step.worst_tolerance);
    return buf;
  }
  if (step.allclose_to_v1 || !(step.max_diff_from_v1 < 1e-6)) return "";
  return "Equal up to float32 rounding. allclose allows |a - b| <= 1e-8 + 1e-5 |b|, and where "
         "a mean is close to 0 (the tokens cancel), a sum in another order moves it by more "
         "than 1e-8.";
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Compare: B's scenario, its run, the views

const char* CompareModeName(CompareMode mode) {
  switch (mode) {
    case CompareMode::kScaled:
      return "scaled";
    case CompareMode::kCausal:
      return "causal";
    case CompareMode::kHeads:
      return "heads";
    case CompareMode::kTemperature:
      return "temperature";
    case CompareMode::kPinned:
      return "pinned";
  }
  return "?";
}

namespace {

std::string MaskLabel(const MaskSpec& m) {
  return m.kind == MaskKind::kNone ? "no mask" : MaskName(m);
}

std::string MultiplierName(double m) { return "\u00D7" + ShortNumber(m); }

/// B's scenario and the two names, or an error when the mode does not apply.
bool MakeB(const AppState& state, Scenario* b, std::string* name_a, std::string* name_b,
           std::string* error) {
  const CompareState& c = state.compare;
  const Scenario& a = state.shown;
  *b = a;
  switch (c.mode) {
    case CompareMode::kScaled:
      b->scaling.sqrt_dk = !a.scaling.sqrt_dk;
      *name_a = a.scaling.sqrt_dk ? "scaled" : "unscaled";
      *name_b = b->scaling.sqrt_dk ? "scaled" : "unscaled";
      return true;
    case CompareMode::kCausal:
      b->mask = MaskSpec{};
      if (a.mask.kind == MaskKind::kNone) b->mask.kind = MaskKind::kCausal;
      *name_a = MaskLabel(a.mask);
      *name_b = MaskLabel(b->mask);
      return true;
    case CompareMode::kHeads: {
      const int64_t H = ShownShape(state).H;
      if (H < 2) {
        *error =
            "Head 0 vs head 1 needs two heads or more: set heads in the Projections section "
            "(d_out must divide by it).";
        return false;
      }
      *name_a = "head " + std::to_string(std::clamp<int64_t>(c.head_a, 0, H - 1));
      *name_b = "head " + std::to_string(std::clamp<int64_t>(c.head_b, 0, H - 1));
      return true;
    }
    case CompareMode::kTemperature:
      b->scaling.multiplier = c.multiplier_b;
      *name_a = MultiplierName(a.scaling.multiplier);
      *name_b = MultiplierName(c.multiplier_b);
      return true;
    case CompareMode::kPinned:
      if (!c.pinned) {
        *error = "Nothing pinned yet: \"Pin current as B\" takes a snapshot of the current state.";
        return false;
      }
      *b = *c.pinned;
      *name_a = c.bug_id.empty() ? "current" : "the fix";
      *name_b = c.bug_id.empty() ? "pinned" : "the bug";
      return true;
  }
  return false;
}

}  // namespace

void RefreshCompare(AppState& state, bool now) {
  CompareState& c = state.compare;
  // During a background run the last comparison stays; it follows the run's result.
  if (!HasShownRun(state) || !ReadableStages(state)) return;
  char key[256];
  std::snprintf(key, sizeof key, "%llu %d %.17g %lld %lld %d %lld %lld %llu %d %lld %lld",
                static_cast<unsigned long long>(state.shown_version), static_cast<int>(c.mode),
                c.multiplier_b, static_cast<long long>(c.head_a), static_cast<long long>(c.head_b),
                static_cast<int>(c.stage), static_cast<long long>(state.head),
                static_cast<long long>(state.batch), static_cast<unsigned long long>(c.pin_version),
                c.decoded ? 1 : 0, static_cast<long long>(state.inference.prefill),
                static_cast<long long>(state.inference.chunk));
  if (c.key == key) return;
  if (!now && HoldBack(state, c.refreshed_at)) return;
  c.refreshed_at = Seconds();
  c.key = key;
  c.upload = true;
  c.view_a.reset();
  c.view_b.reset();
  c.diff.reset();
  c.rows_a.clear();
  c.rows_b.clear();
  c.error.clear();
  c.decoded_note.clear();

  Scenario b;
  if (!MakeB(state, &b, &c.name_a, &c.name_b, &c.error)) return;
  try {
    c.engine_b.Run(b);
    c.b = b;
  } catch (const std::exception& e) {
    c.error = std::string("B cannot run: ") + e.what();
    return;
  }
  const Stages* sa = &ShownStages(state);
  const Stages* sb = &c.engine_b.stages();
  // "As decoded": both runs' rows as the KV-cache decode makes them (DecodedStages).
  Stages decoded_a, decoded_b;
  if (c.decoded) {
    const Shape& sh = sa->shape;
    if (static_cast<double>(sh.B * sh.H) * static_cast<double>(sh.T) * static_cast<double>(sh.T) >
        kMaxInferenceCells) {
      c.error =
          "As decoded: B x heads x T x T is too large for the window's decode; use "
          "`attention-lab decode` (or switch \"as decoded\" off).";
      return;
    }
    const DecodeOptions opt{std::min(state.inference.prefill, sh.T), state.inference.chunk};
    try {
      decoded_a = DecodedStages(*sa, RunDecode(state.shown, *sa, opt));
      decoded_b = DecodedStages(*sb, RunDecode(c.b, *sb, opt));
    } catch (const std::exception& e) {
      c.error = std::string("As decoded: ") + e.what();
      return;
    }
    sa = &decoded_a;
    sb = &decoded_b;
    c.name_a += ", decoded";
    c.name_b += ", decoded";
    c.decoded_note = "A and B as the KV-cache decode computes them: a prefill of " +
                     std::to_string(opt.prefill) + " token" + (opt.prefill == 1 ? "" : "s") +
                     (opt.chunk > 0 ? " in chunks of " + std::to_string(opt.chunk) : "") +
                     ", then one token per step (the Decode view's settings); row i is query "
                     "i's row in the step that computed it, hatched where it could not look.";
  }
  int64_t ha = std::min(state.head, sa->shape.H - 1), hb = std::min(state.head, sb->shape.H - 1);
  if (c.mode == CompareMode::kHeads) {
    ha = std::clamp<int64_t>(c.head_a, 0, sa->shape.H - 1);
    hb = std::clamp<int64_t>(c.head_b, 0, sb->shape.H - 1);
  }
  const int64_t ba = std::min(state.batch, sa->shape.B - 1),
                bb = std::min(state.batch, sb->shape.B - 1);
  const bool per_head = StageIsPerHead(c.stage);
  try {
    ComparedViews v =
        CompareViews(ExtractStage(*sa, state.shown, c.stage, per_head ? ha : 0, ba),
                     ExtractStage(*sb, c.b, c.stage, per_head ? hb : 0, bb), c.name_a, c.name_b);
    c.view_a = std::move(v.a);
    c.view_b = std::move(v.b);
    c.diff = std::move(v.diff);
    c.rows_a = RowsPeakStats(sa->Head(sa->weights, ba, ha));
    c.rows_b = RowsPeakStats(sb->Head(sb->weights, bb, hb));
    c.distributions_a = RowsAreDistributions(c.rows_a, DistributionTolerance(sa->dtype));
    c.distributions_b = RowsAreDistributions(c.rows_b, DistributionTolerance(sb->dtype));
  } catch (const std::exception& e) {
    c.error = e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] JSON for scripts

std::string ViewsJson(AppState& state) {
  SettleRuns(state);  // a script reads what the views show for the latest scenario
  RefreshCode(state);
  RefreshTrick(state, true);
  RefreshCompare(state, true);
  nlohmann::json j;
  j["view"] = ViewRow(state.central).name;
  j["history"] = {{"undo", state.history.undo.size()}, {"redo", state.history.redo.size()}};
  j["preset"] = {
      {"id", state.preset_id},
      {"edited", !state.preset_id.empty() && !(state.scenario == state.preset_scenario)}};
  j["tour"] = {{"active", state.tour.active}, {"step", state.tour.step}};
  nlohmann::json steps = nlohmann::json::array();
  for (size_t i = 0; i < state.trick.steps.size(); ++i) {
    const TrickStep& s = state.trick.steps[i];
    const int k = static_cast<int>(i);
    nlohmann::json step = {{"name", s.name},
                           {"allclose", s.allclose_to_v1},
                           {"verdict", TrickVerdict(s, k)},
                           {"max_diff", TrickMaxDiff(state, s, k)},
                           {"rounding_note", !TrickRoundingNote(s, k).empty()}};
    step["max_diff_value"] = std::isfinite(s.max_diff_from_v1) ? nlohmann::json(s.max_diff_from_v1)
                                                               : nlohmann::json(nullptr);
    steps.push_back(step);
  }
  j["trick"] = {{"batch", state.trick.batch}, {"steps", steps}, {"error", state.trick.error}};
  const CompareState& c = state.compare;
  nlohmann::json entropy_a = nlohmann::json::array(), entropy_b = nlohmann::json::array();
  for (const PeakStats& p : c.rows_a) entropy_a.push_back(p.entropy);
  for (const PeakStats& p : c.rows_b) entropy_b.push_back(p.entropy);
  j["compare"] = {
      {"mode", CompareModeName(c.mode)},
      {"stage", StageName(c.stage)},
      {"decoded", c.decoded},
      {"name_a", c.name_a},
      {"name_b", c.name_b},
      {"title", c.diff ? c.diff->title : ""},
      {"multiplier_b", c.multiplier_b},
      {"error", c.error},
      {"entropy_a", entropy_a},
      {"entropy_b", entropy_b},
      {"rows_sum_to_one_a", c.distributions_a},
      {"rows_sum_to_one_b", c.distributions_b},
      {"bug", c.bug_id},
      {"bug_wrong_lines", c.bug_id.empty() ? std::vector<std::string>() : c.bug_diff.wrong},
      {"bug_right_lines", c.bug_id.empty() ? std::vector<std::string>() : c.bug_diff.right}};
  j["code"] = {{"chars", state.code.text.size()}, {"error", state.code.error}};
  j["gradients"] = nlohmann::json::parse(GradientsJson(state));
  j["training"] = nlohmann::json::parse(TrainViewJson(state));
  RefreshInference(state);
  j["inference"] = nlohmann::json::parse(InferenceJson(state));
  if (state.microgpt) j["microgpt"] = nlohmann::json::parse(MicrogptViewJson(state));
  return j.dump(1) + "\n";
}

void RefreshVariance(AppState& state) {
  VarianceState& v = state.variance;
  if (!v.dirty) return;
  v.dirty = false;
  try {
    v.points = VarianceExperiment(v.dims, v.trials, v.seed, /*keep_samples=*/true);
    v.error.clear();
  } catch (const std::exception& e) {
    v.points.clear();
    v.error = e.what();
  }
}

namespace {

// What each central view computes after the frame's actions, in kCentralViews' order
// (state/central_views.h); nullptr: nothing (Heatmaps shows the engine's stages; Training and
// microgpt take their workers' progress as they draw).
struct ViewRefresh {
  CentralView view;
  void (*refresh)(AppState&);
};
constexpr ViewRefresh kRefreshView[] = {
    {CentralView::kHeatmaps, nullptr},
    {CentralView::kTrick, [](AppState& s) { RefreshTrick(s); }},
    {CentralView::kCompare, [](AppState& s) { RefreshCompare(s); }},
    {CentralView::kCode, RefreshCode},
    {CentralView::kGradients, RefreshGradients},
    {CentralView::kTraining, nullptr},
    {CentralView::kDecode, RefreshInference},
    {CentralView::kTiled, RefreshInference},
    {CentralView::kTokens, nullptr},
    {CentralView::kMicrogpt, nullptr},
};
constexpr bool RefreshRowsInOrder() {
  if (std::size(kRefreshView) != static_cast<size_t>(kCentralViewCount)) return false;
  for (int k = 0; k < kCentralViewCount; ++k)
    if (static_cast<int>(kRefreshView[k].view) != k) return false;
  return true;
}
static_assert(RefreshRowsInOrder(), "kRefreshView: one row per central view, in order");

}  // namespace

void RefreshVisibleViews(AppState& state) {
  if (auto refresh = kRefreshView[static_cast<int>(state.central)].refresh) refresh(state);
  RefreshVariance(state);
  RefreshPeaking(state);
}

}  // namespace attnlab::gui
