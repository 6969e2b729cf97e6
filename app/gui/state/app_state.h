// app_state.h: everything the window knows, in one struct passed by reference to every panel
// (hello_imgui's AppState pattern: no function-static state anywhere in the GUI).
//
// Data flow: panels read AppState and Emit() actions (actions.h); ApplyPendingActions applies
// them once per frame, keeps the undo history and reruns the one persistent Engine, which
// recomputes only the stages after what changed. The heatmaps panel re-uploads only the
// textures whose stage was recomputed (HeatmapSlot::dirty).
//
// The central area shows one of four views (CentralView): the six heatmaps, the averaging
// trick, two scenarios compared, or the PyTorch code. Each view keeps a cache of what it shows,
// refreshed only when the scenario on screen changes (AppState::shown_version).
//
// Legend: B batch, H heads, T tokens, d_in input width, d_out projection width, dh = d_k.
#pragma once

#include <imgui.h>

#include <array>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "attnlab/figures/colormap.h"
#include "attnlab/figures/figure.h"
#include "attnlab/figures/heatmap_spec.h"
#include "attnlab/figures/token_view.h"
#include "attnlab/lessons/experiments.h"
#include "attnlab/lessons/train.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/scenario.h"
#include "attnlab/model/stats.h"
#include "attnlab/python/codegen.h"
#include "attnlab/python/match.h"
#include "gui/gfx/heatmap_gpu.h"
#include "gui/gfx/script_fonts.h"
#include "gui/state/actions.h"
#include "gui/state/gradient_state.h"

