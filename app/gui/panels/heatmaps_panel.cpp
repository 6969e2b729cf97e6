// heatmaps_panel.cpp: the six stages as heatmaps, side by side in pipeline order, with tokens
// on both axes, a colorbar with ticks, masked cells hatched and NaN magenta, the hovered query
// row highlighted in every heatmap, and a tooltip that says how the hovered number was made.
//
// Each heatmap is one float texture coloured by shaders/heatmap.frag (gfx/heatmap_gpu.h), drawn
// with its labels, colorbar and highlights by DrawHeatmapView (heatmap_view.h).
//
// [SECTION] Uploads: only the stages the engine recomputed
// [SECTION] Toolbar: head, batch, colours, values, export
// [SECTION] Tooltip: how the hovered number was made
// [SECTION] One heatmap: the shared drawing, then painting, tooltip and context menu
// [SECTION] The panel
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <future>
#include <vector>

#include "attnlab/base/text.h"
#include "attnlab/figures/cell_explanation.h"
#include "gui/actions/export.h"
#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/state/tour.h"
#include "gui/widgets/heatmap_view.h"
#include "gui/widgets/plot.h"
#include "gui/widgets/stage_info.h"
#include "gui/widgets/stage_layout.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Uploads: only the stages the engine recomputed

/// The labels and contents (titles, signed or not) of the six stage heatmaps, made again when
/// the run, the head or the batch on screen changes; their specs follow on the next draw.
void RefreshContents(AppState& state, bool uploaded) {
  const Stages& st = *ReadableStages(state);  // UploadDirty's caller: no worker runs
  const std::string key = std::to_string(state.shown_version) + "/" + std::to_string(state.head) +
                          "/" + std::to_string(state.batch);
  if (key == state.contents_key && !uploaded) return;
  state.contents_key = key;
  for (int i = 0; i < kStageCount; ++i) {
    HeatmapSlot& slot = state.heatmaps[i];
    if (!slot.gpu.has_values()) continue;
    slot.content = StageContent(st, state.shown, StageAt(i), state.head, state.batch,
                                state.token_labels, slot.scan);
    slot.any_masked = slot.content.hatch_masked && state.any_masked;
    slot.has_spec = false;
  }
}

