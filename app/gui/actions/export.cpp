// export.cpp: see export.h.
#include "gui/actions/export.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <utility>

#include "attnlab/figures/inference_views.h"
#include "gui/actions/views.h"
#include "gui/state/app_state.h"
#include "gui/state/inference_view.h"
#include "gui/state/session.h"
#include "gui/widgets/heatmap_view.h"
#include "gui/widgets/stage_info.h"

namespace attnlab::gui {
namespace {

/// "out" -> "out.png"; paths with an extension are left alone.
std::string WithPng(const std::string& path) {
  return std::filesystem::path(path).has_extension() ? path : path + ".png";
}

/// The figure format a path's extension names: SVG or PDF for .svg and .pdf, else PNG.
ExportFormat FigureFormatOf(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".svg"   ? ExportFormat::kSvg
         : ext == ".pdf" ? ExportFormat::kPdf
                         : ExportFormat::kPng;
}

}  // namespace

FigureOptions ScreenFigureOptions(const AppState& state) {
  FigureOptions options;
  static_cast<PresentationOptions&>(options) = ScreenPresentation(state);
  return options;
}

bool ExportOneStage(const AppState& state, Stage stage, const std::string& path,
                    std::string* message) {
  if (!HasShownRun(state)) {
    *message = "Not exported: nothing has run yet";
    return false;
  }
  const std::string file = WithPng(path);
  try {
    const int64_t head = StageIsPerHead(stage) ? state.head : 0;
    const auto size = StageSize(stage, ShownShape(state));
    CheckExportMemory(state.shown, {size}, FigureFormatOf(file), ScreenFigureOptions(state), false);
    const StageView view = ExtractStage(ShownStages(state), state.shown, stage, head, state.batch);
    ExportView(view, ScreenFigureOptions(state), FigureFormatOf(file), file, &state.shown);
  } catch (const std::exception& e) {
    *message = std::string("Not exported: ") + e.what();
    return false;
  }
  *message = std::string("Saved the ") + StageName(stage) + " heatmap to " + AbsolutePath(file);
  return true;
}

bool ExportEveryStage(const AppState& state, const std::string& dir, std::string* message) {
  if (!HasShownRun(state)) {
    *message = "Not exported: nothing has run yet";
    return false;
  }
  const FigureOptions options = ScreenFigureOptions(state);
  std::vector<std::string> written;
  try {
    std::vector<std::pair<int64_t, int64_t>> sizes;
    for (Stage s : AllStages()) sizes.push_back(StageSize(s, ShownShape(state)));
    CheckExportMemory(state.shown, sizes, ExportFormat::kPng, options, true);
    written = ExportAll(ShownStages(state), state.shown, options, ExportFormat::kPng, dir);
  } catch (const std::exception& e) {
    *message = std::string("Not exported: ") + e.what();
    return false;
  }
  *message = "Saved " + std::to_string(written.size()) + " figures to " + AbsolutePath(dir);
  return true;
}

namespace {

/// The shown step's view of the central Decode or Tiled view, with its default file stem;
/// nullopt with the reason in *why.
std::optional<std::pair<StageView, std::string>> ShownStepView(const AppState& state,
                                                               std::string* why) {
  const InferenceViewState& v = state.inference;
  const Stages* st = ReadableStages(state);
  const bool decode = state.central == CentralView::kDecode;
  if (!decode && state.central != CentralView::kTiled) {
    *why = "the Decode or Tiled view is not on screen";
    return std::nullopt;
  }
  if (st == nullptr || (decode ? !v.decode : !v.tiled)) {
    *why = decode ? (v.decode_error.empty() ? "no decode run" : v.decode_error)
                  : (v.tiled_error.empty() ? "no tiled run" : v.tiled_error);
    return std::nullopt;
  }
  if (decode) {
    const int64_t step = std::min<int64_t>(v.decode_step, DecodeStepCount(state) - 1);
    const int64_t head = std::clamp<int64_t>(state.head, 0, st->shape.H - 1);
    const int64_t batch = std::clamp<int64_t>(state.batch, 0, st->shape.B - 1);
    return std::make_pair(DecodeStepView(*st, state.shown, *v.decode, step, head, batch),
                          "decode_step" + std::to_string(step) + "_h" + std::to_string(head) +
                              "_b" + std::to_string(batch));
  }
  const int64_t step = std::min<int64_t>(v.tile_step, TileStepCount(state) - 1);
  return std::make_pair(TileStateView(*st, state.shown, *v.tiled, step),
                        "tile" + std::to_string(step));
}

}  // namespace

bool ExportInferenceStep(const AppState& state, const std::string& path, std::string* message) {
  const std::string file = WithPng(path);
  try {
    std::string why;
    const auto view = ShownStepView(state, &why);
    if (!view) {
      *message = "Not exported: " + why;
      return false;
    }
    const std::string ext = std::filesystem::path(file).extension().string();
    const ExportFormat format =
        ParseExportFormat(ext.empty() ? "" : ext.substr(1)).value_or(ExportFormat::kPng);
    // The command line's options, not the window's colormaps and ranges (inference_views.h).
    ExportView(view->first, StepFigureOptions(), format, file, &state.shown);
    *message = "Saved \"" + view->first.title + "\" to " + AbsolutePath(file);
    return true;
  } catch (const std::exception& e) {
    *message = std::string("Not exported: ") + e.what();
    return false;
  }
}

std::string DefaultStepExportName(const AppState& state) {
  std::string why;
  try {
    const auto view = ShownStepView(state, &why);
    return (view ? view->second : std::string("step")) + ".png";
  } catch (const std::exception&) {
    return "step.png";
  }
}

bool ExportCompareMap(AppState& state, CompareMap map, const std::string& path,
                      std::string* message) {
  RefreshCompare(state, true);
  const CompareState& c = state.compare;
  const std::optional<StageView>& view = map == CompareMap::kA   ? c.view_a
                                         : map == CompareMap::kB ? c.view_b
                                                                 : c.diff;
  if (!view) {
    *message = "Not exported: " + (c.error.empty() ? std::string("nothing to compare") : c.error);
    return false;
  }
  const std::string file = WithPng(path);
  try {
    ExportView(*view, ScreenFigureOptions(state), FigureFormatOf(file), file);
  } catch (const std::exception& e) {
    *message = std::string("Not exported: ") + e.what();
    return false;
  }
  *message = "Saved \"" + view->title + "\" to " + AbsolutePath(file);
  return true;
}

std::string DefaultCompareExportName(const AppState& state, CompareMap map) {
  const CompareState& c = state.compare;
  auto clean = [](std::string s) {
    std::string out;
    for (char ch : s)
      if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.')
        out += ch;
      else if (!out.empty() && out.back() != '-')
        out += '-';
    while (!out.empty() && out.back() == '-') out.pop_back();
    return out;
  };
  std::string name = std::string("compare_") + StageName(c.stage) + "_";
  if (map == CompareMap::kA) name += "A_" + clean(c.name_a);
  if (map == CompareMap::kB) name += "B_" + clean(c.name_b);
  if (map == CompareMap::kDifference) name += clean(c.name_a) + "_minus_" + clean(c.name_b);
  return name + ".png";
}

bool SetExportOption(ExportChoices& choices, const std::string& key, const std::string& value,
                     std::string* why) {
  ExportChoices c = choices;
  if (key == "format") {
    const std::optional<ExportFormat> f = ParseExportFormat(value);
    if (!f) return *why = "format: png, svg, pdf, csv or npy", false;
    c.format = *f;
  } else if (key == "stages") {
    c.stages = value == "this"       ? ExportStages::kThis
               : value == "pipeline" ? ExportStages::kPipeline
                                     : ExportStages::kChosen;
    c.chosen.clear();
    for (size_t start = 0; c.stages == ExportStages::kChosen && start <= value.size();) {
      const size_t comma = std::min(value.find(',', start), value.size());
      const std::optional<Stage> s = ParseStage(value.substr(start, comma - start));
      if (!s) return *why = "stages: this, pipeline or stage names separated by commas", false;
      c.chosen.push_back(*s);
      start = comma + 1;
    }
  } else if (key == "dpi") {
    char* end = nullptr;
    const long dpi = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end || dpi < 0 || dpi > 100000) return *why = "dpi: 0..100000", false;
    c.dpi = static_cast<int>(dpi);
  } else if (key == "width") {
    char* end = nullptr;
    const double w = std::strtod(value.c_str(), &end);
    const std::string unit = end ? end : "";
    if (value.empty() || !(w >= 0 && w <= 1000) || (w > 0 && unit != "cm" && unit != "in"))
      return *why = "width: a length such as 8cm or 3.5in, or 0", false;
    c.width = w;
    c.width_in_cm = unit != "in";
  } else if (key == "colorbar") {
    const std::optional<ColorbarMode> m = ParseColorbarMode(value);
    if (!m) return *why = "colorbar: auto, shared or per-panel", false;
    c.colorbar = *m;
  } else {
    return *why = "format, stages, dpi, width or colorbar", false;
  }
  choices = c;
  return true;
}