namespace attnlab::gui {

class NativeDialog;  // native_dialog.h

/// The heatmaps are indexed by stages.h's Stage (kStageCount of them, the rows of kStageTable).
inline int StageIndex(Stage s) { return static_cast<int>(s); }
inline Stage StageAt(int index) { return static_cast<Stage>(index); }

/// One heatmap on screen: its GPU textures, the scan of the uploaded matrix and the
/// presentation the core decides for it (heatmap_spec.h): the window draws only from `spec`.
/// A heatmap's mouse-wheel zoom and drag-pan: how many times larger the cells are than when the
/// whole matrix shows (1: all of it), and the top-left cell shown (fractional while dragged).
struct MapZoom {
  float factor = 1.0f;
  float row0 = 0.0f, col0 = 0.0f;
  bool operator==(const MapZoom&) const = default;
};

/// The cells [row0, row0 + rows) x [col0, col0 + cols) of a matrix.
struct CellWindow {
  int row0 = 0, col0 = 0, rows = 0, cols = 0;
};

struct HeatmapSlot {
  HeatmapTexture gpu;
  MapZoom zoom;       ///< kept while the matrix keeps its size; reset by a new size
  CellWindow shown;   ///< the cells drawn last frame (all of them unless zoomed)
  bool dirty = true;  ///< the stage matrix changed: upload again before drawing
  ValueScan scan;     ///< ScanValues of the uploaded matrix
  /// ScanStage of the matrix about to be uploaded, made by a background run on its worker
  /// (UploadDirty uses it instead of scanning the matrix again), else empty.
  std::optional<ValueScan> prescan;
  bool any_masked = false;           ///< some cell of the uploaded matrix is masked
  HeatmapContent content;            ///< what it shows (title, labels, signed or not)
  HeatmapSpec spec;                  ///< content + colours under spec_options (MakeHeatmapSpec)
  PresentationOptions spec_options;  ///< the options spec was made with
  bool has_spec = false;
  ImVec2 image_min{0, 0}, image_max{0, 0};  ///< where the image was drawn last frame
  bool thumbnail = false;                   ///< drawn last frame as a thumbnail (no labels)
  bool scrolls = false;  ///< drawn last frame on a canvas that scrolls (it may be out of view)
  bool visible = false;  ///< its whole image was inside the window's clip rect last frame
  std::vector<std::string> printed;        ///< last frame's cell texts, row by row (--layout)
  float row_label_w = 0, col_label_w = 0;  ///< widest labels, measured once per input run
  int labels_input_run = -1, labels_rows = 0, labels_cols = 0;
  float labels_font_size = 0;  ///< the zoom changes it: measure again
};

/// The cell under the mouse (any heatmap), or none.
struct HoverCell {
  bool active = false;
  Stage stage = Stage::kWeights;
  int64_t row = -1, col = -1;
};

/// One undo step: the whole scenario (small next to its stages) and the preset it was shown
/// as, so that undoing a preset switch names the preset again.
struct HistoryStep {
  Scenario scenario;
  std::string preset_id;
};

/// Undo and redo stacks.
struct History {
  std::vector<HistoryStep> undo, redo;
  /// Edits carrying this merge key fold into the last undo step (a slider drag, painting the
  /// mask, typing in a field); cleared when the mouse and keyboard let go.
  std::string open_merge_key;
  static constexpr size_t kLimit = 500;
  /// The undo stack also stops at this many bytes (ScenarioBytes): 500 copies of a custom mask
  /// at T = 2048 would be about 2 GiB. The oldest steps go first; the last one always stays.
  static constexpr size_t kByteLimit = size_t{256} << 20;
};

/// Custom-mask painting by dragging over heatmap cells.
struct MaskPaint {
  bool active = false;
  bool value = false;  ///< what the drag paints: allowed (true) or masked (false)
};

/// How the heatmaps are coloured and labelled.
struct ViewOptions {
  int sequential_colormap = 0;  ///< index into Colormaps(): viridis
  int diverging_colormap = 3;   ///< coolwarm
  ValuesMode values = ValuesMode::kAuto;
  /// How the weights are coloured (RangeMode: auto, [0, 1], [0, largest], per row, log).
  /// Exports follow it.
  RangeMode weights_range = RangeMode::kAuto;
  /// "every head": the heatmaps view shows the head grid (every head's weights, small,
  /// clickable) instead of the stages of the head selected (SetEveryHead).
  bool every_head = false;
};

/// The variance experiment of the variance panel.
struct VarianceState {
  std::vector<int64_t> dims = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
  int64_t trials = 2000;
  uint64_t seed = 0;
  int histogram_dim = 6;  ///< index into dims of the histogram's d (64)
  std::vector<VariancePoint> points;
  bool dirty = true;  ///< rerun before the next draw
  std::string error;
  /// The learner's own run (shown batch and head): q.var(), k.var(), (q @ k.T).var() and the
  /// scaled scores' var() before the mask, as the notebooks print them.
  std::string own_key;      ///< shown_version/batch/head they were computed for
  std::string own_pending;  ///< a newer key, waiting for edits to pause (large T)
  double own_pending_since = 0;
  StageVariances own, whole;  ///< the shown batch and head; every batch and head
  double own_scaled = 0;
};

/// The peaking panel's curve and what it was computed from (recomputed when those change).
struct PeakingCache {
  int64_t row = -1;   ///< the query row (of the shown batch and head) cached below
  RowVector weights;  ///< its attention weights (the bars and the summary)
  RowVector scores;
  std::vector<uint8_t> allowed;
  CurveRules rules;  ///< the head's logit rules for the row (CurveRulesOf)
  std::vector<PeakingPoint> curve;
};

/// The export dialog's preview: the figure as a small GL texture, made again only when what it
/// shows changes (its key), so an open dialog costs one texture draw per frame. The texture is
/// freed at exit with the others (main.cpp ReleaseTextures).
struct ExportPreviewState {
  unsigned texture = 0;  ///< GLuint; 0 before the first preview
  int width = 0, height = 0;
  std::string key, error;
};

/// Which modal dialog is up.
struct DialogState {
  DialogKind kind = DialogKind::kNone;
  bool just_opened = false;                    ///< open the ImGui popup this frame
  std::string path;                            ///< the path being typed
  int stage = StageIndex(Stage::kWeights);     ///< kExport: the stage; kExportCompare: CompareMap
  std::shared_ptr<NativeDialog> native;        ///< the desktop's dialog while it runs (else typed)
  DialogKind replacing = DialogKind::kSaveAs;  ///< kReplace: what is written when confirmed
  /// kExport: the file name last proposed for the choices (without extension); the path
  /// follows the choices while its name is still that one.
  std::string proposed;
  bool path_replaced = false;  ///< the path changed under its focused field: reload the field
  /// The path field selects the file name (not its folder or extension) when it gets the
  /// keyboard, so that typing replaces the name.
  bool select_name = true;
  /// Why the last try with this path failed (the whole message): the dialog stays open.
  std::string error;
  ExportPreviewState preview;  ///< kExport's figure preview
};

/// Fonts loaded at start-up (nullptr: ImGui's default).
struct Fonts {
  ImFont* regular = nullptr;
  ImFont* small = nullptr;  ///< cell values, ticks
  ImFont* mono = nullptr;   ///< code (DejaVu Sans Mono; the regular font when it is missing)
  std::string warning;      ///< shown when DejaVu Sans was missing
  /// The code points beyond BaseGlyphRanges() baked into the atlas and the fallback faces they
  /// came from (their ranges must live as long as the atlas they were built into).
  std::vector<ImWchar> codepoints;
  std::vector<FallbackFace> fallbacks;
};

/// A hovered cell of one of the extra views' heatmaps (trick, compare).
struct HeatmapViewHoverCell {
  bool active = false;
  int64_t row = -1, col = -1;
  bool on_weights = false;  ///< on a T x T map (the column is a key)
};

/// Where things were drawn last frame, for the tour's highlights and the layout JSON.
struct ScreenRect {
  ImVec2 min{0, 0}, max{0, 0};
  bool valid() const { return max.x > min.x && max.y > min.y; }
};

/// The code view: GeneratePyTorchCode of the scenario on screen, made again only when it changes.
struct CodeState {
  uint64_t version = 0;  ///< shown_version the text was made for (0: never)
  std::string text;
  std::string error;      ///< why there is no program ("" when there is)
  bool training = false;  ///< the Training view's loop (codegen_train) instead of the scenario's
  /// "decode" or "tiled": the scenario's program followed by the Decode or Tiled view's loop
  /// with its settings (codegen.h GenerateDecodeCode / GenerateTiledCode); "" otherwise.
  std::string loop;
  bool training_scaled = true;  ///< that loop with 1/sqrt(d_k) (else unscaled)
  std::string made_for;  ///< the training settings the text was made for ("" for the scenario's)
};

/// The trick view: AveragingTrick of the run on screen, for the selected batch entry.
struct TrickState {
  uint64_t version = 0;  ///< shown_version the steps were made for (0: never)
  int64_t batch = -1;
  double refreshed_at = -1e9;    ///< when (steady clock, s): held back during drags at large T
  std::vector<TrickStep> steps;  ///< v1..v4
  std::string error;
  /// Per step: its weights (T x T) and its result (T x C) as heatmaps.
  std::array<HeatmapSlot, 4> weight_maps, result_maps;
  /// The hovered cell (last frame, this frame), highlighted in every step's heatmaps;
  /// on_weights: it is on a weights map (the column is a key) rather than a result map.
  HeatmapViewHoverCell hover, hover_next;
};

/// The compare view: A (the main engine's run) and B (its own engine) side by side, A - B, and
/// the row entropies of both.
struct CompareState {
  CompareMode mode = CompareMode::kScaled;
  Stage stage = Stage::kWeights;
  double multiplier_b = 4.0;
  int64_t head_a = 0, head_b = 1;
  std::optional<Scenario> pinned;  ///< the snapshot of kPinned
  std::string pinned_name;         ///< what the snapshot was ("raschka-journey, x1")
  uint64_t pin_version = 0;        ///< bumped by each Pin
  /// A and B as the KV-cache decode computes them (inference.h DecodedStages, with the Decode
  /// view's prefill and chunk), not as the full computation: set by a decode bug of the
  /// gallery (BugInfo::decode) and by the "as decoded" switch.
  bool decoded = false;
  std::string bug_id;    ///< the bug gallery's entry pinned as B ("" when B is no bug)
  ProgramDiff bug_diff;  ///< its program's lines against the fix's (A when it was loaded)

