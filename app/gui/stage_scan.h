// stage_scan.h: one fast pass over a stage matrix for what its heatmap needs: the colour range
// (the same numbers as AutoRange, colormap.h) and whether NaN, +-inf or negative values occur
// (legends, and weights switching to a diverging map as ExtractStage does). At T = 2048 this
// runs once per recomputed stage, so it is vectorised: about 1 ms for 4M cells instead of the
// 4-5 ms of AutoRange plus a second loop. Pure C++: no GL, no ImGui.
#pragma once

#include "attnlab/colormap.h"
#include "attnlab/figure.h"
#include "attnlab/tensor.h"

namespace attnlab::gui {

struct StageScan {
  bool any_finite = false;
  float lo = 0.0f, hi = 0.0f;  ///< finite min and max (valid when any_finite)
  bool has_nan = false;
  bool has_inf = false;
  bool has_negative = false;  ///< a finite value < 0
};

/// Scans every cell of m.
StageScan ScanStage(const Matrix& m);

/// AutoRange(m, diverging), from the scan of m.
ValueRange AutoRangeFromScan(const StageScan& scan, bool diverging);

/// FigureRange (figure.h) of the view ExtractStage would make of this matrix: [0, 1] for the
/// mask, weights on a sequential map over [0, max(1, hi)] (kFixed) or [0, hi] (kData), else
/// AutoRange.
ValueRange StageRangeFromScan(Stage stage, const StageScan& scan, bool diverging,
                              RangeMode mode = RangeMode::kFixed);

}  // namespace attnlab::gui