/// Uploads the dirty stages and the mask and scans each (ScanValues: colour range, NaN, inf,
/// sign). The scans run on a helper thread while this thread (the GL one) uploads: at T = 2048
/// each takes about a millisecond, as does each upload. While a background run rewrites the
/// stages nothing is read: the dirty slots wait for its result.
void UploadDirty(AppState& state) {
  if (!state.renderer || !HasShownRun(state) || !ReadableStages(state)) return;
  RefreshHeadSlices(state);
  if (state.mask_dirty) {
    state.renderer->MaskChanged();
    state.mask_dirty = false;
  }
  std::vector<std::pair<int, CellSource>> jobs;
  std::vector<std::optional<ValueScan>> made;  // scans a background run already made
  Eigen::Index cells = 0;
  for (int i = 0; i < kStageCount; ++i) {
    HeatmapSlot& slot = state.heatmaps[i];
    std::optional<ValueScan> prescan = std::move(slot.prescan);
    slot.prescan.reset();
    if (!slot.dirty) continue;
    slot.dirty = false;
    const CellSource m = StageCells(state, StageAt(i));
    if (m.empty()) {
      slot.gpu.Release();
      continue;
    }
    jobs.emplace_back(i, m);
    if (!prescan) cells += m.rows() * m.cols();
    made.push_back(std::move(prescan));
  }
  if (!jobs.empty()) {
    // The mask's 0/1 bytes need no scan: it is coloured over [0, 1].
    auto scan_all = [jobs, made, any_masked = state.any_masked] {
      std::vector<ValueScan> scans;
      for (size_t k = 0; k < jobs.size(); ++k) {
        const auto& [i, m] = jobs[k];
        scans.push_back(made[k]    ? *made[k]
                        : m.floats ? ScanStage(StageAt(i), *m.floats)
                                   : ValueScan{any_masked ? 0.0f : 1.0f, 1.0f, true});
      }
      return scans;
    };
    std::future<std::vector<ValueScan>> pending;
    const bool helper = cells > (1 << 20);
    if (helper) pending = std::async(std::launch::async, scan_all);
    for (const auto& [i, m] : jobs) {
      if (m.floats)
        state.heatmaps[i].gpu.UploadValues(*m.floats);
      else
        state.heatmaps[i].gpu.UploadValues(*m.bytes);
    }
    const std::vector<ValueScan> scans = helper ? pending.get() : scan_all();
    for (size_t k = 0; k < jobs.size(); ++k) state.heatmaps[jobs[k].first].scan = scans[k];
  }
  RefreshContents(state, !jobs.empty());
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Toolbar: head, batch, colours, values, export

/// Where each toolbar item was drawn this frame (--layout checks nothing is off-screen).
void RecordToolbarItem(AppState& state, const char* name) {
  state.toolbar_items.push_back(
      {name, ScreenRect{ImGui::GetItemRectMin(), ImGui::GetItemRectMax()}});
}

/// The weights' colour modes (RangeMode), at the end of the sequential colormap's menu.
void DrawWeightsColourChoices(AppState& state) {
  // [0, 1] shows a temperature change as brighter or darker cells; the others give contrast
  // at large T, where every weight is about 1/T.
  ImGui::Separator();
  const RangeMode r = state.view.weights_range;
  struct Choice {
    RangeMode mode;
    const char* label;
    const char* tip;
  };
  static const Choice choices[] = {
      {RangeMode::kAuto, "colours: auto",
       "0 \xE2\x80\x93 1 for the notebooks' sizes; log10 when T > 32 and a typical row's "
       "largest weight is under 0.25, where [0, 1] would show almost nothing."},
      {RangeMode::kFixed, "colours: 0 \xE2\x80\x93 1",
       "Weights coloured over [0, 1]: a sharper softmax shows as brighter cells, and "
       "temperatures compare at a glance."},
      {RangeMode::kData, "colours: 0 \xE2\x80\x93 largest",
       "Over [0, the largest weight], leaving out one-hot rows (a causal row 0 has one key "
       "and weight 1): contrast at large T."},
      {RangeMode::kPerRow, "colours: per row",
       "Each row over [0, its own largest weight]: where each query looks, even when "
       "every weight is about 1/T."},
      {RangeMode::kLog, "colours: log\xE2\x82\x81\xE2\x82\x80",
       "log10 of each weight: 0.001 and 0.01 look different, so the decay along a causal "
       "row shows at any T."},
  };
  for (const Choice& c : choices) {
    if (ImGui::Selectable(c.label, r == c.mode)) Emit(state, SetWeightsRange{c.mode});
    Tip(c.tip);
  }
}

void DrawToolbar(AppState& state) {
  const Shape& sh = ShownShape(state);
  const float w = ImGui::GetFontSize() * 5.5f;
  bool first = true;
  auto selector = [&](const char* label, int64_t value, int64_t count, const char* tip,
                      auto make_action) {
    BeginToolbarItem(first, LabeledWidth(w, label));
    first = false;
    ImGui::SetNextItemWidth(w);
    ImGui::BeginDisabled(count <= 1);
    int v = static_cast<int>(value);
    char fmt[32];
    std::snprintf(fmt, sizeof fmt, "%%d of %lld", static_cast<long long>(count));
    if (ImGui::SliderInt(label, &v, 0, std::max<int>(static_cast<int>(count) - 1, 0), fmt))
      Emit(state, make_action(v));
    ImGui::EndDisabled();
    RecordToolbarItem(state, label);
    Tip(tip);
  };
  selector("head", state.head, sh.H,
           sh.d_v != sh.d_out
               ? "Which head's scores, logits and weights to show (each head attends with its "
                 "own d_k / heads columns of Q and K and d_v / heads columns of V)."
               : "Which head's scores, logits and weights to show (each head attends with its "
                 "own d_k = d_out / heads columns of Q, K and V).",
           [](int v) { return Action{SelectHead{v}}; });
  selector("batch", state.batch, sh.B, "Which sequence of the batch to show.",
           [](int v) { return Action{SelectBatch{v}}; });
  if (sh.H > 1) {
    bool every = state.view.every_head;
    BeginToolbarItem(false, ImGui::GetFrameHeight() + ImGui::CalcTextSize("every head").x +
                                ImGui::GetStyle().ItemInnerSpacing.x);
    if (ImGui::Checkbox("every head", &every)) Emit(state, SetEveryHead{every});
    RecordToolbarItem(state, "every head");
    Tip("Show every head's weights at once, small (as BertViz's head view); click a head's "
        "title to show its stages. Up to 16 heads a page; the arrows turn the page.");
  }

  auto colormap_combo = [&](const char* label, bool diverging, const char* tip) {
    const int current = diverging ? state.view.diverging_colormap : state.view.sequential_colormap;
    BeginToolbarItem(false, LabeledWidth(ImGui::GetFontSize() * 5.5f, label));
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5.5f);
    if (ImGui::BeginCombo(label, Colormaps()[current].name.c_str())) {
      for (int i = 0; i < static_cast<int>(Colormaps().size()); ++i) {
        if (Colormaps()[i].diverging != diverging) continue;
        if (ImGui::Selectable(Colormaps()[i].name.c_str(), i == current))
          Emit(state, SetColormap{diverging, i});
      }
      if (!diverging) {
        DrawWeightsColourChoices(state);
      }
      ImGui::EndCombo();
    }
    RecordToolbarItem(state, label);
    Tip(tip);
  };
  colormap_combo("weights colours", false,
                 "Colour scale for the mask and the weights (values >= 0): sequential.");
  colormap_combo("signed colours", true,
                 "Colour scale for scores, logits and context (signed): diverging, white at 0.");

  const char* modes[] = {Name(ValuesMode::kAuto), Name(ValuesMode::kOn), Name(ValuesMode::kOff)};
  int mode = static_cast<int>(state.view.values);
  BeginToolbarItem(false, LabeledWidth(ImGui::GetFontSize() * 4.0f, "numbers"));
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 4.0f);
  if (ImGui::Combo("numbers", &mode, modes, 3))
    Emit(state, SetValuesMode{static_cast<ValuesMode>(mode)});
  RecordToolbarItem(state, "numbers");
  Tip("Print each cell's value: auto does it when the grid is at most 12 x 12 and the "
      "numbers fit (in a focused stage, wherever they fit).");
  BeginToolbarItem(false,
                   ImGui::CalcTextSize("Export...").x + ImGui::GetStyle().FramePadding.x * 2);
  if (ImGui::Button("Export...")) ImGui::OpenPopup("export_menu");
  RecordToolbarItem(state, "Export...");
  Tip("Save a heatmap (or all of them) as a PNG figure, the same file `attention-lab export` "
      "writes. Ctrl+E exports the heatmap under the mouse.");
  if (ImGui::BeginPopup("export_menu")) {
    for (int i = 0; i < kStageCount; ++i) {
      const std::string label = std::string(StageName(StageAt(i))) + "...";
      if (ImGui::MenuItem(label.c_str(), nullptr, false, state.heatmaps[i].gpu.has_values()))
        Emit(state, OpenDialog{DialogKind::kExport, StageAt(i)});
    }
    ImGui::Separator();
    if (ImGui::MenuItem("All heatmaps...")) Emit(state, OpenDialog{DialogKind::kExportAll});
    ImGui::EndPopup();
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Tooltip: how the hovered number was made

std::string Num(double v) { return FormatNumber(v, NumberStyle::kShortest); }

/// How the hovered number was made (cell_explanation.h builds the text): the query and key,
/// then each step up to this stage.
void DrawCellTooltip(const AppState& state, Stage stage, int64_t i, int64_t j) {
  const Stages* readable = ReadableStages(state);
  if (!readable) {  // a background run is rewriting the values
    ImGui::SetTooltip("computing\xE2\x80\xA6 this cell's value shows when the run ends");
    return;
  }
  const CellSource m = StageCells(state, stage);
  if (m.empty() || i >= m.rows() || j >= m.cols()) return;
  const CellRef ref{stage,
                    state.batch,
                    state.head,
                    i,
                    j,
                    m.at(i, j),
                    RowLabel(state, i),
                    StageIsTokenByToken(stage) ? RowLabel(state, j) : ColumnLabel(state, stage, j)};
  const CellExplanation e = ExplainCell(*readable, state.shown, ref);
  ImGui::BeginTooltip();
  // Wide enough that a formula with its numbers stays on one line.
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 44.0f);
  ImGui::TextUnformatted(e.heading.c_str());
  ImGui::Separator();
  for (const ExplanationLine& line : e.lines) {
    if (line.note)
      ImGui::TextDisabled("%s", line.text.c_str());
    else
      ImGui::TextUnformatted(line.text.c_str());
  }
  ImGui::Separator();
  ImGui::TextUnformatted(e.value.c_str());
  ImGui::TextDisabled("%s", e.note.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] One heatmap: the shared drawing, then painting, tooltip and context menu

/// How a heatmap is drawn: among all stages, focused (most of the view, values printed), or as
/// a thumbnail of the strip under the focused one.
/// kCanvas: in the overview's scrolling canvas, where the wheel scrolls (Ctrl+wheel zooms).
enum class MapMode { kOverview, kCanvas, kFocused, kThumbnail };

/// The one rule of the sink's column (scaling.sink) drawn right of a weights map, in the stages'
/// rows and in the head grid alike: no row labels of its own (the weights' left of it label its
/// rows), never masked (the mask's cells are the keys'), and, when the two share their colours
/// (colormap, range and scaling: [0, 1] linear unless the weights' range was changed), one
/// colorbar for both, the weights' with their legends, drawn right of the sink column.
void PairSinkWithWeights(const AppState& state, HeatmapSlot& weights, HeatmapViewSpec& wv,
                         HeatmapSlot& sink, HeatmapViewSpec& sv) {
  sv.row_labels = false;
  sv.allowed = nullptr;
  const PresentationOptions options = ScreenPresentation(state);
  if (!weights.has_spec) EnsureSpec(weights, options);
  if (!sink.has_spec) EnsureSpec(sink, options);
  const HeatmapSpec &a = weights.spec, &b = sink.spec;
  if (a.colormap != b.colormap || a.range.lo != b.range.lo || a.range.hi != b.range.hi ||
      a.scaling != b.scaling)
    return;  // other colours: each keeps its own colorbar
  wv.colorbar = false;
  sv.colorbar_of = &weights.spec;
}

/// The hovered cell `hv` followed into the heatmap of `stage`: its query row in every map
/// indexed by queries, its key row in K and V and its key column in the T x T maps (one row
/// followed from X to its context vector); the hovered dimension stays marked where it was.
void HighlightHovered(const HoverCell& hv, Stage stage, HeatmapViewSpec& spec) {
  if (!hv.active) return;
  const bool on_keys = StageIsKeySide(hv.stage);
  const bool on_square = RowOf(hv.stage).shape == StageShape::kQueryByKey;
  const int64_t query = on_keys ? -1 : hv.row;
  const int64_t key = on_keys ? hv.row : on_square ? hv.col : -1;
  const bool dims = stage == Stage::kX || stage == Stage::kQ || stage == Stage::kQRot ||
                    stage == Stage::kContext || stage == Stage::kSink;
  if (StageIsKeySide(stage)) {
    spec.highlight_row = key;
  } else if (dims) {
    spec.highlight_row = query >= 0 ? query : (stage == Stage::kX ? key : -1);
  } else {
    spec.highlight_row = query;
    spec.highlight_col = key;
  }
  // The hovered dimension stays marked in the map it was hovered on.
  if (hv.stage == stage && (dims || on_keys)) spec.highlight_col = hv.col;
}

/// A drawn heatmap's interaction: tooltip, row selection, custom-mask painting (not while a
/// background run rewrites the mask: `readable` null) and the context menu. `m` its cells,
/// `hover` what DrawHeatmapView reported.
void HeatmapInteraction(AppState& state, Stage stage, const Stages* readable, const CellSource& m,
                        const HeatmapSlot& slot, const HeatmapViewHover& hover) {
  const Shape& sh = ShownShape(state);
  const int rows = static_cast<int>(readable ? m.rows() : slot.gpu.rows());
  const int cols = static_cast<int>(readable ? m.cols() : slot.gpu.cols());
  ImGui::PushID(StageIndex(stage));
  const bool square = rows == sh.T && cols == sh.T && StageIsTokenByToken(stage);
  const bool painting_allowed =
      readable && square && state.scenario.mask.kind == MaskKind::kCustom && state.error.empty();
  if (hover.active) {
    const int64_t i = hover.row, j = hover.col;
    state.hover_next = HoverCell{true, stage, i, j};
    if (painting_allowed && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
      state.paint.active = true;
      const MaskMatrix& mask = readable->mask;  // painting_allowed: readable
      state.paint.value = !(mask.rows() > i && mask(i, j));
      Emit(state, SetMaskCell{i, j, state.paint.value}, "mask.paint");
    } else if (state.paint.active && painting_allowed &&
               ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
      const MaskMatrix& mask = readable->mask;
      const bool now = mask.rows() > i && mask(i, j);
      if (now != state.paint.value) Emit(state, SetMaskCell{i, j, state.paint.value}, "mask.paint");
    } else if (!painting_allowed && ImGui::IsMouseReleased(ImGuiMouseButton_Left) &&
               ImGui::GetIO().MouseDragMaxDistanceSqr[0] <
                   ImGui::GetIO().MouseDragThreshold * ImGui::GetIO().MouseDragThreshold) {
      Emit(state, SelectRow{i});  // on release, so that a drag pans instead
    }
    if (!ImGui::IsPopupOpen("heatmap_menu")) DrawCellTooltip(state, stage, i, j);
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Right)) ImGui::OpenPopup("heatmap_menu");
  }
  if (ImGui::BeginPopup("heatmap_menu")) {
    if (ImGui::MenuItem("Copy as printed", "Ctrl+C")) Emit(state, CopyStagePrint{stage});
    if (ImGui::MenuItem("Export this heatmap as PNG..."))
      Emit(state, OpenDialog{DialogKind::kExport, stage});
    if (ImGui::MenuItem("Export all heatmaps...")) Emit(state, OpenDialog{DialogKind::kExportAll});
    ImGui::EndPopup();
  }
  ImGui::PopID();
}

