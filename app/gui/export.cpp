// export.cpp: see export.h.
#include "gui/export.h"

#include <cctype>
#include <filesystem>

#include "gui/app_state.h"
#include "gui/heatmap_view.h"
#include "gui/session.h"
#include "gui/stage_info.h"
#include "gui/views.h"

namespace attnlab::gui {
namespace {

/// "out" -> "out.png"; paths with an extension are left alone.
std::string WithPng(const std::string& path) {
  return std::filesystem::path(path).has_extension() ? path : path + ".png";
}

/// The figure format a path's extension names: SVG or PDF for .svg and .pdf, else PNG.
ExportFormat FigureFormatOf(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".svg" ? ExportFormat::kSvg : ext == ".pdf" ? ExportFormat::kPdf : ExportFormat::kPng;
}

}  // namespace

FigureOptions ScreenFigureOptions(const AppState& state) {
  FigureOptions options;
  static_cast<PresentationOptions&>(options) = ScreenPresentation(state);
  return options;
}

bool ExportOneStage(const AppState& state, Stage stage, const std::string& path,
                    std::string* message) {
  if (!state.engine.has_result()) {
    *message = "Not exported: nothing has run yet";
    return false;
  }
  const std::string file = WithPng(path);
  try {
    const int64_t head = StageIsPerHead(stage) ? state.head : 0;
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
  if (!state.engine.has_result()) {
    *message = "Not exported: nothing has run yet";
    return false;
  }
  const FigureOptions options = ScreenFigureOptions(state);
  std::vector<std::string> written;
  try {
    written = ExportAll(ShownStages(state), state.shown, options, ExportFormat::kPng, dir);
  } catch (const std::exception& e) {
    *message = std::string("Not exported: ") + e.what();
    return false;
  }
  *message = "Saved " + std::to_string(written.size()) + " figures to " + AbsolutePath(dir);
  return true;
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

std::string DefaultExportName(const AppState& state, Stage stage) {
  const Shape& sh = ShownStages(state).shape;
  std::string name = StageName(stage);
  if (StageIsPerHead(stage) && sh.H > 1) name += "_h" + std::to_string(state.head);
  if (sh.B > 1) name += "_b" + std::to_string(state.batch);
  return name + ".png";
}

}  // namespace attnlab::gui
