// notebook.h: a scenario's program saved as a Jupyter notebook with its outputs, for the `code`
// command and the window's File > Save as notebook: the python layer's notebook (codegen.h)
// filled with the figures layer's heatmap. The core's top layer, the one place where python/
// and figures/ (side by side, neither including the other) meet.
#pragma once

#include <string>

#include "attnlab/model/pipeline.h"
#include "attnlab/model/scenario.h"

namespace attnlab {

/// The notebook of `scenario`'s program (GeneratePyTorchCode) with the outputs of its last
/// cell saved (ProgramAsNotebook): the weights and context as the program's print shows them
/// (PrintedOutputs) and the weights heatmap of head 0, batch 0 as a PNG (RenderFigure with the
/// default FigureOptions). Byte-stable: the same scenario gives the same bytes.
/// Errors: ScenarioError as ValidateScenario; the figure's errors (FontError without DejaVu
/// Sans); a figure too large to draw (CheckFigureSize) is left out, not an error.
std::string ScenarioNotebook(const Scenario& scenario);

/// The same notebook from `stages`, the stages RunScenario(scenario) gives (the window's shown
/// run), so that saving does not compute them again. Same bytes as ScenarioNotebook(scenario).
std::string ScenarioNotebook(const Scenario& scenario, const Stages& stages);

}  // namespace attnlab