  // -- derived (RefreshCompare), made again when any input above or the shown run changes
  Engine engine_b;  ///< B's own engine: a temperature drag recomputes only B's later stages
  Scenario b;       ///< the scenario B ran
  std::string key;  ///< what the views were made from
  double refreshed_at = -1e9;  ///< when (steady clock, s): held back during drags at large T
  std::string name_a, name_b;
  std::optional<StageView> view_a, view_b, diff;
  std::vector<PeakStats> rows_a, rows_b;   ///< RowsPeakStats of A's and B's weights
  bool distributions_a = true;             ///< A's rows are distributions (RowsAreDistributions
  bool distributions_b = true;             ///< at the side's DistributionTolerance), and B's
  std::string error;                       ///< why there is no comparison
  std::string decoded_note;                ///< with `decoded`: how the rows were decoded
  std::array<HeatmapSlot, 3> maps;         ///< A, B, A - B
  bool upload = true;                      ///< the views changed: upload them again
  HeatmapViewHoverCell hover, hover_next;  ///< highlighted in all three maps
};

/// The Training view's runs so far: losses (one per step) and snapshots of both runs (scaled,
/// unscaled), and the chosen example's tokens.
struct RunsSoFar {
  std::array<std::vector<float>, 2> loss;
  std::array<std::vector<TrainSnapshot>, 2> snapshots;
  std::vector<std::string> tokens;
  int64_t example = 0;
};

/// The d_k choices of the Training view.
inline constexpr int64_t kTrainDkChoices[] = {8, 64, 256};

/// The Training view (actions/training.h; train_panel.cpp draws it): its settings, the worker
/// thread that trains a head scaled then unscaled, what it did so far and the runs it finished.
/// Threads: the worker writes only `live`, `pending` and `pending_error` (under `mu`) and the
/// atomics; everything else is the UI thread's. Destroying it stops and joins the worker.
struct TrainState {
  int task = 2;  // index into TrainTasks(): associative recall shows the gap best
  int64_t steps = 300;
  int dk = 2;  // index into kTrainDkChoices
  std::string curves_path = "training-curves.png", scenario_path = "trained-head.json";
  std::string message;  // the last export's result, or an error

