// export.h: the window's Export, through the same core functions as `attention-lab export`
// (attnlab::ExportView / ExportAll in figure.h), so the same state gives the same bytes.
#pragma once

#include <string>

#include "attnlab/figure.h"

namespace attnlab::gui {

struct AppState;

/// The figure options matching the screen: its colormaps and cell-value setting.
FigureOptions ScreenFigureOptions(const AppState& state, Stage stage);

/// Writes one stage (current head and batch) as PNG to `path`. Returns false with the reason in
/// *message on failure; on success *message says where the file went.
bool ExportOneStage(const AppState& state, Stage stage, const std::string& path,
                    std::string* message);

/// Writes every stage, head and batch as PNGs into `dir`. Same reporting.
bool ExportEveryStage(const AppState& state, const std::string& dir, std::string* message);

/// A default file name for a stage of the current view: "weights_h0_b0.png".
std::string DefaultExportName(const AppState& state, Stage stage);

}  // namespace attnlab::gui