/// `paired`: the weights map with the sink's column right of it, or that sink column
/// (PairSinkWithWeights).
void DrawHeatmap(AppState& state, Stage stage, ImVec2 origin, ImVec2 size,
                 MapMode mode = MapMode::kOverview, bool row_labels = true, bool paired = false) {
  HeatmapSlot& slot = state.heatmaps[StageIndex(stage)];
  const Shape& sh = ShownShape(state);
  const Stages* readable = ReadableStages(state);  // null while a background run writes
  const CellSource m = StageCells(state, stage);

  HeatmapViewSpec spec;
  spec.id = StageName(stage);
  spec.keep_masked_room = true;  // the mask toggled moves nothing (stage_layout.h)
  spec.values = m.floats;
  spec.mask_values = m.bytes;
  spec.empty_text = stage == Stage::kWeightsDropped ? "Dropout is off. Set p > 0 in the\n"
                                                      "attention controls to see it."
                                                    : "(nothing to show)";
  if (stage == Stage::kMask && state.shown.mask.kind == MaskKind::kCustom) {
    spec.heading_note = "click to paint";
    spec.pan_with_left = false;
  }
  spec.labels_key = state.shown_counts.input;
  // The sink's column (T x 1) is never masked: the mask's cells are the keys'.
  spec.allowed = readable && stage != Stage::kSink ? &readable->mask : nullptr;
  spec.frozen = !readable;
  spec.marked_row = state.row;
  HighlightHovered(state.hover, stage, spec);
  spec.track_outside = state.paint.active;
  spec.wheel_zoom_with_ctrl = mode == MapMode::kCanvas;
  if (stage == Stage::kContext && sh.H > 1 && !state.shown.projections.out_proj)
    spec.col_group = sh.dh_v;  // which columns each head wrote
  spec.thumbnail = mode == MapMode::kThumbnail;
  spec.row_labels = row_labels;
  spec.force_values = mode == MapMode::kFocused;
  spec.title_tip = mode == MapMode::kFocused ? "Click to see every stage again (Esc)."
                                             : "Click to focus on this stage: it takes most of "
                                               "the view, with its numbers printed.";
  if (paired && (stage == Stage::kWeights || stage == Stage::kSink)) {
    HeatmapViewSpec partner;  // the other map's view: drawn by its own call
    HeatmapSlot& w = state.heatmaps[StageIndex(Stage::kWeights)];
    HeatmapSlot& k = state.heatmaps[StageIndex(Stage::kSink)];
    if (stage == Stage::kWeights)
      PairSinkWithWeights(state, w, spec, k, partner);
    else
      PairSinkWithWeights(state, w, partner, k, spec);
  }
  const HeatmapViewHover hover = DrawHeatmapView(state, slot, spec, origin, size);
  if (hover.title_clicked)
    Emit(state, SetFocus{mode == MapMode::kFocused ? std::nullopt : std::optional<Stage>(stage)});
  if (mode == MapMode::kThumbnail) return;
  if ((m.empty() && readable) || !slot.gpu.has_values() || slot.image_max.x <= slot.image_min.x)
    return;
  HeatmapInteraction(state, stage, readable, m, slot, hover);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Layout: the pipeline in two rows, identity stages as chips, focus and its strip

/// Why a stage is an identity (or absent) for the current settings, shown as a chip instead of
/// a map; nullptr when it has a map.
const char* ChipText(const AppState& state, Stage stage) {
  // From the shown scenario alone (Stages: weights_dropped is empty exactly when p = 0, X for
  // qkv input), so that it holds while a background run rewrites the stages.
  const Scenario& s = state.shown;
  if (stage == Stage::kMask && s.mask.kind == MaskKind::kNone)
    return "mask: none \xE2\x80\x94 every query sees every key";
  if (stage == Stage::kWeightsDropped && !(s.dropout.p > 0))
    return "dropout: off (p = 0) \xE2\x80\x94 the weights go to V unchanged";
  if (stage == Stage::kX && s.input.source == InputSource::kQkv)
    return "X: none \xE2\x80\x94 Q, K and V are given";
  return nullptr;
}

const char* ChipTip(Stage stage) {
  switch (stage) {
    case Stage::kMask:
      return "With mask none every query sees every key: there is no mask to draw. Its place "
             "is kept, so that nothing moves when you choose causal or custom in the attention "
             "controls (then it shows here, and the cells it forbids are hatched).";
    case Stage::kWeightsDropped:
      return "Dropout is off, so the weights after dropout equal the weights. Its place is "
             "kept: set p > 0 in the attention controls to see nn.Dropout zero some weights "
             "and scale the rest, here.";
    default:
      return "This scenario gives Q, K and V directly: there is no input matrix.";
  }
}

/// A stage the run lacks (StageInRun: Q_rot and K_rot without RoPE, the sink's column without
/// scaling.sink) and that keeps no chip (ChipText) is neither a map nor a chip.
bool StageAbsent(const AppState& state, Stage stage) {
  return !StageInRun(stage, state.shown) && ChipText(state, stage) == nullptr;
}

bool StageShown(const AppState& state, Stage stage) {
  return ChipText(state, stage) == nullptr && !StageAbsent(state, stage);
}

/// The mask's and the dropout's slots are kept when they are off (mask none, p = 0): the maps
/// around them stay where they are when the learner turns them on.
bool StageReserved(const AppState& state, Stage stage) {
  return (stage == Stage::kMask || stage == Stage::kWeightsDropped) &&
         ChipText(state, stage) != nullptr;
}

/// The chips of the identity stages, on one line; the height used.
float DrawChips(AppState& state, ImVec2 at) {
  float x = at.x;
  bool any = false;
  const float h = ImGui::GetFrameHeight();
  for (int k = 0; k < kStageCount; ++k) {
    const char* text = ChipText(state, StageAt(k));
    if (!text || StageReserved(state, StageAt(k))) continue;  // drawn in its kept slot
    any = true;
    ImGui::SetCursorScreenPos(ImVec2(x, at.y));
    ImGui::PushID(k);
    ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.22f, 0.24f, 0.30f, 1.0f));
    ImGui::PushStyleVar(ImGuiStyleVar_FrameRounding, h * 0.5f);
    ImGui::SmallButton(text);
    ImGui::PopStyleVar();
    ImGui::PopStyleColor();
    Tip(ChipTip(StageAt(k)));
    state.heatmap_cells[k] = ScreenRect{ImGui::GetItemRectMin(), ImGui::GetItemRectMax()};
    x = ImGui::GetItemRectMax().x + ImGui::GetFontSize();
    ImGui::PopID();
  }
  return any ? h + 4 : 0;
}

