// export_choices.h: what the window's export dialog lets the learner choose (format, stages,
// print size, colorbars), kept in AppState and applied by ExportWithChoices (gui/export.h).
#pragma once

#include <string>
#include <vector>

#include "attnlab/figures/export.h"

namespace attnlab::gui {

/// Which stages an export from the dialog draws.
enum class ExportStages { kThis, kChosen, kPipeline };

struct ExportChoices {
  ExportFormat format = ExportFormat::kPng;
  ExportStages stages = ExportStages::kThis;
  std::vector<Stage> chosen;  ///< kChosen: the panels, in pipeline order
  int dpi = 0;                ///< pixels per inch when printed; 0: none said
  double width = 0;           ///< printed width in `width_unit`; 0: the figure's own size
  bool width_in_cm = true;    ///< else inches
  ColorbarMode colorbar = ColorbarMode::kAuto;
  bool operator==(const ExportChoices&) const = default;
};

}  // namespace attnlab::gui
