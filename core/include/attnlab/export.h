// export.h: a stage view written to a file: PNG (RenderFigure, figure.h), CSV or NumPy .npy,
// one at a time or every stage, head and batch of a run. Files are written atomically.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/figure.h"

namespace attnlab {

/// The most pixels a PNG figure may have: 2^27 (about 11585 x 11585, 384 MiB of RGB).
/// stb_image_write keeps every size in an int and overflows or fails beyond about 7e8 bytes of
/// image data; a figure this large is also past what image viewers open.
inline constexpr int64_t kMaxFigurePixels = int64_t{1} << 27;

/// Refuses, before anything is rendered, a figure of `view` at options.scale whose heatmap grid
/// alone (cells of RenderFigure's size, figure.h) would exceed kMaxFigurePixels. Errors:
/// std::invalid_argument naming the stage, the size and the limit.
void CheckFigureSize(const StageView& view, const FigureOptions& options);

/// The same check from the shape alone (rows x cols cells at `scale`), so that a caller can
/// refuse before running the scenario. Errors: std::invalid_argument as above.
void CheckFigureSize(Stage stage, int64_t rows, int64_t cols, int scale);

/// PNG bytes of an image (stb_image_write, compression level 4). Errors: std::invalid_argument
/// for an empty image, one whose pixels do not match its size, or one over kMaxFigurePixels;
/// std::runtime_error when stb fails to encode (never an empty result).
std::string EncodePng(const Image& image);

/// The matrix as CSV: a header row "query,<col labels>", then one row per query token. Text
/// cells a spreadsheet would evaluate (leading =, +, -, @, tab, CR) are quoted with a leading
/// single quote (OWASP's CSV injection advice); the values are plain numbers.
std::string StageCsv(const StageView& view);

/// The matrix as a NumPy .npy file (float32, C order, shape (rows, cols)).
std::string StageNpy(const StageView& view);

/// Output formats of an export.
enum class ExportFormat { kPng, kCsv, kNpy };

/// Renders (or serialises) one view and writes it atomically to `path` (file_io.h).
/// Errors: FileError (unwritable path), FontError, std::invalid_argument (a figure over
/// kMaxFigurePixels, see CheckFigureSize), std::runtime_error (PNG encoding failed).
void ExportView(const StageView& view, const FigureOptions& options, ExportFormat format,
                const std::string& path);

/// Every stage, head and batch of a run into `dir` (created if missing), one file each, named
/// "<stage>[_h<head>][_b<batch>].<ext>" (head and batch parts only when there are several).
/// Returns the paths written. All or nothing: every file is written to a temporary first and
/// renamed into place only when all are ready; on any error none is left (nor the folder, when
/// this call created it and it is empty). Errors as ExportView.
std::vector<std::string> ExportAll(const Stages& stages, const Scenario& scenario,
                                   const FigureOptions& options, ExportFormat format,
                                   const std::string& dir);

}  // namespace attnlab
