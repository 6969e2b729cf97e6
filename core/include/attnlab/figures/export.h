// export.h: a stage view written to a file: PNG, SVG or PDF (figure.h), CSV or NumPy .npy,
// one at a time or every stage, head and batch of a run. Files are written atomically.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/figures/figure.h"
#include "attnlab/figures/png.h"

namespace attnlab {

/// Refuses, before anything is rendered, a figure of `view` at options.scale whose heatmap grid
/// alone (cells of RenderFigure's size, figure.h) would exceed kMaxFigurePixels. Errors:
/// std::invalid_argument naming the stage, the size and the limit.
void CheckFigureSize(const StageView& view, const FigureOptions& options);

/// The same check from the shape alone (rows x cols cells at `scale`), so that a caller can
/// refuse before running the scenario. Errors: std::invalid_argument as above.
void CheckFigureSize(Stage stage, int64_t rows, int64_t cols, int scale);

/// The matrix as CSV: a header row "query,<col labels>", then one row per query token. Text
/// cells a spreadsheet would evaluate (leading =, +, -, @, tab, CR) are quoted with a leading
/// single quote (OWASP's CSV injection advice); the values are plain numbers, the shortest text
/// that reads back as the float32 value (or the double one of a float64 scenario).
std::string StageCsv(const StageView& view);

/// StageCsv written to `out` a row at a time, so that a large stage's text (about 13 bytes per
/// value) is never held whole in memory. ExportView and ExportAll write CSV this way.
void WriteStageCsv(std::ostream& out, const StageView& view);

/// The matrix as a NumPy .npy file (C order, shape (rows, cols)): float32 ('<f4'), or float64
/// ('<f8') with the double values of a float64 scenario (view.values64).
std::string StageNpy(const StageView& view);

/// StageNpy written to `out` without a copy of the values (what ExportView and ExportAll do).
void WriteStageNpy(std::ostream& out, const StageView& view);

/// Output formats of an export.
enum class ExportFormat { kPng, kCsv, kNpy, kSvg, kPdf };

/// Bytes one exported stage view of rows x cols needs besides the run's stages, for
/// CheckCommandMemory: the view's copy of the stage (4 bytes a value; 12 in float64, which
/// keeps the doubles too), and for a figure its rasters, drawing surface and encoded file,
/// counted as 32 bytes a pixel of its grid (FigureCellSize at options.scale) plus 32 MiB for
/// labels and fonts. Measured, one pixel a cell, T = 4000 and 11000, beyond the view: PNG 27.5,
/// PDF 28.6, SVG 30.2 bytes a pixel. CSV and NPY are streamed (WriteStageCsv, WriteStageNpy):
/// the view alone.
double EstimateExportBytes(int64_t rows, int64_t cols, ExportFormat format,
                           const FigureOptions& options, bool float64);

/// Refuses an export of a run of `scenario` whose peak memory would pass the limit
/// (CheckCommandMemory): its stages plus EstimateExportBytes of every panel in `sizes` (rows,
/// cols each) when they make one figure, or of the largest when `one_file_each` (ExportAll
/// writes its files one after the other). Called by the command line and the window before
/// anything is drawn. Errors: std::invalid_argument naming the format and the memory.
void CheckExportMemory(const Scenario& scenario,
                       const std::vector<std::pair<int64_t, int64_t>>& sizes, ExportFormat format,
                       const FigureOptions& options, bool one_file_each);

/// The format named "png", "csv", "npy", "svg" or "pdf", or nullopt.
std::optional<ExportFormat> ParseExportFormat(const std::string& name);

/// The file extension of a format, with its dot (".png").
const char* ExportExtension(ExportFormat format);

/// The bytes ExportView writes for `view` (the figure with `scenario` embedded when not null,
/// or the CSV or NPY text), for callers that write them their own way (the command line's
/// decode and tiled figures). Errors as ExportView, without the file's.
std::string ExportBytes(const StageView& view, const FigureOptions& options, ExportFormat format,
                        const Scenario* scenario = nullptr);

/// Renders (or serialises) one view and writes it atomically to `path` (file_io.h). Figures
/// (PNG, SVG, PDF) of a view of `scenario` (may be null: then none is embedded) carry it and
/// the view options (FigureMetadata, figure_meta.h), so they reopen as that scenario.
/// Errors: FileError (unwritable path), FontError, std::invalid_argument (a figure over
/// kMaxFigurePixels, see CheckFigureSize), std::runtime_error (PNG encoding or cairo failed).
void ExportView(const StageView& view, const FigureOptions& options, ExportFormat format,
                const std::string& path, const Scenario* scenario = nullptr);

/// A multi-panel figure of `views` (one panel each, RenderFigure(views, title, options)) of a
/// run of `scenario`, written atomically to `path` as PNG, SVG or PDF with the scenario and view
/// options embedded. Errors as ExportView; std::invalid_argument for CSV or NPY.
void ExportPanels(const std::vector<StageView>& views, const Scenario& scenario,
                  const FigureOptions& options, ExportFormat format, const std::string& path);

/// Every stage, head and batch of a run into `dir` (figures carry `scenario`) (created if missing),
/// one file each, named
/// "<stage>[_h<head>][_b<batch>].<ext>" (head and batch parts only when there are several).
/// Returns the paths written. All or nothing: every file is written to a temporary first and
/// renamed into place only when all are ready; on any error none is left (nor the folder, when
/// this call created it and it is empty). Errors as ExportView.
std::vector<std::string> ExportAll(const Stages& stages, const Scenario& scenario,
                                   const FigureOptions& options, ExportFormat format,
                                   const std::string& dir);

}  // namespace attnlab
