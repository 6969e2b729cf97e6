// figure_meta.h: figures that reopen as the scenario that made them. Every exported figure (PNG,
// SVG, PDF) carries a small JSON text: the scenario (WriteScenario's text, exactly) and the view
// options (stages, head, batch, colormaps, range, values, scale). ReadFigureScenario gets them
// back from the file's bytes, so the window, `dump`, `show`, `code` and `export` open a figure
// wherever they open a scenario.
//
// Where it travels: PNG an iTXt chunk keyed "attention-lab:scenario" (kFigureMetadataKey,
// figure.h); SVG the text of <attnlab:figure> inside <metadata>, XML-escaped; PDF the document
// information's Keywords: "attention-lab-figure:" and the text in base64.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attnlab/figures/figure.h"
#include "attnlab/model/scenario.h"

namespace attnlab {

/// What a figure file carries.
struct FigureSource {
  Scenario scenario;
  std::string scenario_text;  ///< WriteScenario's text as embedded
  std::vector<Stage> stages;  ///< one per panel, in order
  int64_t head = 0, batch = 0;
  FigureOptions options;  ///< colormaps, range, values mode, scale
};

/// The JSON text a figure carries (format "attention-lab-figure" version 1).
std::string FigureMetadata(const Scenario& scenario, const std::vector<Stage>& stages, int64_t head,
                           int64_t batch, const FigureOptions& options);

/// True when `bytes` start like a PNG, a PDF or an SVG/XML file (what ReadFigureScenario reads);
/// a scenario JSON never does.
bool LooksLikeFigure(std::string_view bytes);

/// The scenario and view options a figure file carries. Errors: ScenarioError (field "") with a
/// one-line message when the file is not a figure, carries no scenario ("this PNG carries
/// no Attention Lab scenario (only figures exported by Attention Lab do)"), or carries a broken
/// one; the scenario's own errors as ParseScenario's, after "the embedded scenario: ". Never
/// reads past the bytes (truncated and garbage files are refused).
FigureSource ReadFigureScenario(const std::string& bytes);

/// The scenario in a file's bytes: a figure's (ReadFigureScenario) when they LooksLikeFigure,
/// else the scenario JSON (ParseScenario). Errors: ScenarioError as those two.
Scenario ScenarioFromFileBytes(const std::string& bytes);

}  // namespace attnlab
