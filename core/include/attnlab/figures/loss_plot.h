// loss_plot.h: the loss curves of training runs (train.h) as a PNG plot for a slide or a report:
// axes with round ticks, the step and loss labels, a title, and a legend naming each run with
// its final loss. The Training view's "Export curves (PNG)" and `attention-lab train -o
// run.png` write it; drawn by cairo with pango text (loss_plot.cpp), as the heatmap figures.
#pragma once

#include <string>
#include <vector>

#include "attnlab/figures/colormap.h"
#include "attnlab/figures/figure.h"
#include "attnlab/lessons/train.h"

namespace attnlab {

/// Where LossCurvesImage put the plot, in pixels (y down), for tests and callers that map a
/// step and a loss to a pixel: step s is at x = left + s / x_max * (right - left), loss l at
/// y = bottom - l / y_max * (bottom - top).
struct LossPlotLayout {
  int left = 0, top = 0, right = 0, bottom = 0;  ///< the plotting area
  double x_max = 1, y_max = 1;                   ///< the axes run from 0 to these
};

/// The colour of curve k: blue for the first run (scaled in the window), orange for the second
/// (unscaled), then green and purple; the window draws its curves in the same colours.
Rgb LossCurveColor(size_t k);

/// The loss curves of `runs` (one per step, drawn as lines), named `names` in the legend, under
/// `title`, on a white width x height image. The x axis runs to the longest run's last step,
/// the y axis from 0 to the largest loss (times 1.05). Errors: std::invalid_argument for no run,
/// names not one per run, a run without steps, or a size outside 320..4096 x 240..4096;
/// FontError when the figure font is missing; std::runtime_error when cairo fails.
Image LossCurvesImage(const std::vector<const TrainRun*>& runs,
                      const std::vector<std::string>& names, const std::string& title,
                      int width = 900, int height = 560, LossPlotLayout* layout = nullptr);

/// LossCurvesImage as PNG bytes (png.h EncodePng). Errors as LossCurvesImage.
std::string LossCurvesPng(const std::vector<const TrainRun*>& runs,
                          const std::vector<std::string>& names, const std::string& title);

/// A title for runs of `run`'s task and size: "associative-recall · T 8 · d_k 256 · 300 Adam
/// steps (lr 0.01, batch 16)".
std::string LossPlotTitle(const TrainRun& run);

}  // namespace attnlab