  std::thread worker;
  std::atomic<int64_t> done{0};  // steps done over both runs
  std::atomic<bool> cancel{false}, finished{false};
  std::mutex mu;                  // guards live, pending and pending_error
  RunsSoFar live;                 // appended by the worker after each step
  std::vector<TrainRun> pending;  // the worker's result, taken by the UI thread
  std::string pending_error;

  bool running = false;
  int64_t total = 0, run_steps = 0;  // steps of both runs; of each run
  RunsSoFar shown;                   // the UI thread's copy: what is drawn
  std::vector<TrainRun> runs;        // scaled, unscaled, once both finished: what is exported
  int snapshot = 0;                  // scrubbed snapshot index
  bool follow = true;                // the scrubber follows the newest snapshot while training
  bool playing = false;
  double play_clock = 0;
  int64_t generation = 0;                   // counts runs started (the maps' labels key)
  std::array<HeatmapSlot, 2> maps;          // scaled, unscaled attention of the example
  std::array<int64_t, 2> uploaded{-1, -1};  // generation * 1e6 + snapshot index uploaded

  ~TrainState() { Stop(); }
  void Stop() {
    cancel = true;
    if (worker.joinable()) worker.join();
    running = false;
  }
};

/// The guided tour (tour.h): on or off, and which step.
struct TourState {
  bool active = false;
  int step = 0;
  bool seen = false;       ///< shown once; remembered in the settings so it does not come back
  ScreenRect card;         ///< where the card was drawn last frame
  int scrolled_step = -1;  ///< the step whose map the overview's canvas was last scrolled to
  bool task_done = false;  ///< the step's "your turn" task was done (reset on entering a step)
  ScreenRect target;       ///< where the step's target was drawn last frame (--layout)
  /// The learner moved the card (dragged it): it stays where they put it until the tour ends.
  bool moved = false;
  /// The learner's session when the tour started, and the undo depth then: the tour ends
  /// back there, its own edits one undo step (EndTour in actions/apply.cpp).
  std::optional<HistoryStep> before;
  size_t undo_depth = 0;
};

/// A recompute of a large scenario running on a worker thread (actions/apply.cpp). Only changes
/// that keep every stage's size run there: the multiplier, temperature, scaling, mask and
/// normalization of a scenario with at least kBackgroundCells T x T cells. The stages are then
/// written in place, never reallocated, so the window keeps drawing (its textures and images
/// hold what was uploaded last) while the worker computes; at T = 8192 a temperature drag
/// would otherwise stall every frame for the whole recompute. The worker also scans the T x T
/// stages it wrote (their colour ranges), which costs as much as the recompute itself.
struct BackgroundRun {
  std::thread worker;
  std::atomic<bool> done{false};  ///< set by the worker as its last step
  bool running = false;           ///< a worker was started and not yet joined
  Scenario scenario;              ///< what it runs (state.scenario may move on meanwhile)
  RecomputeCounts before;         ///< engine counts before it ran
  int64_t head = 0, batch = 0;    ///< the selection its scans are of
  std::array<const Matrix*, kStageCount> scan_of{};         ///< set before the start
  std::array<std::optional<ValueScan>, kStageCount> scans;  ///< set by the worker
  std::string error;      ///< why the scenario could not run, else ""
  int64_t completed = 0;  ///< runs shown so far (--frame-stats reports it)
  bool rerun = false;     ///< the scenario was edited while it ran: run it next
  BackgroundRun() = default;
  BackgroundRun(const BackgroundRun&) = delete;
  BackgroundRun& operator=(const BackgroundRun&) = delete;
  ~BackgroundRun() {
    if (worker.joinable()) worker.join();
  }
};

/// At least this many T x T cells (B * H * T * T) for a recompute to run in the background:
/// T = 2048 with one head. Smaller runs take a few milliseconds and stay on the UI thread.
inline constexpr int64_t kBackgroundCells = int64_t{1} << 22;

/// RoPE's shift check in the positions panel: the shift s the learner typed, and the largest
/// score change RopeShiftLargestChange gave for the scores of run `run` (shown_counts.scores)
/// and shift `for_shift` (-1: not computed yet).
struct RopeShiftCheck {
  int64_t shift = 5;
  int run = -1;
  int64_t for_shift = 0;
  double change = 0.0;
};

/// Edit > Check against my output: the text a learner pasted and what `match` made of it
/// (match.h), drawn by check_output_panel.cpp.
struct CheckOutputState {
  bool open = false;
  std::string text;                   ///< the pasted print, as typed
  std::optional<PastedTensor> read;   ///< the text as read (shape, values), once checked
  std::optional<MatchResult> result;  ///< the verdict of the last check
  std::string error;                  ///< the parser's message (line and column), or ""
};

struct AppState {
  // -- the scenario and its stages
  Scenario scenario;  ///< what the learner edits; may be invalid (see error)
  Scenario shown;     ///< the last scenario that ran: what the heatmaps show
  Engine engine;      ///< the one engine; engine.stages() belong to `shown`
  /// A run of `engine` on its worker thread (declared after engine: joined before it goes).
  BackgroundRun background;
  /// Every run on the UI thread except a script's drags (scripts check what they set at once).
  bool synchronous_runs = false;
  Shape shown_shape;             ///< engine.stages().shape of the shown run (ShownShape)
  RecomputeCounts shown_counts;  ///< engine.counts() after the shown run (panels read this copy)
  /// engine.stages().W of the shown run, copied when the projections are recomputed: the
  /// projection panel's editors show them while a background run goes on (d_in x d_out each).
  std::array<Matrix, 3> shown_W;
  std::string error;            ///< ScenarioError text when `scenario` cannot run, else ""
  std::string preset_id;        ///< the preset last loaded ("" after opening a file)
  Scenario preset_scenario;     ///< that preset as loaded (the picker says "edited" when different)
  std::string scenario_path;    ///< the file last opened or saved
  RecomputeCounts last_counts;  ///< engine counts before the last run
  std::string recomputed;       ///< which stage groups the last run recomputed, for the status bar
  int64_t mask_rows = -1;       ///< the rows of the mask any_masked was found for
  /// The shown head's d_k columns of Q, K and V (with several heads; one head shows the
  /// engine's own matrices), refreshed with their heatmaps.
  std::array<Matrix, 5> head_qkv;
  bool any_masked = false;  ///< stages.mask forbids some cell (legends show the hatch)
  std::vector<std::string> token_labels;  ///< TokenLabels(stages.tokens): both axes' labels
  int64_t token_labels_run = -1;          ///< engine input count they were made for
  std::string contents_key;               ///< what the stage heatmaps' contents were made from