/// rows x cols of a stage's map: its matrix, or while a background run rewrites the stages (which
/// keeps every size) the texture uploaded last.
std::pair<int64_t, int64_t> ShownSize(const AppState& state, Stage stage) {
  if (ReadableStages(state)) {
    const CellSource m = StageCells(state, stage);
    return {m.rows(), m.cols()};
  }
  const HeatmapTexture& gpu = state.heatmaps[StageIndex(stage)].gpu;
  if (!gpu.has_values()) return {0, 0};
  return {gpu.rows(), gpu.cols()};
}

/// rows x cols of a stage's slot: a kept slot is as large as the weights.
std::pair<int64_t, int64_t> SlotSize(const AppState& state, Stage stage) {
  return ShownSize(state, StageReserved(state, stage) ? Stage::kWeights : stage);
}

/// A kept slot: the stage's name and why it is off, in a dim frame the size of its map.
void DrawReservedSlot(AppState& state, Stage stage, ImVec2 o, ImVec2 size) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float line = ImGui::GetTextLineHeight();
  const ImVec2 a(o.x + 8, o.y + line + 4), b(o.x + size.x - 4, o.y + size.y - 4);
  ImGui::SetCursorScreenPos(o);
  ImGui::TextDisabled("%s", stage == Stage::kMask ? "mask" : "weights after dropout");
  if (b.x - a.x < 8 || b.y - a.y < 8) return;
  dl->AddRect(a, b, ImGui::GetColorU32(ImGuiCol_Border), 4.0f);
  ImGui::SetCursorScreenPos(ImVec2(a.x + 6, a.y + 6));
  ImGui::PushTextWrapPos(b.x - 6);
  ImGui::PushClipRect(a, b, true);
  ImGui::TextDisabled("%s", ChipText(state, stage));
  ImGui::PopClipRect();
  ImGui::PopTextWrapPos();
  ImGui::SetCursorScreenPos(a);
  ImGui::PushID(StageIndex(stage));
  ImGui::InvisibleButton("##kept", ImVec2(b.x - a.x, b.y - a.y));
  ImGui::PopID();
  Tip(ChipTip(stage));
}

/// Whether map k of a row labels its rows: the first always, the others unless the row shares
/// the first one's labels; the sink's column never (the weights left of it label its rows).
bool OwnRowLabels(const std::vector<Stage>& stages, size_t k, bool shared_labels) {
  return k == 0 || (!shared_labels && stages[k] != Stage::kSink);
}

/// Whether map k of a row is the weights with the sink's column right after it, or that column.
bool SinkPaired(const std::vector<Stage>& stages, size_t k) {
  if (stages[k] == Stage::kWeights) return k + 1 < stages.size() && stages[k + 1] == Stage::kSink;
  return stages[k] == Stage::kSink && k > 0 && stages[k - 1] == Stage::kWeights;
}

