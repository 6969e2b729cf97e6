// fuzz_figure.cpp: any bytes as a scenario file, rendered: every stage view of a small accepted
// scenario through RenderFigure and EncodePng (the PNG must be non-empty), StageCsv and StageNpy,
// with the figure options taken from the last input byte; the weights' PNG and SVG figures must
// carry the scenario back, and the bytes read as a figure file must be read or refused with a
// ScenarioError. Only refusals documented in
// export.h / figure.h (std::invalid_argument) are allowed to escape the rendering.
#include <stdexcept>
#include <string>

#include "attnlab/figures/export.h"
#include "attnlab/figures/figure.h"
#include "attnlab/figures/figure_meta.h"
#include "attnlab/model/pipeline.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace attnlab;
  if (size == 0) return 0;
  try {  // the bytes as a figure file: read or refused, never a crash or another exception
    ReadFigureScenario(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const ScenarioError&) {
  }
  const uint8_t knobs = data[size - 1];
  const std::optional<Scenario> s =
      fuzz::SmallScenario(std::string(reinterpret_cast<const char*>(data), size - 1));
  if (!s) return 0;
  const Stages stages = RunScenario(*s);
  FigureOptions options;
  options.scale = 1 + (knobs & 1);
  options.values = static_cast<ValuesMode>((knobs >> 1) % 3);
  options.range = (knobs >> 3) & 1 ? RangeMode::kData : RangeMode::kFixed;
  const char* maps[] = {"", "viridis", "magma", "gray", "coolwarm", "rdbu"};
  options.colormap = maps[(knobs >> 4) % 6];
  for (Stage stage : AllStages()) {
    StageView view;
    try {
      view = ExtractStage(stages, *s, stage, stages.shape.H - 1, stages.shape.B - 1);
    } catch (const std::invalid_argument&) {
      continue;  // weights_dropped without dropout
    }
    FigureLayout layout;
    const Image image = RenderFigure(view, options, &layout);
    if (image.width < 1 || image.height < 1 ||
        image.rgb.size() != static_cast<size_t>(image.width) * image.height * 3)
      fuzz::Violated("RenderFigure made an image whose pixels do not match its size");
    if (layout.grid_x + layout.cell * layout.cols > image.width ||
        layout.grid_y + layout.cell * layout.rows > image.height)
      fuzz::Violated("the grid lies outside the image");
    if (EncodePng(image).empty()) fuzz::Violated("EncodePng returned nothing");
    if (StageCsv(view).empty() || StageNpy(view).empty()) fuzz::Violated("empty CSV or NPY");
    if (stage == Stage::kWeights) {  // the scenario a PNG and an SVG figure carry comes back
      const std::string meta = FigureMetadata(*s, {stage}, view.head, view.batch, options);
      for (FigureFormat f : {FigureFormat::kPng, FigureFormat::kSvg})
        if (ReadFigureScenario(FigureFile({view}, "", options, f, meta)).scenario_text !=
            WriteScenario(*s))
          fuzz::Violated("a figure's embedded scenario did not come back");
    }
  }
  return 0;
}