  // -- what is looked at
  int64_t head = 0, batch = 0;
  int64_t row = 0;  ///< the chosen query row (peaking panel; PeakingRow follows the hover)
  bool pick_default_row = false;  ///< after a preset or file loads: choose a telling row
  std::optional<Stage> focus;     ///< the stage given most of the heatmaps view (SetFocus)
  bool plots_expanded = false;    ///< the two plots under the heatmaps get most of the height
  /// The two plots under the heatmaps are shown (else the heatmaps take their room);
  /// remembered in the settings (session.h).
  bool plots_open = true;
  /// The controls' "Modern attention" section is open; remembered in the settings. A preset
  /// that uses what it holds opens it (NeedsModernAttention).
  bool modern_open = false;
  std::string export_folder;  ///< the folder of the last export, remembered in the settings
  int grid_decimals = 0;  ///< the decimals the Heatmaps view's number layout sized its cells for
  std::string grid_scroll_key;  ///< the maps and canvas the number layout last scrolled for
  float content_scale = 1.0f;   ///< the monitor's (GLFW content scale): HiDPI
  float zoom = 1.0f;            ///< View > Zoom (SetZoom)
  bool fonts_dirty = false;     ///< build the fonts again at content_scale * zoom
  /// The shown tokens' code points beyond the base ranges (CodepointsBeyondBase): when they
  /// differ from fonts.codepoints the fonts are built again, between frames.
  std::vector<ImWchar> font_codepoints;
  HoverCell hover;       ///< hovered cell of the last frame (highlights are drawn from it)
  HoverCell hover_next;  ///< filled while drawing this frame
  std::array<HeatmapSlot, kStageCount> heatmaps;
  /// The head grid (under the notebook-sized overview, or the whole view with "every head"):
  /// each head's weights side by side (as BertViz's head view), kHeadGridMax heads at a time,
  /// the page that holds the head selected (HeadGridFirst); made again when head_maps_key
  /// changes.
  static constexpr int kHeadGridMax = 16;
  std::array<HeatmapSlot, kHeadGridMax> head_maps;
  /// With scaling.sink: each head's sink column (T x 1), drawn right of its weights in the grid.
  std::array<HeatmapSlot, kHeadGridMax> head_sinks;
  std::string head_maps_key;
  int head_maps_first = 0;  ///< the head in head_maps[0]
  bool mask_dirty = true;   ///< upload stages.mask again
  ViewOptions view;
  VarianceState variance;
  PeakingCache peaking;
  MaskPaint paint;
  uint64_t shown_version = 0;      ///< bumped whenever `shown` and its stages change
  RopeShiftCheck rope_shift;       ///< the positions panel's shift check
  uint64_t autosaved_version = 0;  ///< shown_version of the last autosave (AutosaveWhenIdle)
  double autosaved_at = 0.0;       ///< when it was written (steady clock, s)