/// A row of heatmaps across `width`, each as wide as its matrix wants at the row's height
/// (X, Q, K, V are narrow when d is small), scaled together to fill the row.
void DrawRow(AppState& state, const std::vector<Stage>& stages, ImVec2 at, ImVec2 size) {
  if (stages.empty()) return;
  const float font = ImGui::GetFontSize(), gap = font;
  const float image_h = std::max(size.y - font * 4.5f, font * 2);
  const float labels = font * 4.5f, colorbar = font * 4.0f;
  const float room = size.x - gap * (stages.size() - 1);
  // The maps of a row share their rows (the tokens): on a narrow window only the first one
  // labels them, which leaves the others room for their cells.
  bool shared_labels = false;
  std::vector<float> want;
  float total = 0;
  for (int pass = 0; pass < 2; ++pass) {
    want.clear();
    total = 0;
    for (size_t k = 0; k < stages.size(); ++k) {
      const auto [m_rows, m_cols] = SlotSize(state, stages[k]);
      const float rows = m_rows ? static_cast<float>(m_rows) : 1.0f;
      const float cols = m_cols ? static_cast<float>(m_cols) : 1.0f;
      const float image_w = std::min(image_h * cols / rows, image_h * 1.25f);
      const bool own_labels = OwnRowLabels(stages, k, shared_labels);
      want.push_back((own_labels ? labels : font * 0.5f) + colorbar + std::max(image_w, font * 3));
      total += want.back();
    }
    if (total <= room * 1.25f || shared_labels) break;
    shared_labels = true;
  }
  float x = at.x;
  for (size_t k = 0; k < stages.size(); ++k) {
    const float w = std::floor(want[k] * room / total);
    const ImVec2 o(x, at.y);
    state.heatmap_cells[StageIndex(stages[k])] = ScreenRect{o, ImVec2(o.x + w, o.y + size.y)};
    if (StageReserved(state, stages[k]))
      DrawReservedSlot(state, stages[k], o, ImVec2(w, size.y));
    else
      DrawHeatmap(state, stages[k], o, ImVec2(w, size.y), MapMode::kOverview,
                  OwnRowLabels(stages, k, shared_labels), SinkPaired(stages, k));
    x += w + gap;
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Layout with every number: the maps in rows (stage_layout.h), the mask's and the
// dropout's slots kept when they are off, on a canvas that scrolls when they need more room

/// The stages of the number layout in pipeline order: every map shown, and the kept slots.
std::vector<Stage> GridStages(const AppState& state) {
  std::vector<Stage> out;
  for (Stage s : AllStages())
    if (StageShown(state, s) || StageReserved(state, s)) out.push_back(s);
  return out;
}

/// The cell widths that print every number of the stage (NumberCellWidths).
NumberCells StageNumberCells(const AppState& state, Stage stage) {
  const CellSource m = StageCells(state, stage);
  const Stages* st = ReadableStages(state);
  const MaskMatrix* mask =
      st && st->mask.rows() == m.rows() && st->mask.cols() == m.cols() ? &st->mask : nullptr;
  const bool hatched = RowOf(stage).hatches_masked;
  return NumberCellWidths(state, stage, m,
                          [&](int64_t i, int64_t j) { return hatched && mask && !(*mask)(i, j); });
}

/// The widths of a cell that prints a number with 2, 3 and 4 decimals: the widest such number
/// ("-0.0000"), the same for every map (one look; the token labels above a cell fit or not
/// alike), never from the values, so that a value changing elsewhere does not change a map's
/// decimals; wider only for the map's values past +-100 (at 2 decimals).
void TemplateCellWidths(const AppState& state, Stage stage, bool reserved, float out[3]) {
  const float pad = 3;  // PaintValues leaves a pixel each side, and one more between them
  // NumberCellWidths's widths have 8 pixels of margin; these, `pad`.
  const float values = reserved ? 0.0f : StageNumberCells(state, stage).min - 8 + pad;
  const char* templates[3] = {"-0.00", "-0.000", "-0.0000"};
  for (int k = 0; k < 3; ++k)
    out[k] = std::max(std::ceil(CellTextWidth(state, templates[k]) + pad), values);
}

/// The boxes of the number layout (stage_layout.h): empty when the tokens are more than 12, a
/// map has more than 12 rows or the learner turned the numbers off (then the maps share the view
/// without numbers). A map with more than 12 columns (X with d_in = 16, the context of 8 heads)
/// gets compact square cells, all such maps' columns together at most half of `width`.
std::vector<StageBox> GridBoxes(AppState& state, const std::vector<Stage>& stages, float width) {
  if (state.view.values == ValuesMode::kOff || !ReadableStages(state)) return {};
  const int64_t T = ShownShape(state).T;
  if (!AutoPrintsValues(T, T)) return {};
  float compact_cols = 0;
  for (Stage stage : stages) {
    const auto [rows, cols] = SlotSize(state, stage);
    if (!AutoPrintsValues(rows, cols)) compact_cols += static_cast<float>(cols);
  }
  // Cells may be narrower than a pixel (d_out = 1024: the map is its texture, downsampled), so
  // that a wide map never runs past the window.
  const float compact_cell =
      std::min(ImGui::GetFontSize() * 0.45f, width * 0.5f / std::max(compact_cols, 1.0f));
  std::vector<StageBox> boxes;
  for (Stage stage : stages) {
    const auto [rows, cols] = SlotSize(state, stage);
    if (rows == 0 || cols == 0) continue;
    if (!AutoPrintsValues(rows, 1)) return {};
    const bool reserved = StageReserved(state, stage);
    StageBox b;
    b.stage = stage;
    b.rows = static_cast<int>(rows);
    b.cols = static_cast<int>(cols);
    b.reserved = reserved;
    b.compact = !AutoPrintsValues(rows, cols);
    if (b.compact) {  // at least 24 pixels across, as a heatmap needs to be drawn at all
      const float cell = std::max(compact_cell, 24.0f / static_cast<float>(cols));
      b.cell_w[0] = b.cell_w[1] = b.cell_w[2] = cell;
    } else {
      TemplateCellWidths(state, stage, reserved, b.cell_w);
    }
    // The mask's and the dropout's frames are the weights' whether they are on or off: the
    // same box either way.
    const Stage framed =
        stage == Stage::kMask || stage == Stage::kWeightsDropped ? Stage::kWeights : stage;
    HeatmapSlot& slot = state.heatmaps[StageIndex(framed)];
    HeatmapViewSpec view;
    view.id = StageName(framed);
    view.keep_masked_room = true;  // as DrawHeatmap draws it
    view.labels_key = state.shown_counts.input;
    for (int k = 0; k < 3; ++k) {
      const HeatmapFrame f = MeasureHeatmapFrame(state, slot, view, b.rows, b.cols, b.cell_w[k]);
      b.top_h[k] = f.top;
      b.label_w = f.left;
      b.right_w = f.right;
      b.min_image_h = f.min_image_h;
    }
    // The mask's legend ("1 allowed", "0 masked", heatmap_spec.cpp) is wider than the weights'
    // "masked": the mask's slot is that much wider, on or off.
    if (stage == Stage::kMask)
      b.right_w += std::max(0.0f, std::max(CellTextWidth(state, "1 allowed"),
                                           CellTextWidth(state, "0 masked")) -
                                      CellTextWidth(state, "masked")) +
                   1;
    // Beside a map of the same tokens it leaves the row labels to it; a head's pieces of the
    // tokens (projections.head_split "view_no_transpose") keep theirs.
    if (!boxes.empty()) {
      auto labels_of = [&](const StageBox& x) -> const std::vector<std::string>& {
        const bool framed = x.stage == Stage::kMask || x.stage == Stage::kWeightsDropped;
        return state.heatmaps[StageIndex(framed ? Stage::kWeights : x.stage)].content.row_labels;
      };
      b.same_rows_as_previous = labels_of(b) == labels_of(boxes.back());
    }
    boxes.push_back(b);
  }
  return boxes;
}

/// The sizes every map of the number layout shares, from the text's size.
StageMetrics GridMetrics(const AppState& state) {
  StageMetrics m;
  const float small = state.fonts.small ? state.fonts.small->FontSize : ImGui::GetFontSize();
  m.cell_h = std::ceil(small + 3);
  m.gap_x = ImGui::GetFontSize();
  m.gap_y = 6;
  m.row_label_gap = 8;
  return m;
}

/// The first head of the head grid's page: the kHeadGridMax heads that hold the head selected.
int HeadGridFirst(const AppState& state, int64_t heads) {
  const int64_t h = std::clamp<int64_t>(state.head, 0, std::max<int64_t>(heads - 1, 0));
  return static_cast<int>(h / AppState::kHeadGridMax * AppState::kHeadGridMax);
}

/// Uploads the weights of heads [first, first + count) (of the batch shown) into the head
/// grid's slots when the run, the batch or the page changed.
void UploadHeadMaps(AppState& state, const Stages& st, int first, int count) {
  const std::string key = std::to_string(state.shown_version) + "/" + std::to_string(state.batch) +
                          "/" + std::to_string(first) + "/" + std::to_string(count);
  if (key == state.head_maps_key) return;
  state.head_maps_key = key;
  state.head_maps_first = first;
  const MaskMatrix masked = (st.mask.array() == 0).cast<uint8_t>();
  for (int k = 0; k < count; ++k) {
    const int h = first + k;
    const Matrix& w = st.Head(st.weights, state.batch, h);
    HeatmapContent c = StageContent(st, state.shown, Stage::kWeights, h, state.batch,
                                    state.token_labels, ScanStage(Stage::kWeights, w));
    c.title = "head " + std::to_string(h) + ": weights";
    if (GroupsKv(st.shape))  // which K/V head it reads (GQA)
      c.title += " (K/V " + std::to_string(st.shape.KvHead(h)) + ")";
    UploadMatrix(state.head_maps[static_cast<size_t>(k)], w, c, masked);
    if (st.sink.empty()) continue;  // gpt-oss's sink: its column beside the weights
    const Matrix& sink = st.Head(st.sink, state.batch, h);
    UploadMatrix(state.head_sinks[static_cast<size_t>(k)], sink,
                 StageContent(st, state.shown, Stage::kSink, h, state.batch, state.token_labels,
                              ScanStage(Stage::kSink, sink)));
  }
}

/// The views of the head grid's slot k: its weights, and with a sink (scaling.sink) the sink's
/// column right of them by the overview's rule (PairSinkWithWeights).
struct HeadViews {
  HeatmapViewSpec weights, sink;
  bool with_sink = false;
};
HeadViews HeadMapViews(AppState& state, const Stages& st, int k, bool row_labels) {
  HeadViews v;
  v.weights.id = "head";
  v.weights.labels_key = state.shown_counts.input;
  v.weights.row_labels = row_labels;
  v.with_sink = !st.sink.empty();
  if (v.with_sink) {
    v.sink.id = "head_sink";
    v.sink.labels_key = state.shown_counts.input;
    PairSinkWithWeights(state, state.head_maps[static_cast<size_t>(k)], v.weights,
                        state.head_sinks[static_cast<size_t>(k)], v.sink);
  }
  return v;
}

/// The width of slot k's sink column with cells `cell` wide (0 without a sink).
float SinkColumnWidth(AppState& state, const HeadViews& v, int k, int T, float cell) {
  if (!v.with_sink) return 0;
  const HeatmapFrame f =
      MeasureHeatmapFrame(state, state.head_sinks[static_cast<size_t>(k)], v.sink, T, 1, cell);
  return f.left + f.right + cell;
}

/// One map of the head grid (head h in slot k, `size` for its weights), with its tooltip, and
/// with a sink its sink column (`sink_w` wide) right of it; a click on its title shows that head
/// in the stages' maps.
void DrawHeadMap(AppState& state, const Stages& st, int h, int k, bool row_labels, ImVec2 o,
                 ImVec2 size, float sink_w) {
  const Matrix& w = st.Head(st.weights, state.batch, h);
  const std::string id = "head_w" + std::to_string(h);
  HeadViews views = HeadMapViews(state, st, k, row_labels);
  if (views.with_sink && sink_w > 0) {
    const std::string sink_id = "head_s" + std::to_string(h);
    HeatmapViewSpec& sv = views.sink;
    sv.id = sink_id.c_str();
    const Matrix& sink = st.Head(st.sink, state.batch, h);
    sv.values = &sink;
    sv.wheel_zoom_with_ctrl = true;
    const HeatmapViewHover sh = DrawHeatmapView(state, state.head_sinks[static_cast<size_t>(k)], sv,
                                                ImVec2(o.x + size.x, o.y), ImVec2(sink_w, size.y));
    if (sh.active)
      ImGui::SetTooltip(
          "head %d: query %lld (\"%s\"): the sink took %s of the row; its keys' "
          "weights sum to %s",
          h, static_cast<long long>(sh.row), RowLabel(state, sh.row).c_str(),
          Num(sink(sh.row, 0)).c_str(), Num(1.0f - sink(sh.row, 0)).c_str());
  }
  HeatmapViewSpec& spec = views.weights;
  spec.id = id.c_str();
  spec.values = &w;
  spec.allowed = &st.mask;
  spec.wheel_zoom_with_ctrl = true;
  // The note keeps its room on a narrow map: the title is cut instead.
  spec.heading_note = h == state.head ? "selected" : "";
  spec.note_first = true;
  spec.title_tip = state.view.every_head
                       ? "Click to show this head's stages (leaves \"every head\")."
                       : "Click to show this head in the maps above.";
  if (state.hover.active && state.hover.stage == Stage::kWeights) {
    spec.highlight_row = state.hover.row;
    spec.highlight_col = state.hover.col;
  }
  const HeatmapViewHover hv =
      DrawHeatmapView(state, state.head_maps[static_cast<size_t>(k)], spec, o, size);
  if (hv.title_clicked) {
    Emit(state, SelectHead{h});
    if (state.view.every_head) Emit(state, SetEveryHead{false});
  }
  if (!hv.active) return;
  const std::string shared =
      GroupsKv(st.shape) ? "\n" + KvGroupLegend(st.shape, st.shape.KvHead(h)) : "";
  ImGui::SetTooltip("head %d: query %lld (\"%s\") \xE2\x86\x92 key %lld (\"%s\"): weight %s%s", h,
                    static_cast<long long>(hv.row), RowLabel(state, hv.row).c_str(),
                    static_cast<long long>(hv.col), RowLabel(state, hv.col).c_str(),
                    Num(w(hv.row, hv.col)).c_str(), shared.c_str());
}

/// The head grid's heading at `at`: what it shows, and with more heads than one page holds,
/// buttons to the previous and next page (they select that page's first head). Returns the
/// height used.
float DrawHeadGridHeading(AppState& state, const Shape& sh, int first, int count, ImVec2 at) {
  ImGui::SetCursorScreenPos(at);
  ImGui::TextUnformatted("Every head's weights, side by side");
  ImGui::SameLine();
  if (sh.H > AppState::kHeadGridMax) {
    ImGui::BeginDisabled(first == 0);
    if (ImGui::ArrowButton("heads_prev", ImGuiDir_Left))
      Emit(state, SelectHead{first - AppState::kHeadGridMax});
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::Text("heads %d\xE2\x80\x93%d of %lld", first, first + count - 1,
                static_cast<long long>(sh.H));
    ImGui::SameLine();
    ImGui::BeginDisabled(first + count >= sh.H);
    if (ImGui::ArrowButton("heads_next", ImGuiDir_Right))
      Emit(state, SelectHead{first + AppState::kHeadGridMax});
    ImGui::EndDisabled();
    ImGui::SameLine();
  }
  if (GroupsKv(sh))
    ImGui::TextDisabled(
        "each head has its own d_k columns of Q; K and V have %lld heads, each "
        "shared by %lld query heads in a row",
        static_cast<long long>(sh.Kv()), static_cast<long long>(sh.H / sh.Kv()));
  else
    ImGui::TextDisabled("each head attends with its own d_k columns of Q and K");
  return ImGui::GetFrameHeightWithSpacing() + 2;
}

/// The page of heads the grid shows: [first, first + count).
struct HeadPage {
  int first = 0, count = 0;
};

/// The page holding the head selected, uploaded; count 0 when there is nothing to show.
HeadPage PrepareHeadGrid(AppState& state, const Stages* st) {
  if (!st || st->shape.H <= 1 || !state.renderer) return {};
  const int first = HeadGridFirst(state, st->shape.H);
  const int count =
      static_cast<int>(std::min<int64_t>(st->shape.H - first, AppState::kHeadGridMax));
  UploadHeadMaps(state, *st, first, count);
  return {first, count};
}

/// The head grid under the notebook-sized overview: the page's heads side by side, wrapping,
/// their numbers printed as above. Returns the height used.
float DrawHeadGrid(AppState& state, ImVec2 at, float width) {
  const Stages* st = ReadableStages(state);
  const HeadPage page = PrepareHeadGrid(state, st);
  if (page.count == 0) return 0;
  const int T = static_cast<int>(st->shape.T);
  float cell = 0;
  for (int h = page.first; h < page.first + page.count; ++h)
    cell = std::max(
        cell, NumberCellWidths(
                  state, Stage::kWeights, CellSource{&st->Head(st->weights, state.batch, h)},
                  [&](int64_t i, int64_t j) { return st->mask.rows() == T && !st->mask(i, j); })
                  .min);
  const float gap = ImGui::GetFontSize();
  float x = 0, y = at.y + DrawHeadGridHeading(state, st->shape, page.first, page.count, at);
  float row_h = 0;
  for (int k = 0; k < page.count; ++k) {
    HeadViews probe = HeadMapViews(state, *st, k, x == 0);
    HeatmapFrame f = MeasureHeatmapFrame(state, state.head_maps[k], probe.weights, T, T, cell);
    const float sink_w = SinkColumnWidth(state, probe, k, T, cell);
    float w = f.left + f.right + T * cell;
    if (x > 0 && x + w + sink_w > width) {  // a new row, labelled
      x = 0;
      y += row_h + 6;
      probe = HeadMapViews(state, *st, k, true);
      f = MeasureHeatmapFrame(state, state.head_maps[k], probe.weights, T, T, cell);
      w = f.left + f.right + T * cell;
    }
    row_h = f.top + std::max(T * f.cell_h, f.min_image_h) + 6;
    DrawHeadMap(state, *st, page.first + k, k, probe.weights.row_labels, ImVec2(at.x + x, y),
                ImVec2(w, row_h), sink_w);
    x += w + sink_w + gap;
  }
  return y + row_h - at.y;
}

/// "every head": the page's heads fill the view in the grid of columns that gives them the
/// largest cells (numbers printed where they fit), the first column labelled with the tokens.
void DrawEveryHead(AppState& state, ImVec2 origin, ImVec2 avail) {
  const Stages* st = ReadableStages(state);
  const HeadPage page = PrepareHeadGrid(state, st);
  if (page.count == 0) return;
  const float top = DrawHeadGridHeading(state, st->shape, page.first, page.count, origin);
  const float gap = ImGui::GetFontSize() * 0.75f;
  const float T = static_cast<float>(st->shape.T);
  const HeatmapFrame labelled = MeasureHeatmapFrame(
      state, state.head_maps[0], HeadMapViews(state, *st, 0, true).weights, 1, 1, 1);
  const HeadViews plain_views = HeadMapViews(state, *st, 0, false);
  const HeatmapFrame plain =
      MeasureHeatmapFrame(state, state.head_maps[0], plain_views.weights, 1, 1, 1);
  // With a sink, each head's sink column (one cell wide) and its frame beside the weights.
  const float sink_frame = SinkColumnWidth(state, plain_views, 0, 1, 0);
  const float sink_cells = plain_views.with_sink ? 1.0f : 0.0f;
  int best_cols = 1;
  float best_cell = 0;
  for (int cols = 1; cols <= page.count; ++cols) {
    const int rows = (page.count + cols - 1) / cols;
    const float w = (avail.x - (labelled.left - plain.left) - (cols - 1) * gap) / cols -
                    plain.left - plain.right - sink_frame;
    const float h = (avail.y - top - (rows - 1) * gap) / rows - plain.top;
    const float cell = std::min(w / (T + sink_cells), h / T);
    if (cell > best_cell) best_cell = cell, best_cols = cols;
  }
  const int rows = (page.count + best_cols - 1) / best_cols;
  const float map_h = (avail.y - top - (rows - 1) * gap) / rows;
  const float sink_w = plain_views.with_sink ? sink_frame + best_cell : 0.0f;
  float y = origin.y + top;
  for (int r = 0, k = 0; r < rows; ++r, y += map_h + gap) {
    float x = origin.x;
    for (int c = 0; c < best_cols && k < page.count; ++c, ++k) {
      const float w = (c == 0 ? labelled.left : plain.left) + plain.right + best_cell * T;
      DrawHeadMap(state, *st, page.first + k, k, c == 0, ImVec2(x, y), ImVec2(w, map_h), sink_w);
      x += w + sink_w + gap;
    }
  }
}

/// Inside the canvas: remembers its visible part, and on entering a tour step whose map is not
/// wholly in view, scrolls to bring the map's top to the top (once, so the learner can scroll
/// away).
void ScrollToTourMap(AppState& state) {
  const ImVec2 pos = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
  state.heatmap_canvas = ScreenRect{pos, ImVec2(pos.x + size.x, pos.y + size.y)};
  TourState& tour = state.tour;
  if (!tour.active || tour.scrolled_step == tour.step) return;
  tour.scrolled_step = tour.step;
  const std::optional<Stage> stage =
      TargetStage(TourSteps()[static_cast<size_t>(tour.step)].target);
  if (!stage) return;
  const ScreenRect& r = state.heatmap_cells[StageIndex(*stage)];
  if (!r.valid() || (r.min.y >= pos.y && r.max.y <= pos.y + size.y)) return;
  ImGui::SetScrollY(ImGui::GetScrollY() + r.min.y - pos.y - 4);
}

/// On a canvas too small for every map in a window under 1280 x 800 (1024 x 700,
/// StartsAtTheResult), the result first: when the maps or the canvas change (not on a toggle, which
/// keeps the boxes), scrolls so that the weights and the context are in view, if they fit together.
/// The learner scrolls up for X, Q, K, V.
void ScrollToResult(AppState& state, const StageGrid& grid, const std::vector<StageBox>& boxes,
                    float view_h) {
  std::string key = std::to_string(view_h) + "/" + std::to_string(ImGui::GetWindowWidth());
  for (const StageBox& b : boxes)
    key += "/" + std::to_string(StageIndex(b.stage)) + "x" + std::to_string(b.rows) + "x" +
           std::to_string(b.cols);
  if (key == state.grid_scroll_key) return;
  state.grid_scroll_key = key;
  float y0 = -1, y1 = -1;
  for (const PlacedStage& p : grid.maps) {
    if (p.stage == Stage::kWeights) y0 = p.y;
    if (p.stage == Stage::kContext) y1 = p.y + p.h;
  }
  const ImVec2 window = ImGui::GetIO().DisplaySize;
  if (grid.fits || y0 < 0 || y1 < 0 || y1 <= view_h ||
      !StartsAtTheResult(window.x, window.y, state.content_scale)) {
    ImGui::SetScrollY(0);
    return;
  }
  ImGui::SetScrollY(std::max(0.0f, std::min(y0, y1 - view_h + 4)));
}

/// Draws the number layout on a canvas that scrolls when it is taller than `avail`, the head grid
/// under it.
void DrawNumberGrid(AppState& state, const std::vector<StageBox>& boxes, ImVec2 avail) {
  const float scrollbar = ImGui::GetStyle().ScrollbarSize;
  const float chips_h = ChipText(state, Stage::kX) ? ImGui::GetFrameHeight() + 4 : 0;
  const StageGrid grid =
      LayOutStageGrid(boxes, GridMetrics(state), avail.x - scrollbar, avail.y - chips_h);
  state.grid_decimals = grid.decimals;
  ImGui::BeginChild("numbers_canvas", avail, false, ImGuiWindowFlags_NoBackground);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float top = origin.y + DrawChips(state, origin);
  for (size_t k = 0; k < grid.maps.size(); ++k) {
    const PlacedStage& p = grid.maps[k];
    const ImVec2 o(origin.x + p.x, top + p.y);
    state.heatmap_cells[StageIndex(p.stage)] = ScreenRect{o, ImVec2(o.x + p.w, o.y + p.h)};
    if (p.reserved) {
      DrawReservedSlot(state, p.stage, o, ImVec2(p.w, p.h));
      continue;
    }
    // Each map its own colorbar (the boxes were measured so): the sink's column too, whose
    // one cell needs the room that sharing the weights' colorbar would take from it.
    DrawHeatmap(state, p.stage, o, ImVec2(p.w, p.h), MapMode::kCanvas, p.row_labels);
  }
  float y = top + grid.height + 6;
  y += DrawHeadGrid(state, ImVec2(origin.x, y), avail.x - scrollbar);
  ImGui::SetCursorScreenPos(ImVec2(origin.x, y));
  ImGui::Dummy(ImVec2(1, 1));
  ScrollToResult(state, grid, boxes, avail.y - (top - origin.y));
  ScrollToTourMap(state);
  ImGui::EndChild();
}

/// Every stage in the order of the computation. Notebook-sized (at most 12 tokens): the number
/// layout, every number printed. Larger: X, Q, K, V and the scores on the first row; the mask,
/// logits, weights, dropout and context on the second, the mask's and dropout's slots kept.
void DrawPipeline(AppState& state, ImVec2 origin, ImVec2 avail) {
  const std::vector<Stage> stages = GridStages(state);
  const std::vector<StageBox> boxes =
      GridBoxes(state, stages, avail.x - ImGui::GetStyle().ScrollbarSize);
  if (!boxes.empty()) {
    DrawNumberGrid(state, boxes, avail);
    return;
  }
  std::vector<Stage> top, bottom;
  for (Stage s : stages) (RowOf(s).overview_row == 0 ? top : bottom).push_back(s);
  const float gap_y = 4;
  const float top_h = std::floor((avail.y - gap_y) * 0.46f);
  DrawRow(state, top, origin, ImVec2(avail.x, top_h));
  const ImVec2 mid(origin.x, origin.y + top_h + gap_y);
  const float chips_h = DrawChips(state, mid);
  DrawRow(state, bottom, ImVec2(mid.x, mid.y + chips_h),
          ImVec2(avail.x, avail.y - top_h - gap_y - chips_h));
}

/// One stage over most of the view, its values printed where they fit; the other stages as a
/// strip of thumbnails under it (click one to focus it, click the title to go back).
void DrawFocused(AppState& state, Stage focus, ImVec2 origin, ImVec2 avail) {
  const float font = ImGui::GetFontSize();
  const float strip_h = std::min(font * 5.5f, avail.y * 0.25f);
  const float main_h = avail.y - strip_h - 6;
  state.heatmap_cells[StageIndex(focus)] =
      ScreenRect{origin, ImVec2(origin.x + avail.x, origin.y + main_h)};
  DrawHeatmap(state, focus, origin, ImVec2(avail.x, main_h), MapMode::kFocused);
  std::vector<Stage> others;
  for (Stage s : AllStages())  // pipeline order (the sink after the weights)
    if (s != focus && StageShown(state, s)) others.push_back(s);
  if (others.empty()) return;
  const float gap = font * 0.5f;
  const float w = std::min(font * 9.0f, (avail.x - gap * (others.size() - 1)) / others.size());
  const float y = origin.y + main_h + 6;
  for (size_t k = 0; k < others.size(); ++k) {
    const ImVec2 o(origin.x + k * (w + gap), y);
    state.heatmap_cells[StageIndex(others[k])] = ScreenRect{o, ImVec2(o.x + w, o.y + strip_h)};
    DrawHeatmap(state, others[k], o, ImVec2(w, strip_h), MapMode::kThumbnail);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] The panel

void DrawHeatmapsPanel(AppState& state) {
  state.grid_decimals = 0;  // the number layout, if drawn, says its decimals
  UploadDirty(state);
  DrawToolbar(state);
  ImGui::NewLine();
  if (!HasShownRun(state)) {
    ErrorText("Nothing to show yet: " + state.error);
    return;
  }
  if (!state.error.empty()) {
    // Loud, above the maps: the edit did not run, and what is shown is the last one that did.
    ImGui::PushStyleColor(ImGuiCol_ChildBg, ImVec4(0.45f, 0.12f, 0.12f, 1.0f));
    const float h =
        ImGui::GetTextLineHeightWithSpacing() * 2 + ImGui::GetStyle().WindowPadding.y * 2;
    ImGui::BeginChild("error", ImVec2(0, h), false, ImGuiWindowFlags_NoScrollbar);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::Text("This edit cannot run: %s", state.error.c_str());
    // Light pink on the dark red: 8.3:1 contrast (WCAG AA asks 4.5:1); TextDisabled had 2.7:1.
    ImGui::TextColored(ImVec4(1.0f, 0.84f, 0.84f, 1.0f),
                       "The heatmaps show the last settings that ran. Fix the setting, or undo "
                       "(Ctrl+Z).");
    ImGui::PopTextWrapPos();
    ImGui::EndChild();
    ImGui::PopStyleColor();
  }
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (state.focus && StageShown(state, *state.focus))
    DrawFocused(state, *state.focus, origin, avail);
  else if (state.view.every_head && ShownShape(state).H > 1)
    DrawEveryHead(state, origin, avail);
  else
    DrawPipeline(state, origin, avail);
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + avail.y));
  ImGui::Dummy(ImVec2(0, 0));
}

float HeatmapsPanelNeed(AppState& state, float width) {
  // The contents (their labels) first: the frames measured below are cached with them.
  UploadDirty(state);
  if (!HasShownRun(state) || state.focus || (state.view.every_head && ShownShape(state).H > 1))
    return 0;
  const float inner = width - ImGui::GetStyle().ScrollbarSize;
  const std::vector<StageBox> boxes = GridBoxes(state, GridStages(state), inner);
  if (boxes.empty()) return 0;
  const float toolbar = ImGui::GetFrameHeightWithSpacing() * 2;  // the toolbar and its NewLine
  const float chips = ChipText(state, Stage::kX) ? ImGui::GetFrameHeight() + 4 : 0;
  return toolbar + chips + StageGridNeed(boxes, GridMetrics(state), inner, 4) + 4;
}

}  // namespace attnlab::gui