std::vector<Stage> ChosenStages(const AppState& state, const ExportChoices& choices, Stage stage) {
  switch (choices.stages) {
    case ExportStages::kPipeline:
      return PipelineStages(state.shown);
    case ExportStages::kChosen:
      if (!choices.chosen.empty()) return choices.chosen;
      break;
    case ExportStages::kThis:
      break;
  }
  return {stage};
}

FigureOptions ChosenFigureOptions(const AppState& state, const ExportChoices& choices) {
  FigureOptions options = ScreenFigureOptions(state);
  options.dpi = choices.dpi;
  if (choices.width > 0) options.width_inches = choices.width / (choices.width_in_cm ? 2.54 : 1);
  options.colorbar = choices.colorbar;
  return options;
}

namespace {

// The views of `stages` on screen (per-head stages of the head on screen), as the command line.
std::vector<StageView> ChosenViews(const AppState& state, const std::vector<Stage>& stages) {
  std::vector<StageView> views;
  for (Stage s : stages)
    views.push_back(ExtractStage(ShownStages(state), state.shown, s,
                                 StageIsPerHead(s) ? state.head : 0, state.batch));
  return views;
}

}  // namespace

bool ExportWithChoices(const AppState& state, Stage stage, const std::string& path,
                       std::string* message) {
  if (!HasShownRun(state)) {
    *message = "Not exported: nothing has run yet";
    return false;
  }
  const ExportChoices& c = state.export_choices;
  const std::vector<Stage> stages = ChosenStages(state, c, stage);
  try {
    const FigureOptions options = ChosenFigureOptions(state, c);
    std::vector<std::pair<int64_t, int64_t>> sizes;
    for (Stage s : stages) sizes.push_back(StageSize(s, ShownShape(state)));
    CheckExportMemory(state.shown, sizes, c.format, options, false);
    const std::vector<StageView> views = ChosenViews(state, stages);
    if (views.size() == 1)
      ExportView(views[0], options, c.format, path, &state.shown);
    else
      ExportPanels(views, state.shown, options, c.format, path);
  } catch (const std::exception& e) {
    *message = std::string("Not exported: ") + e.what();
    return false;
  }
  *message = "Saved " + std::to_string(stages.size()) +
             (stages.size() == 1 ? " stage" : " stages") + " to " + AbsolutePath(path);
  return true;
}

