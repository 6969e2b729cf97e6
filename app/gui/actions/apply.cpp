// apply.cpp: the one place where actions change AppState (see apply.h; the actions are values
// of state/actions.h).
//
// [SECTION] Helpers: masks, selection, which stages changed
// [SECTION] Edits: one undoable action -> the edited scenario
// [SECTION] Running the engine
// [SECTION] Views: compare, code, the tour
// [SECTION] Apply: undo/redo, files, export, view
// [SECTION] Desktop: chosen files, replacing, the desktop's dialog, dropped files, recent files
#include "gui/actions/apply.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <new>
#include <thread>
#include <type_traits>
#include <utility>

#include "attnlab/base/file_io.h"
#include "attnlab/base/parallel.h"
#include "attnlab/figures/figure_meta.h"
#include "attnlab/figures/stage_view.h"
#include "attnlab/model/bugs.h"
#include "attnlab/model/presets.h"
#include "attnlab/notebook/notebook.h"
#include "attnlab/python/codegen.h"
#include "attnlab/python/torch_print.h"
#include "gui/actions/export.h"
#include "gui/actions/native_dialog.h"
#include "gui/actions/views.h"
#include "gui/state/actions.h"
#include "gui/state/app_state.h"
#include "gui/state/recent_files.h"
#include "gui/state/sections.h"
#include "gui/state/session.h"
#include "gui/state/tour.h"
#include "gui/widgets/stage_info.h"