  // -- the central views
  CentralView central = CentralView::kHeatmaps;
  CodeState code;
  TrickState trick;
  CompareState compare;
  TourState tour;
  GradientState gradients;       ///< the gradients view (gradient_state.h)
  TrainState training;           ///< the Training view and its worker
  InferenceViewState inference;  ///< the Decode and Tiled views (inference_view.h)
  /// The Tokens view (panels/tokens_panel.cpp): the head shown (-1 all), the selection a click
  /// locked (Escape releases it), the one under the mouse, and the last geometry drawn (its
  /// positions relative to `origin`, the canvas's top-left on screen; the layout JSON's lines).
  struct TokensViewState {
    int64_t head = -1;
    TokenSelection locked, hovered;
    TokenViewGeometry drawn;
    ImVec2 origin{0, 0};
    bool shown = false;  ///< drawn this frame
  } tokens;
  /// The microgpt view (microgpt_view.h), made on first use.
  std::shared_ptr<struct MicrogptViewState> microgpt;
  std::array<ScreenRect, kStageCount> heatmap_cells;  ///< each heatmap's grid cell (labels too)
  std::vector<std::pair<std::string, ScreenRect>> toolbar_items;  ///< drawn this frame
  ScreenRect peaking_rect, variance_rect, controls_rect, views_rect;
  ScreenRect heatmap_canvas;  ///< the visible part of the overview's scrolling canvas

