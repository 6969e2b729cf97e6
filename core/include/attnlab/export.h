// export.h: a stage view written to a file: PNG (RenderFigure, figure.h), CSV or NumPy .npy,
// one at a time or every stage, head and batch of a run. Files are written atomically.
#pragma once

#include <string>
#include <vector>

#include "attnlab/figure.h"

namespace attnlab {

/// PNG bytes of an image (stb_image_write).
std::string EncodePng(const Image& image);

/// The matrix as CSV: a header row "query,<col labels>", then one row per query token.
std::string StageCsv(const StageView& view);

/// The matrix as a NumPy .npy file (float32, C order, shape (rows, cols)).
std::string StageNpy(const StageView& view);

/// Output formats of an export.
enum class ExportFormat { kPng, kCsv, kNpy };

/// Renders (or serialises) one view and writes it atomically to `path`.
/// Errors: FileError (unwritable path), FontError, std::invalid_argument.
void ExportView(const StageView& view, const FigureOptions& options, ExportFormat format,
                const std::string& path);

/// Every stage, head and batch of a run into `dir` (created if missing), one file each, named
/// "<stage>[_h<head>][_b<batch>].<ext>" (head and batch parts only when there are several).
/// Returns the paths written. Errors as ExportView.
std::vector<std::string> ExportAll(const Stages& stages, const Scenario& scenario,
                                   const FigureOptions& options, ExportFormat format,
                                   const std::string& dir);

}  // namespace attnlab
