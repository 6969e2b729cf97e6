// heatmap_spec.h: one heatmap as it should be presented, decided once, drawn twice. The window's
// GPU view (app/gui/heatmap_view.cpp) and the CPU figure renderer (figure.cpp) both draw from a
// HeatmapSpec, so every presentation rule lives here and nowhere else: the title and formula,
// the axis labels (whitespace made visible), the colour scale (sequential or diverging, its
// range), the colorbar ticks, the legends (masked, NaN, inf, the mask's allowed/masked), when
// cell values are printed, their text and its contrast colour, and how labels are thinned and
// cut. No GL, no ImGui, no values: a spec describes a matrix that its caller owns.
//
// Two halves:
//   HeatmapContent  what the heatmap is (stage, head, batch, title, labels, signed or not),
//                   the same whatever colours the learner picks;
//   HeatmapSpec     content + how it looks under the learner's PresentationOptions.
//
// Legend: T tokens, d_out context width, H heads, B batch.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnlab/base/enum_names.h"
#include "attnlab/figures/colormap.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/stages.h"  // Stage and its table

namespace attnlab {

/// How the colours of the weights (the sequential map) are chosen; other stages ignore it.
enum class RangeMode {
  kAuto,    ///< kFixed up to 32 keys (the notebooks' sizes) and whenever the rows' largest
            ///< weights are typically >= 0.25; else kLog, where [0, 1] would show almost
            ///< nothing (at T = 512 every weight is about 1/T) and log10 shows how much
  kFixed,   ///< over [0, max(1, largest)]: a sharper softmax shows as brighter cells
  kData,    ///< over [0, the largest weight of the rows that are not one-hot]: a causal row 0
            ///< (one allowed key, weight 1) does not flatten the rest
  kPerRow,  ///< each row over [0, that row's largest weight]: where each query looks
  kLog,     ///< log10 of the weight over [10^floor(log10(smallest > 0)), 1], no lower than
            ///< two decades under 1/T (nor 1e-6)
};

/// The command line's --range words, in RangeMode's order (enum_names.h reads them).
inline constexpr EnumName<RangeMode> kRangeModes[] = {{RangeMode::kAuto, "auto"},
                                                      {RangeMode::kFixed, "fixed"},
                                                      {RangeMode::kData, "data"},
                                                      {RangeMode::kPerRow, "per-row"},
                                                      {RangeMode::kLog, "log"}};
constexpr const auto& AllNames(RangeMode) { return kRangeModes; }
/// "auto", "fixed", "data", "per-row", "log": Name(mode).
inline const char* RangeModeName(RangeMode mode) { return Name(mode); }
/// The mode named `name` (RangeModeName), or nullopt: ParseName<RangeMode>(name).
inline std::optional<RangeMode> ParseRangeMode(const std::string& name) {
  return ParseName<RangeMode>(name);
}

/// How a value becomes a position on the colour scale (HeatmapSpec::scaling).
enum class ColorScaling {
  kLinear,  ///< v itself, over spec.range
  kPerRow,  ///< v / row_scale[row], over [0, 1]
  kLog,     ///< log10(v), over spec.range in decades (v <= 0 takes the bottom colour)
};

/// When cell values are printed: auto prints them when the grid is at most 12 x 12.
enum class ValuesMode { kAuto, kOn, kOff };
/// ValuesMode's words (--values, figure metadata, scripts, the window's combo), in its order.
inline constexpr EnumName<ValuesMode> kValuesModes[] = {
    {ValuesMode::kAuto, "auto"}, {ValuesMode::kOn, "on"}, {ValuesMode::kOff, "off"}};
constexpr const auto& AllNames(ValuesMode) { return kValuesModes; }

/// The learner's choices that change how heatmaps look, never what they show.
struct PresentationOptions {
  std::string colormap;  ///< a name from Colormaps() for every heatmap; empty: the two below
  std::string sequential_colormap = "viridis";  ///< mask and weights (values >= 0)
  std::string diverging_colormap = "coolwarm";  ///< signed stages, centred on zero
  RangeMode range = RangeMode::kAuto;
  ValuesMode values = ValuesMode::kAuto;
  bool operator==(const PresentationOptions&) const = default;
};

/// What a heatmap is, independent of colours.
struct HeatmapContent {
  Stage stage = Stage::kWeights;
  int64_t head = 0, batch = 0;
  std::string title;     ///< the stage and its formula: "weights = softmax(logits)"
  std::string subtitle;  ///< head, batch and settings: "head 1 · scaled by 1/√d_k, multiplier 1"
                         ///< and then the dtype when it is not float32 ("float64",
                         ///< "bfloat16", "float16"; "float32 (upcast softmax)" for the weights
                         ///< of scaling.softmax_dtype float32; none on the mask)
  std::string help;      ///< one sentence on what the stage is (tooltips)
  std::vector<std::string> row_labels;  ///< one per row: query tokens as VisibleToken shows them
  std::vector<std::string> col_labels;  ///< key tokens, or "d0".. for X, Q, K, V and the context
  std::string row_axis = "query", col_axis = "key";  ///< X, Q, K, V, context: "dimension"
  bool diverging = false;     ///< signed data: a diverging colormap centred on zero
  bool hatch_masked = false;  ///< masked cells are drawn hatched (mask, logits, weights)
};

/// A colorbar tick: its value and its text.
struct ColorbarTick {
  double value = 0.0;
  std::string text;
};

/// What a legend entry explains (cells that are not on the colour scale, or the mask's values).
enum class LegendKind { kAllowed, kMasked, kNan, kInf, kNote };
struct LegendEntry {
  LegendKind kind = LegendKind::kMasked;
  std::string text;  ///< "masked", "NaN", "±inf (the scale's ends)", "1 allowed", "0 masked",
                     ///< or a note without a swatch ("colours: per row")
};

/// A heatmap as it should be presented.
struct HeatmapSpec : HeatmapContent {
  const Colormap* colormap = nullptr;  ///< never null after MakeHeatmapSpec
  ValueRange range;                    ///< the colorbar's ends (kLog: in decades, e.g. -3..0)
  ColorScaling scaling = ColorScaling::kLinear;
  std::vector<float> row_scale;     ///< kPerRow: each row's largest weight (the row's "1")
  std::vector<ColorbarTick> ticks;  ///< nice round values inside range, low to high
  bool mask_legend = false;         ///< the mask: a two-entry legend (allowed, masked), no colorbar
  std::vector<LegendEntry> legends;  ///< shown under the colorbar (or as the mask's legend)
  bool values_wanted = false;  ///< ValuesMode says print (auto: rows, cols <= 12), if they fit
  int64_t rows = 0, cols = 0;
};

/// Whether ValuesMode::kAuto prints the numbers of a rows x cols map (if they fit): at most 12
/// rows and 12 columns, a size a learner reads cell by cell. Errors: none.
inline bool AutoPrintsValues(int64_t rows, int64_t cols) { return rows <= 12 && cols <= 12; }

/// Whether a rows x cols map prints its numbers (where they fit) under `mode`: always with
/// kOn, never with kOff, AutoPrintsValues with kAuto. HeatmapSpec::values_wanted. Errors: none.
inline bool ValuesWanted(ValuesMode mode, int64_t rows, int64_t cols) {
  return mode == ValuesMode::kOn || (mode == ValuesMode::kAuto && AutoPrintsValues(rows, cols));
}

/// The one rule for signed colours (the row's StageColours): scores, logits, X, Q, K, V and the
/// context always; weights only when some finite weight is negative ("sum" normalization can
/// give them); the mask and the sink never.
bool StageIsDiverging(Stage stage, const ValueScan& scan);

/// The head whose columns a projected stage shows for query head `head`: the K/V head it reads
/// for the key side (StageIsKeySide), `head` itself for Q and Q_rot.
inline int64_t StageColumnHead(Stage s, const Shape& sh, int64_t head) {
  return StageIsKeySide(s) ? sh.KvHead(head) : head;
}

/// ScanValues of a stage's matrix, plus for the weights (the stages RangeMode applies to) each
/// row's largest value and the smallest positive one, which kData, kPerRow and kLog need.
ValueScan ScanStage(Stage stage, const Matrix& m);

/// Each token as VisibleToken (text.h) shows it: the labels of both axes.
std::vector<std::string> TokenLabels(const std::vector<std::string>& tokens);

/// The content of `stage` for `head` and `batch` of a run of `scenario` (shape and tokens from
/// `stages`). `token_labels`: TokenLabels(stages.tokens), passed in so callers that draw many
/// heatmaps of one run make them once. `scan`: ScanValues of the stage's matrix. With
/// projections.head_split "view_no_transpose" and several heads, a head's rows (and the key
/// columns of its T x T stages) are labelled with the token piece they read, "journey[2:4]"
/// (HeadSplitSource), since row r is no longer token r.
HeatmapContent StageContent(const Stages& stages, const Scenario& scenario, Stage stage,
                            int64_t head, int64_t batch,
                            const std::vector<std::string>& token_labels, const ValueScan& scan);

/// The range the colours span, the same on screen and in figures: [0, 1] for the mask; weights
/// on a sequential map as `mode` says; symmetric [-a, a] around zero for diverging data
/// (a = the largest finite magnitude); else [lo, hi] of the finite values.
ValueRange StageRange(Stage stage, bool diverging, const ValueScan& scan,
                      RangeMode mode = RangeMode::kFixed);

/// The mode `mode` comes to for `stage` (rows x cols, signed or not, scan from ScanStage):
/// kAuto resolved; modes other than kFixed only for weights on a sequential map, and kData,
/// kPerRow and kLog only with the scan's row maxima (else kFixed).
RangeMode ResolveRangeMode(Stage stage, bool diverging, int64_t cols, const ValueScan& scan,
                           RangeMode mode);

/// About `target` nice round tick values (1, 2, 2.5 or 5 times a power of ten) in [lo, hi].
/// Used by colorbars and by the window's plots.
std::vector<double> NiceTicks(double lo, double hi, int target);

/// The spec of `content` with `rows` x `cols` values whose scan is `scan`. `any_masked`: some
/// cell is masked (the "masked" legend). Errors: std::invalid_argument for an unknown colormap.
HeatmapSpec MakeHeatmapSpec(const HeatmapContent& content, int64_t rows, int64_t cols,
                            const ValueScan& scan, bool any_masked,
                            const PresentationOptions& options);

/// Where v of row `row` falls on the colour scale, in [0, 1] (the spec's scaling; row is used by
/// kPerRow only). NaN is the caller's.
float ScalePosition(const HeatmapSpec& spec, float v, int64_t row);

/// A cell's colour: kNanColor for NaN, else the colormap at ScalePosition (masked cells are the
/// caller's: MaskedColorAt, since the hatch depends on the pixel).
Rgb CellColor(const HeatmapSpec& spec, float v, int64_t row = 0);

/// Black or white, whichever contrasts more with `background` (WCAG relative luminance).
Rgb CellInk(Rgb background);

/// Measures text in pixels at the renderer's font (the screen's ImGui font, the figure's
/// TrueType rasteriser).
using MeasureText = std::function<float(std::string_view)>;

/// A cell's value as printed: 4 decimals as the notebooks print them, else 3, else 2 (never
/// fewer) — the most that fits `max_width`; "…" when even 2 decimals do not fit (the
/// tooltip has the value), "" only when not even that fits.
std::string FittedCellValue(float v, float max_width, const MeasureText& measure);

/// Whether a cell is drawn hatched, the one rule of the window (shaders/heatmap.frag follows it)
/// and the figures: masked and not NaN. A NaN is drawn as NaN (kNanColor, "nan") whether the
/// mask forbids its cell or not: a row that sees no key is 0 / 0, and a learner must see it.
inline bool DrawnHatched(bool masked, float v) { return masked && !std::isnan(v); }

/// What a cell of `stage` prints, the one rule of the overview, compare, trick and figures: the
/// mask "1" (allowed) or "0" (masked); a masked cell of the logits "-inf" and of the weights
/// (before or after dropout) "0" when it holds that, as PyTorch prints them (the hatch stays a
/// second cue); any other value FittedCellValue (a masked cell's nan, a finite fill such as
/// -65504, the 1 / T a finite fill gives a row that sees no key).
std::string CellText(Stage stage, float v, bool masked, float max_width,
                     const MeasureText& measure);

/// What every cell of one map prints (values and masked row by row, the same length): CellText's
/// rule with one number of decimals for the whole map, the most of 4, 3, 2 at which every
/// number that fits at all fits, so a column never mixes "0.181" and "-0.07"; a number that
/// does not fit even at 2 decimals is "…". Used by the window and the figures alike.
std::vector<std::string> MapCellTexts(Stage stage, const std::vector<float>& values,
                                      const std::vector<uint8_t>& masked, float max_width,
                                      const MeasureText& measure);

/// The shortest text CellText prints for the cell (2 decimals): what a layout that wants every
/// number on screen must make room for.
std::string ShortestCellText(Stage stage, float v, bool masked);

/// A label cut to `max_width` with an ellipsis (never inside a code point); unchanged if it fits.
/// The longest prefix (at least one code point shorter) whose width with "…" is at most
/// `max_width`, found by doubling then halving the prefix's length (widths grow with it): the
/// label is measured once whole, then about 2 log2(n) prefixes at most twice as long as the one
/// kept, so a 100,000-character word costs little more than one measure of it. Errors: none.
std::string FitLabel(const std::string& label, float max_width, const MeasureText& measure);

/// Every how-many-th label to draw so labels of extent `label_extent` never overlap along cells
/// of extent `cell_extent` (both in pixels): 1 when each fits its cell.
int LabelStep(float label_extent, float cell_extent);

/// Whether a map's column labels are drawn rotated: when the widest label, plus a gap of
/// `gap` pixels, is wider than one cell (all in pixels), horizontal labels would overlap. The
/// one rule for the window (gap 4) and the figures (gap 4 × the figure's scale). Errors: none.
bool RotateColumnLabels(float widest_label, float gap, float cell_width);

/// The spec as JSON (title, subtitle, labels, colormap, range, ticks, legends, values_wanted),
/// for the window's --layout and tests that check screen and figures agree.
nlohmann::json HeatmapSpecJson(const HeatmapSpec& spec);

}  // namespace attnlab