  // -- actions and history
  std::vector<PendingAction> pending;
  History history;
  bool script_drag = false;  ///< a script is dragging a slider (keeps the undo step open)
  /// The last `idle S` of a script: its wall-clock seconds and the CPU seconds the whole
  /// process (every thread) spent meanwhile (getrusage); -1 before one (--frame-stats).
  struct ScriptIdle {
    double wall = -1, cpu = -1;
  } script_idle;
  struct ScriptMouse {
    bool active = false;  ///< replace the real mouse (set after the backend's NewFrame)
    ImVec2 pos{0, 0};
    bool down = false;
    float wheel = 0.0f;  ///< wheel steps this frame (up > 0)
  } script_mouse;

  // -- messages and dialogs
  std::string status;  ///< the last message (a saved path, ...)
  bool status_is_error = false;
  std::string action_error;  ///< the last file or export action that failed (scripts stop)
  DialogState dialog;
  CheckOutputState check_output;          ///< Edit > Check against my output
  std::vector<std::string> recent_files;  ///< File > Open Recent, newest first (recent_files.h)
  bool scripted = false;                  ///< driven by --script: no desktop dialog unless asked
  bool quit_requested = false;
  ExportChoices export_choices;  ///< the export dialog's (gui/export.h)

  // -- graphics (owned by main)
  HeatmapRenderer* renderer = nullptr;
  Fonts fonts;
  int64_t frame = 0;
};

/// A zoom kept in 0.6..2.5 (1 for anything that is not a number).
inline float ClampZoom(float z) {
  return z >= 0.6f && z <= 2.5f ? z : z > 2.5f ? 2.5f : z >= 0 ? 0.6f : 1.0f;
}

/// The stages on screen (the engine's last good run), for panels: nullptr while a background
/// run rewrites them in place (BackgroundRun). Panels then draw what they uploaded or cached from
/// the last finished run (textures, ShownShape, token labels, the peaking row) and hide the
/// values they would read, so no panel ever reads a matrix the worker may be writing. The one
/// way panels reach the engine's matrices.
inline const Stages* ReadableStages(const AppState& state) {
  return state.background.running ? nullptr : &state.engine.stages();
}

/// The query row the peaking panel shows: the hovered row while the mouse is over a heatmap,
/// else the chosen one (AppState::row), to which it returns when the mouse leaves.
inline int64_t PeakingRow(const AppState& state) {
  return state.hover.active && state.hover.row >= 0 ? state.hover.row : state.row;
}

/// Whether a run has been shown (the engine has stages). Readable during a background run.
inline bool HasShownRun(const AppState& state) { return state.shown_version > 0; }

/// The sizes of the stages on screen (B, T, d_in, d_out, H, d_k...): a copy made when a run is
/// shown (AfterRun), readable while a background run goes on (it never changes a size).
inline const Shape& ShownShape(const AppState& state) { return state.shown_shape; }

/// The stages on screen, for actions, exports and scripts that run when no worker writes them
/// (after SettleRuns, or between runs). Panels use ReadableStages. Debug builds (the sanitizer
/// builds) check that no background run is going on.
inline const Stages& ShownStages(const AppState& state) {
  assert(!state.background.running && "ShownStages while a background run writes the stages");
  return state.engine.stages();
}

}  // namespace attnlab::gui
