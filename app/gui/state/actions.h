// actions.h: everything the learner (or a --script) can do to the window, as values. Panels
// Emit() actions; ApplyPendingActions (actions/apply.h) applies them in one place, once per
// frame, which is where undo/redo, the engine rerun and scripted tests plug in.
//
// Undoable actions change the scenario; each takes one undo step, except that consecutive edits
// with the same merge key fold into one while the widget is held (a slider drag is one step).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "attnlab/figures/figure.h"
#include "attnlab/model/scenario.h"
#include "gui/state/central_views.h"
#include "gui/state/export_choices.h"
#include "gui/state/inference_view.h"

namespace attnlab::gui {

struct AppState;

/// The compare view's B: how it is made from the scenario on screen (A).
enum class CompareMode {
  kScaled,       ///< B flips "divide by sqrt(d_k)"
  kCausal,       ///< B has no mask when A has one, else the causal mask
  kHeads,        ///< A shows head_a, B head_b of the same scenario
  kTemperature,  ///< B has its own multiplier (A keeps the scenario's)
  kPinned,       ///< B is a snapshot taken with "Pin"
};

// -- edits of the scenario (undoable)
struct SetMultiplier {
  double value = 1.0;
};  ///< scaling.multiplier (1/temperature)
struct SetSqrtDk {
  bool on = true;
};  ///< scaling.sqrt_dk
struct SetMaskKind {
  MaskKind kind = MaskKind::kNone;
};  ///< custom starts from the current mask
struct SetMaskCell {
  int64_t row = 0, col = 0;
  bool allowed = true;
};  ///< custom mask only
struct SetNormalization {
  Normalization value = Normalization::kSoftmax;
};
struct SetDropout {
  double p = 0.0;
};
struct LoadPresetAction {
  std::string id;
};
struct OpenScenario {
  std::string path;
};
/// The bug gallery (model/bugs.h): the scenario becomes the fix of bug preset `id` (one undo
/// step) and the compare view shows it as A beside the bug, pinned as B.
struct LoadBugAction {
  std::string id;
};
/// Any other edit: a function applied to a copy of the scenario; label names it.
struct EditScenario {
  std::string label;
  std::function<void(Scenario&)> edit;
};

// -- history
struct Undo {};
struct Redo {};

// -- files (not undoable)
struct SaveScenario {
  std::string path;
};
/// One heatmap of the current head and batch as PNG, through attnlab::ExportView.
struct ExportStage {
  Stage stage = Stage::kWeights;
  std::string path;
};
/// Every stage, head and batch as PNGs into a folder, through attnlab::ExportAll.
struct ExportAllStages {
  std::string dir;
};

// -- view (not undoable)
struct SelectHead {
  int64_t head = 0;
};
struct SelectBatch {
  int64_t batch = 0;
};
struct SelectRow {
  int64_t row = 0;
};
struct SetColormap {
  bool diverging = false;
  int index = 0;
};
/// How the weights are coloured (RangeMode).
struct SetWeightsRange {
  RangeMode mode = RangeMode::kAuto;
};
struct SetView {
  CentralView view = CentralView::kHeatmaps;
};
/// The code view's program to the clipboard (ImGui::SetClipboardText).
struct CopyCode {};
/// A map's stage to the clipboard as print() writes it in the program (torch_print.h
/// PrintedStage::printed): the whole stage, every batch entry and head, to paste beside a
/// notebook's output.
struct CopyStagePrint {
  Stage stage = Stage::kWeights;
};
/// Edit > Check against my output: reads state.check_output.text (tensor_text.h) and matches
/// it against the shown scenario (match.h); open = false closes the dialog, true opens it.
struct CheckOutput {
  enum Kind { kOpen, kCheck, kClose } kind = kCheck;
};
/// The compare view's B (multiplier_b: kTemperature; heads: kHeads, -1 keeps the current).
struct SetCompare {
  CompareMode mode = CompareMode::kScaled;
  double multiplier_b = 0.0;  ///< 0 keeps the current
  int64_t head_a = -1, head_b = -1;
};
/// B becomes a snapshot of the scenario on screen.
struct PinCompare {};
struct SetCompareStage {
  Stage stage = Stage::kWeights;
};
/// The compare view's "as decoded": A and B shown as the KV-cache decode computes them (the
/// Decode view's prefill and chunk, one token per step after), or as the full computation.
struct SetCompareDecoded {
  bool on = false;
};
/// One heatmap of the compare view as PNG, through attnlab::ExportView.
enum class CompareMap { kA, kB, kDifference };
struct ExportCompare {
  CompareMap map = CompareMap::kDifference;
  std::string path;
};
/// The Decode or Tiled view's shown step as a figure (ExportInferenceStep, export.h).
struct ExportStepFigure {
  std::string path;
};
/// The guided tour: start it (again), step, or leave it.
struct TourCommand {
  enum Kind { kStart, kNext, kBack, kSkip } kind = kStart;
};
struct Quit {};
/// Which modal dialog is up (DialogState in app_state.h).
/// kReplace: "FILE exists. Replace it?" before Save As writes over a file.
/// kSaveNotebook: the Code view's program as a Jupyter notebook (.ipynb).
/// kExportStep: the Decode or Tiled view's shown step as a figure.
enum class DialogKind {
  kNone,
  kOpen,
  kSaveAs,
  kExport,
  kExportAll,
  kExportCompare,
  kReplace,
  kSaveNotebook,
  kExportStep
};
/// Opens a dialog with its default path: Open the last file; Save As that file or
/// "PRESET.attn.json" (the preset on screen, else "scenario.attn.json"); Export
/// DefaultExportName(stage); Export all "attention-figures"; Export compare
/// DefaultCompareExportName(map); Export step DefaultStepExportName.
struct OpenDialog {
  DialogKind kind = DialogKind::kOpen;
  Stage stage = Stage::kWeights;
  CompareMap map = CompareMap::kDifference;
};
/// Saves to the file the scenario came from, or opens Save As when there is none.
struct Save {};
/// One stage takes most of the heatmaps view, the others a strip of thumbnails; none: all
/// stages side by side in pipeline order.
struct SetFocus {
  std::optional<Stage> stage;
};
/// View > Zoom: every size of the window (fonts, spacing) times `zoom` (kept in 0.6..2.5), on
/// top of the monitor's content scale; remembered in the settings.
struct SetZoom {
  float zoom = 1.0f;
};
/// Opens or closes a part of the window the settings remember: the controls' "Modern
/// attention" section, or the two plots under the heatmaps (peaking, 1/sqrt(d_k)).
struct SetSectionOpen {
  enum Which { kModern, kPlots } which = kModern;
  bool open = false;
};
/// When cell values are printed on the heatmaps.
struct SetValuesMode {
  ValuesMode mode = ValuesMode::kAuto;
};
/// The heatmaps view shows every head's weights (the head grid) instead of one head's stages.
struct SetEveryHead {
  bool on = false;
};
/// The variance experiment's seed and number of trials (clamped to 100..50000).
struct SetVarianceSeed {
  uint64_t seed = 0;
};
struct SetVarianceTrials {
  int64_t trials = 2000;
};
/// Which d of the variance experiment the histogram shows (an index into its dims).
struct SetVarianceHistogramDim {
  int index = 0;
};

// -- desktop: file dialogs, recent files, drag and drop (not undoable)
/// A path picked in a file dialog (typed or the desktop's) for `kind`: opens, saves or exports
/// there (stage: the stage of kExport, the CompareMap of kExportCompare). Save As to a file that
/// exists asks first (DialogKind::kReplace) unless `confirmed` (the desktop's dialog asked).
struct ChooseFile {
  DialogKind kind = DialogKind::kOpen;
  std::string path;
  int stage = 0;
  bool confirmed = false;
};
/// The answer to "Replace FILE?": replace saves over it; otherwise nothing is written.
struct ConfirmReplace {
  bool replace = false;
};
/// The desktop's file dialog ended: a path was chosen, it was cancelled, or it failed to run
/// (then the typed-path dialog opens instead).
struct NativeDialogEnded {
  bool chosen = false;
  bool failed = false;
  std::string path;
};
/// Files dropped on the window: the first .json or figure (.png, .svg, .pdf) among them opens.
struct DropFiles {
  std::vector<std::string> paths;
};
/// File > Open Recent > Clear the list.
struct ClearRecentFiles {};
/// The export dialog's format, stages, size and colorbar choices (not undoable).
struct SetExportChoices {
  ExportChoices choices;
};

/// The gradients view's loss key J ("query row i should attend to key j"; gradient_panel.cpp).
struct SetLossKey {
  int64_t key = 0;
};

/// Writes the program of the scenario on screen (the Code view's text) as a Jupyter notebook
/// (codegen.h ProgramAsNotebook) to `path`, atomically.
struct SaveNotebook {
  std::string path;
};

using Action = std::variant<
    SetMultiplier, SetSqrtDk, SetMaskKind, SetMaskCell, SetNormalization, SetDropout,
    LoadPresetAction, OpenScenario, LoadBugAction, EditScenario, Undo, Redo, SaveScenario,
    ExportStage, ExportAllStages, SelectHead, SelectBatch, SelectRow, SetColormap, SetWeightsRange,
    SetView, CopyCode, CopyStagePrint, CheckOutput, SetCompare, PinCompare, SetCompareStage,
    SetCompareDecoded, ExportCompare, TourCommand, Quit, OpenDialog, Save, SetValuesMode,
    SetVarianceSeed, SetVarianceTrials, SetVarianceHistogramDim, SetFocus, SetZoom, ChooseFile,
    ConfirmReplace, NativeDialogEnded, DropFiles, ClearRecentFiles, SetExportChoices, SetLossKey,
    SaveNotebook, SetInference, SetEveryHead, ExportStepFigure, SetSectionOpen>;

/// An action waiting for ApplyPendingActions.
struct PendingAction {
  Action action;
  std::string merge_key;
};

/// Queues an action. merge_key: edits with the same key fold into one undo step while the
/// edit goes on (see History::open_merge_key).
void Emit(AppState& state, Action action, std::string merge_key = "");

}  // namespace attnlab::gui