Image ExportPreview(const AppState& state, Stage stage, int max_width) {
  const ExportChoices& c = state.export_choices;
  const std::vector<StageView> views = ChosenViews(state, ChosenStages(state, c, stage));
  const Image full = RenderFigure(views, state.shown.title, ChosenFigureOptions(state, c));
  const int k = std::max(1, (full.width + max_width - 1) / std::max(1, max_width));
  Image small{full.width / k, full.height / k, {}};
  small.rgb.resize(static_cast<size_t>(small.width) * small.height * 3);
  for (int y = 0; y < small.height; ++y)
    for (int x = 0; x < small.width; ++x)
      for (int ch = 0; ch < 3; ++ch) {
        int sum = 0;
        for (int dy = 0; dy < k; ++dy)
          for (int dx = 0; dx < k; ++dx)
            sum += full.rgb[(static_cast<size_t>(y * k + dy) * full.width + x * k + dx) * 3 + ch];
        small.rgb[(static_cast<size_t>(y) * small.width + x) * 3 + ch] =
            static_cast<uint8_t>(sum / (k * k));
      }
  return small;
}

std::string DefaultExportName(const AppState& state, Stage stage) {
  const Shape& sh = ShownShape(state);
  std::string name = StageName(stage);
  if (StageIsPerHead(stage) && sh.H > 1) name += "_h" + std::to_string(state.head);
  if (sh.B > 1) name += "_b" + std::to_string(state.batch);
  return name + ".png";
}

}  // namespace attnlab::gui