namespace attnlab::gui {
namespace {

/// Runs state.scenario (below); `background`: a large run may go to the worker.
void Recompute(AppState& state, bool background = true);

// ---------------------------------------------------------------------------------------------
// [SECTION] Helpers: masks, selection, which stages changed

/// T of a scenario, or -1 when it does not validate.
int64_t TokenCount(const Scenario& s) {
  try {
    return ValidateScenario(s).T;
  } catch (const ScenarioError&) {
    return -1;
  }
}

/// The allowed matrix a custom mask starts from: the mask on screen when it has the right size
/// (so causal -> custom keeps the triangle), else everything allowed. A background run ends
/// first: it may be rewriting that mask.
MaskMatrix StartingMask(AppState& state, const Scenario& s) {
  const int64_t T = TokenCount(s);
  SettleRuns(state);
  const MaskMatrix& shown = ShownStages(state).mask;
  if (T > 0 && shown.rows() == T && shown.cols() == T) return shown;
  if (s.mask.allowed.rows() == T && s.mask.allowed.cols() == T) return s.mask.allowed;
  return MaskMatrix::Ones(std::max<int64_t>(T, 0), std::max<int64_t>(T, 0));
}

}  // namespace

void StartMaskKind(MaskSpec& m, MaskKind kind, int64_t T) {
  if (kind == m.kind) return;
  if (kind == MaskKind::kSlidingWindow) m.window = 3;
  if (kind == MaskKind::kPrefixLm) m.prefix = T / 2;
  if (kind == MaskKind::kDocument && static_cast<int64_t>(m.doc_ids.size()) != T) {
    m.doc_ids.assign(static_cast<size_t>(T), 0);
    for (int64_t i = T / 2; i < T; ++i) m.doc_ids[static_cast<size_t>(i)] = 1;
  }
  if ((kind == MaskKind::kAnd || kind == MaskKind::kOr) && m.kind != MaskKind::kAnd &&
      m.kind != MaskKind::kOr) {
    MaskSpec before = m;
    before.masked_rows = MaskedRows::kNan;
    before.fill = MaskFill::kNegInf;  // top-level only
    before.of.clear();
    MaskSpec second;
    second.kind = kind == MaskKind::kAnd ? MaskKind::kSlidingWindow : MaskKind::kPrefixLm;
    second.window = 3;
    second.prefix = T / 2;
    m.of = {before, second};
  }
  m.kind = kind;
}

namespace {

void ClampSelection(AppState& state) {
  const Shape& sh = ShownShape(state);
  state.head = std::clamp<int64_t>(state.head, 0, std::max<int64_t>(sh.H - 1, 0));
  state.batch = std::clamp<int64_t>(state.batch, 0, std::max<int64_t>(sh.B - 1, 0));
  state.row = std::clamp<int64_t>(state.row, 0, std::max<int64_t>(sh.T - 1, 0));
}

void MarkDirty(AppState& state, Stage stage) { state.heatmaps[StageIndex(stage)].dirty = true; }

/// After a head or batch change every per-head view shows another matrix.
void MarkSelectionDirty(AppState& state) {
  for (Stage s : AllStages()) {
    if (!RowOf(s).batched) continue;  // the mask: one for every head and batch entry
    MarkDirty(state, s);
    state.heatmaps[StageIndex(s)].prescan.reset();  // a scan of the other head's matrix
  }
  state.hover = state.hover_next = HoverCell{};
}

/// Marks the heatmaps whose stage the engine just recomputed, and says which groups ran.
void MarkRecomputed(AppState& state, const RecomputeCounts& a, const RecomputeCounts& b,
                    bool mask_changed) {
  std::string ran;
  int groups = 0;
  auto note = [&](bool changed, const char* name) {
    if (changed) ran += (ran.empty() ? "" : ", ") + std::string(name), ++groups;
  };
  note(a.input != b.input, "input");
  note(a.projections != b.projections, "projections");
  note(a.scores != b.scores, "scores");
  note(a.logits != b.logits, "logits");
  note(a.weights != b.weights, "weights");
  note(a.dropout != b.dropout, "dropout");
  note(a.context != b.context, "context");
  // All seven groups (a new input, preset or file): one word leaves the status bar its room.
  if (groups == 7) ran = "every stage";
  state.recomputed = ran;
  if (a.input != b.input) MarkDirty(state, Stage::kX);
  if (a.projections != b.projections)
    for (Stage s : {Stage::kQ, Stage::kK, Stage::kV, Stage::kQRot, Stage::kKRot})
      MarkDirty(state, s);
  if (a.scores != b.scores) MarkDirty(state, Stage::kScores);
  if (a.logits != b.logits) MarkDirty(state, Stage::kLogits);
  if (a.weights != b.weights) MarkDirty(state, Stage::kWeights), MarkDirty(state, Stage::kSink);
  if (a.weights != b.weights || a.dropout != b.dropout) MarkDirty(state, Stage::kWeightsDropped);
  if (a.context != b.context) MarkDirty(state, Stage::kContext);
  if (mask_changed) {
    state.mask_dirty = true;
    MarkDirty(state, Stage::kMask);
  }
}

void SetStatus(AppState& state, std::string message, bool is_error) {
  state.status = std::move(message);
  state.status_is_error = is_error;
  if (is_error) state.action_error = state.status;
}

/// File > Open Recent gains `path` (opened or saved); the list is written at once.
void RememberRecentFile(AppState& state, const std::string& path) {
  state.recent_files = WithRecentFile(state.recent_files, path);
  const std::string problem = SaveRecentFiles(state.recent_files);
  if (!problem.empty()) SetStatus(state, state.status + " (" + problem + ")", false);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Edits: one undoable action -> the edited scenario

template <class T>
constexpr bool kIsEdit = std::is_same_v<T, SetMultiplier> || std::is_same_v<T, SetSqrtDk> ||
                         std::is_same_v<T, SetMaskKind> || std::is_same_v<T, SetMaskCell> ||
                         std::is_same_v<T, SetNormalization> || std::is_same_v<T, SetDropout> ||
                         std::is_same_v<T, LoadPresetAction> || std::is_same_v<T, OpenScenario> ||
                         std::is_same_v<T, LoadBugAction> || std::is_same_v<T, EditScenario>;

/// The scenario after an edit. Errors: ScenarioError / FileError (a preset or file that cannot
/// be loaded), reported by the caller; nothing is changed then.
Scenario Edited(AppState& state, const Action& action) {
  Scenario s = state.scenario;
  std::visit(
      [&](const auto& a) {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, SetMultiplier>) {
          s.scaling.multiplier = a.value;
        } else if constexpr (std::is_same_v<T, SetSqrtDk>) {
          s.scaling.sqrt_dk = a.on;
        } else if constexpr (std::is_same_v<T, SetMaskKind>) {
          if (a.kind == MaskKind::kCustom && s.mask.kind != MaskKind::kCustom)
            s.mask.allowed = StartingMask(state, s);
          StartMaskKind(s.mask, a.kind, std::max<int64_t>(TokenCount(s), 1));
          if (a.kind != MaskKind::kCustom) s.mask.allowed = MaskMatrix();
        } else if constexpr (std::is_same_v<T, SetMaskCell>) {
          if (s.mask.kind != MaskKind::kCustom) {
            s.mask.allowed = StartingMask(state, s);
            s.mask.kind = MaskKind::kCustom;
          }
          if (a.row >= 0 && a.col >= 0 && a.row < s.mask.allowed.rows() &&
              a.col < s.mask.allowed.cols())
            s.mask.allowed(a.row, a.col) = a.allowed ? 1 : 0;
        } else if constexpr (std::is_same_v<T, SetNormalization>) {
          s.normalization = a.value;
        } else if constexpr (std::is_same_v<T, SetDropout>) {
          s.dropout.p = a.p;
        } else if constexpr (std::is_same_v<T, LoadPresetAction>) {
          s = LoadPreset(a.id);
        } else if constexpr (std::is_same_v<T, LoadBugAction>) {
          if (!FindBug(a.id)) throw ScenarioError("bug", "no bug \"" + a.id + "\" in the gallery");
          s = BugFix(a.id, LoadPreset(a.id));
        } else if constexpr (std::is_same_v<T, OpenScenario>) {
          const std::string path = ExpandPath(a.path);
          try {
            // A scenario, or a figure carrying one.
            s = ScenarioFromFileBytes(ReadScenarioFile(path));
          } catch (const ScenarioError& e) {
            // what() already starts with the field: "projections.heads: ..." once, after the path.
            throw std::runtime_error(path + ": " + e.what());
          }
        } else if constexpr (std::is_same_v<T, EditScenario>) {
          if (a.edit) a.edit(s);
        }
      },
      action);
  return s;
}

/// The memory a scenario holds, roughly: its matrices, mask and strings.
size_t ScenarioBytes(const Scenario& s) {
  size_t n = sizeof(Scenario) + s.title.size() + s.input.text.size();
  for (const Matrix& m : s.input.values) n += m.size() * sizeof(float);
  for (const std::string& t : s.input.tokens) n += t.size() + sizeof(std::string);
  for (const Matrix& w : s.projections.W) n += w.size() * sizeof(float);
  n += s.mask.allowed.size();
  return n;
}

/// Drops the oldest undo steps beyond History::kLimit steps or History::kByteLimit bytes
/// (the newest step always stays).
void TrimHistory(History& h) {
  size_t bytes = 0;
  for (const HistoryStep& s : h.undo) bytes += ScenarioBytes(s.scenario);
  size_t drop = 0;
  while (h.undo.size() - drop > 1 &&
         (h.undo.size() - drop > History::kLimit || bytes > History::kByteLimit))
    bytes -= ScenarioBytes(h.undo[drop++].scenario);
  h.undo.erase(h.undo.begin(), h.undo.begin() + static_cast<std::ptrdiff_t>(drop));
}

/// The registry's key stage of preset `id` (presets.h PresetInfo::key_stage), if it has one.
std::optional<Stage> PresetKeyStage(const std::string& id) {
  for (const PresetInfo& p : Presets())
    if (p.id == id && !p.key_stage.empty()) return ParseStage(p.key_stage);
  return std::nullopt;
}

/// The bug gallery's entry `id` pinned as the compare view's B beside `fix` (A), the view
/// switched to Compare.
void PinBug(AppState& state, const std::string& id, const Scenario& fix) {
  CompareState& c = state.compare;
  c.pinned = LoadPreset(id);
  c.pinned_name = id;
  ++c.pin_version;
  c.mode = CompareMode::kPinned;
  c.bug_id = id;
  const BugInfo* bug = FindBug(id);
  c.decoded = bug && bug->decode;
  if (const std::optional<Stage> key = PresetKeyStage(id)) c.stage = *key;  // the wrong stage
  // A decode bug's lines differ only in the decode loop: diff the loops, with the Decode
  // view's prefill (at most T) and chunk.
  const DecodeOptions decode{std::min(state.inference.prefill, TokenCount(fix)),
                             state.inference.chunk};
  try {
    c.bug_diff = DiffPrograms(fix, *c.pinned, c.decoded ? &decode : nullptr);
  } catch (const InferenceError&) {  // a loop the scenario cannot take: the programs' lines
    c.bug_diff = DiffPrograms(fix, *c.pinned);
  }
  state.central = CentralView::kCompare;
  SetStatus(state, "Bug gallery: " + id + " as B, its fix as A (Ctrl+Z undoes the fix)", false);
}

/// Applies an undoable action; returns true when the scenario changed.
bool ApplyEdit(AppState& state, const Action& action, const std::string& merge_key) {
  Scenario after;
  try {
    after = Edited(state, action);
  } catch (const std::exception& e) {
    SetStatus(state, e.what(), true);
    return false;
  }
  const std::string preset_before = state.preset_id;
  // Loading a preset or a file always counts (it also names what is shown).
  if (const auto* p = std::get_if<LoadPresetAction>(&action)) {
    state.pick_default_row = true;
    state.preset_id = p->id;
    state.preset_scenario = after;
    if (NeedsModernAttention(after)) state.modern_open = true;  // what makes its point shows
    // The stage that makes the preset's point in focus (the tour places its own maps).
    if (!state.tour.active) state.focus = PresetKeyStage(p->id);
    SetStatus(state, "Loaded preset " + p->id, false);
  } else if (const auto* bug = std::get_if<LoadBugAction>(&action)) {
    state.pick_default_row = true;
    state.preset_id.clear();  // A is the fix: a preset with one setting changed
    PinBug(state, bug->id, after);
  } else if (const auto* o = std::get_if<OpenScenario>(&action)) {
    state.pick_default_row = true;
    const std::string opened = AbsolutePath(ExpandPath(o->path));
    const std::string ext = std::filesystem::path(opened).extension().string();
    const bool figure = ext == ".png" || ext == ".svg" || ext == ".pdf";
    state.scenario_path = figure ? "" : opened;  // Save must not write JSON over a figure
    state.preset_id.clear();
    SetStatus(state, "Opened " + opened, false);
    RememberRecentFile(state, opened);
    if (figure) ApplyFigureFileView(state, opened);  // its stage, head, batch, colours
  }
  if (after == state.scenario) return false;

  History& h = state.history;
  const bool merge = !merge_key.empty() && merge_key == h.open_merge_key && !h.undo.empty();
  if (!merge) {
    h.undo.push_back({state.scenario, preset_before});
    TrimHistory(h);
  }
  h.redo.clear();
  h.open_merge_key = merge_key;
  state.scenario = std::move(after);
  return true;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Running the engine

/// What follows a successful run of `ran`: it becomes the shown scenario, and the heatmaps of
/// the stages it recomputed are marked for upload.
void AfterRun(AppState& state, const Scenario& ran, const RecomputeCounts& before,
              bool had_result) {
  state.error.clear();
  ++state.shown_version;
  const Stages& st = ShownStages(state);
  state.shown_shape = st.shape;
  if (!had_result || before.projections != state.engine.counts().projections) state.shown_W = st.W;
  state.shown_counts = state.engine.counts();
  if (state.token_labels_run != state.shown_counts.input) {  // both axes' labels, once per input
    state.token_labels = TokenLabels(st.tokens);
    state.token_labels_run = state.shown_counts.input;
    state.font_codepoints = CodepointsBeyondBase(state.token_labels);  // CJK, emoji, ...
    if (state.font_codepoints != state.fonts.codepoints) state.fonts_dirty = true;
  }
  const bool mask_changed =
      !had_result || !SameMask(state.shown.mask, ran.mask) || state.mask_rows != st.mask.rows();
  state.shown = ran;
  // Scans a background run made belong to its own stages only (it sets them after this).
  for (HeatmapSlot& slot : state.heatmaps) slot.prescan.reset();
  MarkRecomputed(state, before, state.engine.counts(), mask_changed);
  if (state.pick_default_row) {
    // The row a lesson starts from: the last query of a causal mask (it sees every key),
    // else query 1 (Raschka's "journey").
    state.row = ran.mask.kind == MaskKind::kCausal ? st.shape.T - 1 : 1;
    state.pick_default_row = false;
  }
  if (mask_changed) {
    state.mask_rows = st.mask.rows();
    state.any_masked = (st.mask.array() == 0).any();
  }
  ClampSelection(state);
}

/// Runs `scenario` on `engine`; "" when it ran, else why not (the last good stages stay: the
/// engine validates before it touches them).
std::string RunEngine(Engine& engine, const Scenario& scenario) {
  try {
    engine.Run(scenario);
  } catch (const std::bad_alloc&) {
    return "out of memory: the stages of this scenario do not fit; try a smaller T or d";
  } catch (const std::exception& e) {  // ScenarioError included
    return e.what();
  }
  return "";
}

/// Whether state.scenario may run in the background after `base` (the scenario whose stages
/// the engine holds, or will hold when the running worker ends): same input, projections,
/// dropout and dtype (float32), so no stage changes size, and enough cells to be worth it.
bool RunsInBackground(const AppState& state, const Scenario& base) {
  if (!HasShownRun(state) || (state.synchronous_runs && !state.script_drag)) return false;
  const Scenario& s = state.scenario;
  if (s.dtype != Dtype::kFloat32 || base.dtype != Dtype::kFloat32) return false;
  if (!SameInput(s.input, base.input) || !SameProjections(s.projections, base.projections))
    return false;
  if (s.dropout.p != base.dropout.p || s.dropout.seed != base.dropout.seed) return false;
  const Shape& sh = ShownShape(state);
  return sh.B * sh.H * sh.T * sh.T >= kBackgroundCells;
}

/// Starts the worker on state.scenario (RunsInBackground holds, none is running).
void StartBackgroundRun(AppState& state) {
  BackgroundRun& bg = state.background;
  bg.scenario = state.scenario;
  bg.before = state.engine.counts();
  bg.head = state.head;
  bg.batch = state.batch;
  bg.scan_of = {};
  bg.scans = {};
  for (Stage stage : {Stage::kLogits, Stage::kWeights, Stage::kWeightsDropped})
    bg.scan_of[StageIndex(stage)] = StageMatrix(state, stage);
  bg.error.clear();
  bg.done.store(false);
  bg.running = true;
  bg.worker = std::thread([&bg, &engine = state.engine] {
    // One core stays with the window's frames (its drawing and Mesa's software rendering).
    if (ThreadCount() > 1) LimitThreadsOfThisThread(ThreadCount() - 1);
    bg.error = RunEngine(engine, bg.scenario);
    if (bg.error.empty()) {
      const RecomputeCounts& after = engine.counts();
      const bool changed[] = {
          after.logits != bg.before.logits, after.weights != bg.before.weights,
          after.weights != bg.before.weights || after.dropout != bg.before.dropout};
      const Stage stages[] = {Stage::kLogits, Stage::kWeights, Stage::kWeightsDropped};
      for (int k = 0; k < 3; ++k) {
        const int i = StageIndex(stages[k]);
        if (changed[k] && bg.scan_of[i] && bg.scan_of[i]->size() > 0)
          bg.scans[i] = ScanStage(stages[k], *bg.scan_of[i]);
      }
    }
    bg.done.store(true);
  });
}

}  // namespace

void FinishBackgroundRun(AppState& state, bool wait) {
  BackgroundRun& bg = state.background;
  if (!bg.running || (!wait && !bg.done.load())) return;
  bg.worker.join();
  bg.running = false;
  ++bg.completed;
  if (!bg.error.empty()) {
    state.error = bg.error;  // the engine validates first: the last good stages are intact
  } else {
    AfterRun(state, bg.scenario, bg.before, true);
    if (bg.head == state.head && bg.batch == state.batch)
      for (int i = 0; i < kStageCount; ++i)
        if (bg.scans[static_cast<size_t>(i)])
          state.heatmaps[i].prescan = bg.scans[static_cast<size_t>(i)];
  }
  // Edited while it ran: the latest scenario runs after this frame has drawn the result (a
  // run started now would overwrite the stages while they are being uploaded).
  bg.rerun = !(state.scenario == bg.scenario);
}

void SettleRuns(AppState& state) {
  FinishBackgroundRun(state, true);
  if (!std::exchange(state.background.rerun, false)) return;
  Recompute(state, false);
}

namespace {

/// Runs the engine on state.scenario. On failure the last good stages stay on screen and
/// state.error says why. Large runs that keep every stage's size go to the background
/// (BackgroundRun); while one runs, a newer scenario waits for it and runs next.
void Recompute(AppState& state, bool background) {
  BackgroundRun& bg = state.background;
  if (bg.running) {
    // The latest scenario runs when the worker ends; a change it cannot take waits for it.
    if (background && RunsInBackground(state, bg.scenario)) return;
    FinishBackgroundRun(state, true);
  }
  bg.rerun = false;
  if (background && RunsInBackground(state, state.shown)) {
    StartBackgroundRun(state);
    return;
  }
  const RecomputeCounts before = state.engine.counts();
  const bool had_result = HasShownRun(state);
  state.error = RunEngine(state.engine, state.scenario);
  if (state.error.empty()) AfterRun(state, state.scenario, before, had_result);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Views: compare, code, the tour

/// Enters the tour's current step: the heatmaps, and the step's preset unless it is already
/// the one on screen (so edits made during the previous step on the same preset stay). Returns
/// true when the scenario changed.
bool EnterTourStep(AppState& state) {
  const TourStep& step = TourSteps()[static_cast<size_t>(state.tour.step)];
  state.central = CentralView::kHeatmaps;
  state.tour.task_done = false;
  bool changed = false;
  if (step.preset && state.preset_id != step.preset)
    changed = ApplyEdit(state, LoadPresetAction{step.preset}, "");
  SetStatus(state,
            "Guided tour, step " + std::to_string(state.tour.step + 1) + " of " +
                std::to_string(TourSteps().size()) + ": " + step.title,
            false);
  return changed;
}

/// Ends the tour back in the learner's session (TourState::before): the tour's undo steps go,
/// and one step takes their place, so that Ctrl+Z once brings back the tour's last scenario.
/// Returns true when the scenario changed.
bool EndTour(AppState& state) {
  TourState& t = state.tour;
  t.active = false;
  t.moved = false;
  if (!t.before) return false;
  HistoryStep learner = std::move(*t.before);
  t.before.reset();
  History& h = state.history;
  if (h.undo.size() > t.undo_depth) h.undo.resize(t.undo_depth);
  h.redo.clear();
  h.open_merge_key.clear();
  if (learner.scenario == state.scenario && learner.preset_id == state.preset_id) return false;
  h.undo.push_back({state.scenario, state.preset_id});  // the whole tour: one step
  TrimHistory(h);
  state.scenario = std::move(learner.scenario);
  state.preset_id = std::move(learner.preset_id);
  if (!state.preset_id.empty() && IsPreset(state.preset_id))
    state.preset_scenario = LoadPreset(state.preset_id);
  state.focus.reset();
  return true;
}

/// Moves through the tour; returns true when the scenario changed.
bool ApplyTour(AppState& state, TourCommand::Kind kind) {
  TourState& t = state.tour;
  const int last = static_cast<int>(TourSteps().size()) - 1;
  switch (kind) {
    case TourCommand::kStart:
      if (!t.active) {  // the session the tour ends back in
        t.before = HistoryStep{state.scenario, state.preset_id};
        t.undo_depth = state.history.undo.size();
      }
      t.active = true;
      t.seen = true;
      t.step = 0;
      return EnterTourStep(state);
    case TourCommand::kNext:
      if (!t.active) return false;
      if (t.step >= last) {
        SetStatus(state,
                  "Tour finished: your session is back (Ctrl+Z: the tour's last example). "
                  "Help \xE2\x96\xB8 Guided tour (F1) shows it again.",
                  false);
        return EndTour(state);
      }
      ++t.step;
      return EnterTourStep(state);
    case TourCommand::kBack:
      if (!t.active || t.step == 0) return false;
      --t.step;
      return EnterTourStep(state);
    case TourCommand::kSkip:
      if (!t.active) return false;
      SetStatus(state,
                "Tour skipped: your session is back (Ctrl+Z: the tour's last example). Help "
                "\xE2\x96\xB8 Guided tour (F1) shows it again.",
                false);
      return EndTour(state);
  }
  return false;
}

void CopyCodeToClipboard(AppState& state) {
  RefreshCode(state);
  if (state.code.text.empty()) {
    SetStatus(state, "Nothing copied: " + state.code.error, true);
    return;
  }
  ImGui::SetClipboardText(state.code.text.c_str());
  const auto lines = std::count(state.code.text.begin(), state.code.text.end(), '\n');
  SetStatus(state,
            "Copied the PyTorch program (" + std::to_string(lines) +
                " lines) to the clipboard: paste it into Python with PyTorch installed",
            false);
}

/// "raschka-journey, x2.5" or "scenario, x1": what a pinned snapshot was.
std::string SnapshotName(const AppState& state) {
  std::string name = state.preset_id.empty() ? "scenario" : state.preset_id;
  if (state.preset_id.size() && !(state.shown == state.preset_scenario)) name += " (edited)";
  char m[32];
  std::snprintf(m, sizeof m, ", \xC3\x97%.3g", state.shown.scaling.multiplier);
  return name + m;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Apply: undo/redo, files, export, view

// One function per action: Do(state, action) applies it and returns true when the scenario
// changed (edits and undo/redo are handled before, with their merge key).

bool DoUndoRedo(AppState& state, bool undo) {
  auto& from = undo ? state.history.undo : state.history.redo;
  auto& to = undo ? state.history.redo : state.history.undo;
  CloseUndoStep(state);
  if (from.empty()) {
    SetStatus(state, undo ? "Nothing to undo" : "Nothing to redo", false);
    return false;
  }
  to.push_back({std::move(state.scenario), state.preset_id});
  state.scenario = std::move(from.back().scenario);
  if (from.back().preset_id != state.preset_id) {  // the step switched presets: name it again
    state.preset_id = from.back().preset_id;
    if (!state.preset_id.empty()) state.preset_scenario = LoadPreset(state.preset_id);
  }
  from.pop_back();
  SetStatus(state, undo ? "Undone" : "Redone", false);
  return true;
}

bool Do(AppState& state, const SaveScenario& a) {
  if (!state.error.empty()) {
    SetStatus(state, "Not saved: the scenario does not run (" + state.error + ")", true);
    return false;
  }
  const std::string path = ExpandPath(a.path);
  try {
    WriteFileAtomic(path, WriteScenario(state.scenario));
    state.scenario_path = AbsolutePath(path);
    SetStatus(state, "Saved scenario to " + state.scenario_path, false);
    RememberRecentFile(state, state.scenario_path);
  } catch (const std::exception& e) {
    SetStatus(state, std::string("Not saved: ") + e.what(), true);
  }
  return false;
}

/// `name` in the folder of the last export (AppState::export_folder), or as it is (relative to
/// the working folder) before the first export or when that folder is gone.
std::string InExportFolder(const AppState& state, const std::string& name) {
  std::error_code ec;
  if (state.export_folder.empty() || !std::filesystem::is_directory(state.export_folder, ec))
    return name;
  return (std::filesystem::path(state.export_folder) / name).string();
}

bool Do(AppState& state, const OpenDialog& a) {
  DialogState d{a.kind, true, "", StageIndex(a.stage)};
  switch (a.kind) {
    case DialogKind::kOpen:
      d.path = state.scenario_path;
      break;
    case DialogKind::kSaveAs:
      // The scenario file type's own extension (the MIME type
      // application/x-attention-lab-scenario), named after the preset on screen.
      d.path = !state.scenario_path.empty()
                   ? state.scenario_path
                   : (state.preset_id.empty() ? std::string("scenario") : state.preset_id) +
                         ".attn.json";
      break;
    case DialogKind::kExport:  // the dialog keeps the name in step with its choices
      d.path = InExportFolder(state, state.export_choices.stages == ExportStages::kPipeline
                                         ? "pipeline.png"
                                     : state.export_choices.stages == ExportStages::kChosen
                                         ? "stages.png"
                                         : DefaultExportName(state, a.stage));
      d.proposed = std::filesystem::path(d.path).stem().string();
      break;
    case DialogKind::kExportAll:
      d.path = "attention-figures";
      break;
    case DialogKind::kExportCompare:
      d.path = InExportFolder(state, DefaultCompareExportName(state, a.map));
      d.stage = static_cast<int>(a.map);
      break;
    case DialogKind::kSaveNotebook:
      d.path = "attention-lab.ipynb";
      break;
    case DialogKind::kExportStep:
      d.path = InExportFolder(state, DefaultStepExportName(state));
      break;
    case DialogKind::kNone:
    case DialogKind::kReplace:
      d.just_opened = false;
      break;
  }
  const std::string tool = NativeDialog::Tool(state.scripted);
  if (d.just_opened && !tool.empty()) {
    auto native = std::make_shared<NativeDialog>();
    if (native->Start(tool, d.kind, AbsolutePath(ExpandPath(d.path)))) {
      d.native = std::move(native);
      d.just_opened = false;  // the typed dialog stays closed while the desktop's is up
    }
  }
  state.dialog = d;
  return false;
}

// The Code view's program (of the scenario on screen) as a Jupyter notebook, written atomically.
bool Do(AppState& state, const SaveNotebook& a) {
  try {
    RefreshCode(state);  // the Code view's program: the scenario's or the training loop
    if (state.code.text.empty()) throw std::runtime_error(state.code.error);
    // The scenario's program with its outputs (values and heatmap); the training loop's alone.
    // The shown run's stages when no worker writes them (no second run on the UI thread).
    const Stages* stages = HasShownRun(state) ? ReadableStages(state) : nullptr;
    WriteFileAtomic(ExpandPath(a.path), state.code.training ? ProgramAsNotebook(state.code.text)
                                        : stages            ? ScenarioNotebook(state.shown, *stages)
                                                            : ScenarioNotebook(state.shown));
    SetStatus(state, "Saved the program as a notebook to " + AbsolutePath(ExpandPath(a.path)),
              false);
  } catch (const std::exception& e) {
    SetStatus(state, std::string("Notebook not saved: ") + e.what(), true);
  }
  return false;
}

bool Do(AppState& state, const Save&) {
  if (state.scenario_path.empty()) return Do(state, OpenDialog{DialogKind::kSaveAs});
  return Do(state, SaveScenario{state.scenario_path});
}

bool Report(AppState& state, bool ok, const std::string& message) {
  SetStatus(state, message, !ok);
  return false;
}

bool Do(AppState& state, const ExportStage& a) {
  std::string message;
  return Report(state, ExportOneStage(state, a.stage, ExpandPath(a.path), &message), message);
}

bool Do(AppState& state, const ExportAllStages& a) {
  std::string message;
  return Report(state, ExportEveryStage(state, ExpandPath(a.dir), &message), message);
}

bool Do(AppState& state, const ExportCompare& a) {
  std::string message;
  return Report(state, ExportCompareMap(state, a.map, ExpandPath(a.path), &message), message);
}

bool Do(AppState& state, const ExportStepFigure& a) {
  std::string message;
  return Report(state, ExportInferenceStep(state, ExpandPath(a.path), &message), message);
}

// Another head or batch entry on screen: the stage heatmaps upload their matrices again.
bool Select(AppState& state, int64_t& field, int64_t value) {
  if (value == field) return false;
  field = value;
  ClampSelection(state);
  MarkSelectionDirty(state);
  return false;
}

bool Do(AppState& state, const SelectHead& a) { return Select(state, state.head, a.head); }

bool Do(AppState& state, const SelectBatch& a) { return Select(state, state.batch, a.batch); }

bool Do(AppState& state, const SelectRow& a) {
  state.row = a.row;
  ClampSelection(state);
  return false;
}

// The heatmaps' specs follow these on the next draw (EnsureSpec compares the options).
bool Do(AppState& state, const SetLossKey& a) {
  state.gradients.key = a.key;
  return false;
}

bool Do(AppState& state, const SetColormap& a) {
  (a.diverging ? state.view.diverging_colormap : state.view.sequential_colormap) = a.index;
  return false;
}

bool Do(AppState& state, const SetWeightsRange& a) {
  state.view.weights_range = a.mode;
  return false;
}

bool Do(AppState& state, const SetValuesMode& a) {
  state.view.values = a.mode;
  return false;
}

bool Do(AppState& state, const SetEveryHead& a) {
  state.view.every_head = a.on;
  return false;
}

bool Do(AppState& state, const SetSectionOpen& a) {
  bool& open = a.which == SetSectionOpen::kModern ? state.modern_open : state.plots_open;
  if (open == a.open) return false;
  open = a.open;
  SaveSettings(CurrentSettings(state));
  return false;
}

bool Do(AppState& state, const SetZoom& a) {
  const float z = std::round(ClampZoom(a.zoom) * 10.0f) / 10.0f;
  if (z == state.zoom) return false;
  state.zoom = z;
  state.fonts_dirty = true;
  SaveSettings(CurrentSettings(state));
  char text[64];
  std::snprintf(text, sizeof text, "Zoom %d%% (Ctrl+0 resets it)",
                static_cast<int>(z * 100 + 0.5f));
  SetStatus(state, text, false);
  return false;
}

bool Do(AppState& state, const SetFocus& a) {
  state.focus = a.stage;
  return false;
}

bool Do(AppState& state, const SetView& a) {
  state.central = a.view;
  return false;
}

bool Do(AppState& state, const CopyCode&) {
  CopyCodeToClipboard(state);
  return false;
}

bool Do(AppState& state, const CheckOutput& a) {
  CheckOutputState& c = state.check_output;
  c.open = a.kind != CheckOutput::kClose;
  if (a.kind != CheckOutput::kCheck) return false;
  c.read.reset();
  c.result.reset();
  c.error.clear();
  try {
    c.read = ParseTensorText(c.text);
    c.result = MatchPasted(state.shown, *c.read);
  } catch (const std::exception& e) {  // TensorTextError (line, column), or the scenario's
    c.error = e.what();
  }
  return false;
}

bool Do(AppState& state, const CopyStagePrint& a) {
  const Stages* st = HasShownRun(state) ? ReadableStages(state) : nullptr;
  const std::optional<PrintedStage> p =
      st ? PrintStage(*st, StageName(a.stage)) : std::optional<PrintedStage>();
  if (!p || !p->present) {
    SetStatus(state, std::string("Nothing copied: this scenario has no ") + StageName(a.stage),
              true);
    return false;
  }
  ImGui::SetClipboardText(p->printed.c_str());
  const bool numpy = st->generator == Generator::kNumpy;
  SetStatus(state,
            std::string("Copied ") + StageName(a.stage) + " as " +
                (numpy ? "NumPy's print(array)" : "PyTorch's print(tensor)") +
                " writes it: paste it beside your notebook's output",
            false);
  return false;
}

bool Do(AppState& state, const SetCompare& a) {
  CompareState& c = state.compare;
  c.mode = a.mode;
  c.bug_id.clear();
  if (a.multiplier_b > 0) c.multiplier_b = a.multiplier_b;
  if (a.head_a >= 0) c.head_a = a.head_a;
  if (a.head_b >= 0) c.head_b = a.head_b;
  return false;
}

bool Do(AppState& state, const PinCompare&) {
  CompareState& c = state.compare;
  c.pinned = state.shown;
  c.pinned_name = SnapshotName(state);
  c.bug_id.clear();
  ++c.pin_version;
  c.mode = CompareMode::kPinned;
  SetStatus(state, "Pinned " + c.pinned_name + " as B: change anything, A follows", false);
  return false;
}

bool Do(AppState& state, const SetCompareStage& a) {
  state.compare.stage = a.stage;
  return false;
}

bool Do(AppState& state, const SetCompareDecoded& a) {
  state.compare.decoded = a.on;
  return false;
}

bool Do(AppState& state, const SetVarianceSeed& a) {
  state.variance.seed = a.seed;
  state.variance.dirty = true;
  return false;
}

bool Do(AppState& state, const SetVarianceTrials& a) {
  state.variance.trials = std::clamp<int64_t>(a.trials, 100, 50000);
  state.variance.dirty = true;
  return false;
}

bool Do(AppState& state, const SetVarianceHistogramDim& a) {
  const int n = static_cast<int>(state.variance.dims.size());
  state.variance.histogram_dim = std::clamp(a.index, 0, std::max(n - 1, 0));
  return false;
}

bool Do(AppState& state, const TourCommand& a) { return ApplyTour(state, a.kind); }

bool Do(AppState& state, const Quit&) {
  state.quit_requested = true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Desktop: chosen files, replacing, the desktop's dialog, dropped files, recent files

/// What ChooseFile does with the path (the dialog already closed).
bool WriteOrOpenChosen(AppState& state, const ChooseFile& a) {
  switch (a.kind) {
    case DialogKind::kOpen:
      return ApplyEdit(state, OpenScenario{a.path}, "");
    case DialogKind::kSaveAs:
    case DialogKind::kSaveNotebook: {
      std::error_code ec;
      if (!a.confirmed && std::filesystem::exists(ExpandPath(a.path), ec)) {
        state.dialog = DialogState{DialogKind::kReplace, true, a.path};
        state.dialog.replacing = a.kind;
        return false;
      }
      if (a.kind == DialogKind::kSaveNotebook) return Do(state, SaveNotebook{a.path});
      return Do(state, SaveScenario{a.path});
    }
    case DialogKind::kExport: {  // with the dialog's format, stages, size and colorbars
      std::string message;
      return Report(state, ExportWithChoices(state, StageAt(a.stage), ExpandPath(a.path), &message),
                    message);
    }
    case DialogKind::kExportAll:
      return Do(state, ExportAllStages{a.path});
    case DialogKind::kExportCompare:
      return Do(state, ExportCompare{static_cast<CompareMap>(a.stage), a.path});
    case DialogKind::kExportStep:
      return Do(state, ExportStepFigure{a.path});
    case DialogKind::kNone:
    case DialogKind::kReplace:
      break;
  }
  return false;
}

/// Whether a dialog kind writes a figure (its folder is remembered for the next export).
bool IsExport(DialogKind kind) {
  return kind == DialogKind::kExport || kind == DialogKind::kExportAll ||
         kind == DialogKind::kExportCompare || kind == DialogKind::kExportStep;
}

bool Do(AppState& state, const ChooseFile& a) {
  DialogState typed = std::move(state.dialog);  // the typed dialog's path, stage, choices
  state.dialog = DialogState{};
  state.action_error.clear();
  const bool changed = WriteOrOpenChosen(state, a);
  if (!state.action_error.empty() && state.dialog.kind == DialogKind::kNone &&
      a.kind != DialogKind::kOpen && !typed.native) {
    // A path that cannot be written: the dialog comes back with the whole reason, the path
    // as typed, so that one character can be mended.
    typed.kind = a.kind;
    typed.just_opened = true;
    typed.path = a.path;
    typed.error = state.action_error;
    typed.path_replaced = true;  // a field still focused reloads the path
    typed.native.reset();
    state.dialog = std::move(typed);
  } else if (state.action_error.empty() && IsExport(a.kind)) {
    const std::filesystem::path written(AbsolutePath(ExpandPath(a.path)));
    const std::string folder = written.parent_path().string();
    if (folder != state.export_folder) {
      state.export_folder = folder;
      SaveSettings(CurrentSettings(state));
    }
  }
  return changed;
}

bool Do(AppState& state, const ConfirmReplace& a) {
  const std::string path = state.dialog.path;
  const bool notebook = state.dialog.replacing == DialogKind::kSaveNotebook;
  state.dialog = DialogState{};
  if (a.replace && !path.empty() && notebook) return Do(state, SaveNotebook{path});
  if (a.replace && !path.empty()) return Do(state, SaveScenario{path});
  SetStatus(state, "Not saved: " + path + " kept as it was", false);
  return false;
}

bool Do(AppState& state, const NativeDialogEnded& a) {
  DialogState& d = state.dialog;
  d.native.reset();
  if (a.failed) {  // the desktop's dialog did not work: the typed one instead
    d.just_opened = true;
    return false;
  }
  const ChooseFile chosen{d.kind, a.path, d.stage, true};
  d = DialogState{};
  return a.chosen ? Do(state, chosen) : false;
}

bool Do(AppState& state, const DropFiles& a) {
  for (const std::string& path : a.paths) {  // a scenario, or a figure carrying one
    const std::string ext = std::filesystem::path(path).extension().string();
    if (ext == ".json" || ext == ".png" || ext == ".svg" || ext == ".pdf")
      return ApplyEdit(state, OpenScenario{path}, "");
  }
  if (!a.paths.empty())
    SetStatus(state, "Not opened: " + a.paths[0] + " is not a scenario (.json) or a figure", true);
  return false;
}

bool Do(AppState& state, const SetExportChoices& a) {
  state.export_choices = a.choices;
  return false;
}

bool Do(AppState& state, const ClearRecentFiles&) {
  state.recent_files.clear();
  const std::string problem = SaveRecentFiles(state.recent_files);
  SetStatus(state, problem.empty() ? "Recent files cleared" : problem, !problem.empty());
  return false;
}

/// Applies one action; returns true when the scenario changed.
bool Apply(AppState& state, const PendingAction& pending) {
  return std::visit(
      [&](const auto& a) -> bool {
        using T = std::decay_t<decltype(a)>;
        if constexpr (kIsEdit<T>)
          return ApplyEdit(state, pending.action, pending.merge_key);
        else if constexpr (std::is_same_v<T, Undo> || std::is_same_v<T, Redo>)
          return DoUndoRedo(state, std::is_same_v<T, Undo>);
        else
          return Do(state, a);
      },
      pending.action);
}

}  // namespace

void CloseUndoStep(AppState& state) { state.history.open_merge_key.clear(); }

namespace {

/// Applies the queued actions in order, then reruns the engine if the scenario changed.
void ApplyQueue(AppState& state) {
  if (state.pending.empty()) return;
  // Actions may emit nothing themselves, but take the queue first all the same.
  std::vector<PendingAction> queue;
  queue.swap(state.pending);
  bool changed = false;
  for (const PendingAction& p : queue) {
    // An undo, redo or file action sees the stages of the edits before it.
    const bool needs_stages =
        !std::visit([](const auto& a) { return kIsEdit<std::decay_t<decltype(a)>>; }, p.action);
    // They also need the stages whole and up to date: a background run ends first.
    if (needs_stages) SettleRuns(state);
    if (needs_stages && changed) {
      Recompute(state, false);
      changed = false;
    }
    changed |= Apply(state, p);
  }
  if (changed) Recompute(state);
}

}  // namespace

void ApplyPendingActions(AppState& state) {
  // The scenario edited while the last background run went on (its result is on screen now).
  if (!state.background.running && std::exchange(state.background.rerun, false)) Recompute(state);
  ApplyQueue(state);
  RefreshVisibleViews(state);
}

void StartScenario(AppState& state, const Scenario& scenario, const std::string& preset_id) {
  state.pick_default_row = true;
  state.scenario = scenario;
  state.preset_id = preset_id;
  state.preset_scenario = scenario;
  Recompute(state);
}

}  // namespace attnlab::gui
