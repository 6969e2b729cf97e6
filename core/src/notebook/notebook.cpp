// notebook.cpp: see notebook.h.
#include "attnlab/notebook/notebook.h"

#include <stdexcept>

#include "attnlab/figures/export.h"
#include "attnlab/figures/figure.h"
#include "attnlab/figures/png.h"
#include "attnlab/figures/stage_view.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/python/codegen.h"

namespace attnlab {

std::string ScenarioNotebook(const Scenario& scenario) {
  return ScenarioNotebook(scenario, RunScenario(scenario));
}

std::string ScenarioNotebook(const Scenario& scenario, const Stages& stages) {
  const std::string program = GeneratePyTorchCode(scenario);
  std::vector<NotebookOutput> outputs = PrintedOutputs(stages);
  const StageView view = ExtractStage(stages, scenario, Stage::kWeights, 0, 0);
  const FigureOptions options;
  try {
    CheckFigureSize(view, options);
  } catch (const std::invalid_argument&) {
    return ProgramAsNotebook(program, outputs);  // the printed values only
  }
  outputs.push_back({"attention weights (head 0, batch 0), drawn by Attention Lab's figures",
                     EncodePng(RenderFigure(view, options))});
  return ProgramAsNotebook(program, outputs);
}

}  // namespace attnlab
