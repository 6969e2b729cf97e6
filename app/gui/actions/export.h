// export.h: the window's Export, through the same core functions as `attention-lab export`
// (attnlab::ExportView / ExportAll in figure.h), so the same state gives the same bytes.
#pragma once

#include <string>

#include "attnlab/figures/export.h"
#include "gui/state/actions.h"

namespace attnlab::gui {

struct AppState;

/// The figure options matching the screen: ScreenPresentation (colormaps, weights range, cell
/// values) at scale 1, for every export from the window.
FigureOptions ScreenFigureOptions(const AppState& state);

/// Writes one stage (current head and batch) as PNG to `path`. Returns false with the reason in
/// *message on failure; on success *message says where the file went.
bool ExportOneStage(const AppState& state, Stage stage, const std::string& path,
                    std::string* message);

/// Writes every stage, head and batch as PNGs into `dir`. Same reporting.
bool ExportEveryStage(const AppState& state, const std::string& dir, std::string* message);

/// A default file name for a stage of the current view: "weights_h0_b0.png".
std::string DefaultExportName(const AppState& state, Stage stage);

/// Writes one heatmap of the compare view (A, B, or the difference A - B) as PNG, through
/// ExportView of the very StageView on screen. Same reporting as ExportOneStage.
bool ExportCompareMap(AppState& state, CompareMap map, const std::string& path,
                      std::string* message);

/// Sets one of the export dialog's choices from text (the script's export-option): format
/// png|svg|pdf|csv|npy; stages this|pipeline|A,B,C (stage names); dpi 0..100000; width 8cm,
/// 3.5in or 0 (the figure's own size); colorbar auto|shared|per-panel. Returns false with the
/// reason in *why (choices unchanged).
bool SetExportOption(ExportChoices& choices, const std::string& key, const std::string& value,
                     std::string* why);

/// The stages an export with `choices` draws; `stage` is the dialog's stage ("this stage").
std::vector<Stage> ChosenStages(const AppState& state, const ExportChoices& choices, Stage stage);

/// ScreenFigureOptions with the choices' print size and colorbars.
FigureOptions ChosenFigureOptions(const AppState& state, const ExportChoices& choices);

/// The export dialog's Export: state.export_choices (format, stages, size, colorbars) of the
/// state on screen, written to `path` as `attention-lab export` writes it (ExportView for one
/// stage, ExportPanels for several), so the bytes equal the command line's. Same reporting as
/// ExportOneStage.
bool ExportWithChoices(const AppState& state, Stage stage, const std::string& path,
                       std::string* message);

/// The figure ExportWithChoices would write, as pixels shrunk (box filter) to at most
/// `max_width` wide: the dialog's preview. Errors: as RenderFigure.
Image ExportPreview(const AppState& state, Stage stage, int max_width);

/// Writes the Decode view's shown step (its weights over the cache, head and batch on screen:
/// DecodeStepView) or the Tiled view's shown tile (TileStateView), whichever view is central,
/// as ExportView writes it with StepFigureOptions (format from the extension, PNG when none; the
/// scenario embedded; the window's colormaps, range and values mode are not used), so the bytes
/// equal `attention-lab decode|tiled ... --step K [--head H --batch B] -o FILE`'s. Same reporting
/// as ExportOneStage ("Not exported: ..." outside those views or without a run).
bool ExportInferenceStep(const AppState& state, const std::string& path, std::string* message);

/// A default file name for the shown step: "decode_step3_h0_b0.png" or "tile5.png".
std::string DefaultStepExportName(const AppState& state);

/// A default file name for a compare map: "compare_weights_scaled-unscaled.png".
std::string DefaultCompareExportName(const AppState& state, CompareMap map);

}  // namespace attnlab::gui
