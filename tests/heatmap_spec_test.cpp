// heatmap_spec_test.cpp: the one presentation model (heatmap_spec.h) that the window and the
// figures both draw from: titles, labels, colour scales, ticks, legends and cell text.
#include "attnlab/figures/heatmap_spec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "attnlab/base/text.h"
#include "attnlab/figures/figure.h"
#include "attnlab/figures/stage_view.h"
#include "attnlab/model/bugs.h"
#include "attnlab/model/presets.h"

namespace attnlab {
namespace {

HeatmapSpec SpecOf(const std::string& preset, Stage stage, PresentationOptions o = {}) {
  const Scenario sc = LoadPreset(preset);
  return FigureSpec(ExtractStage(RunScenario(sc), sc, stage, 0, 0), o);
}

std::vector<std::string> TickTexts(const HeatmapSpec& s) {
  std::vector<std::string> out;
  for (const ColorbarTick& t : s.ticks) out.push_back(t.text);
  return out;
}

TEST(HeatmapSpec, RaschkaWeights) {
  const HeatmapSpec s = SpecOf("raschka-journey", Stage::kWeights);
  EXPECT_EQ(s.title, "weights = softmax(logits)");
  EXPECT_EQ(s.subtitle, "scaled by 1/\u221Ad_k, multiplier 1, softmax");
  EXPECT_EQ(s.row_labels,
            (std::vector<std::string>{"Your", "journey", "starts", "with", "one", "step"}));
  EXPECT_EQ(s.colormap->name, "viridis");
  EXPECT_FALSE(s.diverging);
  EXPECT_EQ(s.range.lo, 0.0f);
  EXPECT_EQ(s.range.hi, 1.0f);
  EXPECT_EQ(TickTexts(s), (std::vector<std::string>{"0", "0.25", "0.5", "0.75", "1"}));
  EXPECT_TRUE(s.legends.empty());
  EXPECT_TRUE(s.values_wanted);  // 6 x 6 <= 12 x 12
}

TEST(HeatmapSpec, TheBuggyHeadSplitLabelsEachRowWithTheTokenPieceItReads) {
  // bug-view-no-transpose: T = 6, 2 heads of d_k = 2 read q.view(B, heads, T, 2) of the 6 x 4
  // projection: head 0's rows are "Your journey starts" in halves, head 1's "with one step".
  const Scenario sc = LoadPreset("bug-view-no-transpose");
  const Stages st = RunScenario(sc);
  auto rows = [&](Stage stage, int64_t head) {
    return FigureSpec(ExtractStage(st, sc, stage, head, 0), {}).row_labels;
  };
  const std::vector<std::string> h0 = {"Your[0:2]",    "Your[2:4]",   "journey[0:2]",
                                       "journey[2:4]", "starts[0:2]", "starts[2:4]"};
  const std::vector<std::string> h1 = {"with[0:2]", "with[2:4]", "one[0:2]",
                                       "one[2:4]",  "step[0:2]", "step[2:4]"};
  EXPECT_EQ(rows(Stage::kQ, 0), h0);
  EXPECT_EQ(rows(Stage::kV, 1), h1);
  EXPECT_EQ(rows(Stage::kWeights, 1), h1);
  EXPECT_EQ(FigureSpec(ExtractStage(st, sc, Stage::kScores, 0, 0), {}).col_labels, h0);
  // The merge puts every token's row back together; X and the fix are tokens.
  const std::vector<std::string> tokens = {"Your", "journey", "starts", "with", "one", "step"};
  EXPECT_EQ(rows(Stage::kContext, 0), tokens);
  EXPECT_EQ(rows(Stage::kX, 0), tokens);
  const Scenario fix = BugFix("bug-view-no-transpose", sc);
  EXPECT_EQ(FigureSpec(ExtractStage(RunScenario(fix), fix, Stage::kQ, 1, 0), {}).row_labels,
            tokens);
}

TEST(HeatmapSpec, SignedStagesAreSymmetricAndDiverging) {
  const HeatmapSpec s = SpecOf("raschka-journey", Stage::kScores);
  EXPECT_EQ(s.title, "scores = Q K\u1D40");
  EXPECT_TRUE(s.diverging);
  EXPECT_EQ(s.colormap->name, "coolwarm");
  EXPECT_EQ(s.range.lo, -s.range.hi);
  // Raschka's largest score is q_journey . k_journey = 1.8524 (the notebook prints 1.8524).
  EXPECT_NEAR(s.range.hi, 1.8524f, 1e-4f);
  EXPECT_EQ(TickTexts(s), (std::vector<std::string>{"-1", "0", "1"}));  // about 4: step 1
  const HeatmapSpec c = SpecOf("raschka-journey", Stage::kContext);
  EXPECT_EQ(c.col_labels, (std::vector<std::string>{"d0", "d1"}));
  EXPECT_EQ(c.col_axis, "dimension");
}

TEST(HeatmapSpec, MaskAndCausalLegends) {
  const HeatmapSpec m = SpecOf("karpathy-trick", Stage::kMask);
  EXPECT_EQ(m.title, "mask: causal");
  EXPECT_TRUE(m.mask_legend);
  EXPECT_TRUE(m.values_wanted);  // its cells print 1 and 0, as the legend says: allowed, masked
  ASSERT_EQ(m.legends.size(), 2u);
  EXPECT_EQ(m.legends[0].text, "1 allowed");
  EXPECT_EQ(m.legends[1].text, "0 masked");
  const HeatmapSpec w = SpecOf("karpathy-trick", Stage::kWeights);
  EXPECT_EQ(w.title, "weights = 1 / n (mean)");
  ASSERT_EQ(w.legends.size(), 1u);
  EXPECT_EQ(w.legends[0].kind, LegendKind::kMasked);
  EXPECT_EQ(w.subtitle, "batch 0, scaled by 1/\u221Ad_k, multiplier 1, mean");
}

TEST(HeatmapSpec, OptionsChooseColoursRangeAndValues) {
  PresentationOptions o;
  o.sequential_colormap = "magma";
  o.range = RangeMode::kData;
  o.values = ValuesMode::kOff;
  const HeatmapSpec s = SpecOf("raschka-journey", Stage::kWeights, o);
  EXPECT_EQ(s.colormap->name, "magma");
  EXPECT_NEAR(s.range.hi, 0.2264f, 1e-4f);  // the largest weight, the notebook's 0.2264
  EXPECT_FALSE(s.values_wanted);
  o.colormap = "gray";
  EXPECT_EQ(SpecOf("raschka-journey", Stage::kScores, o).colormap->name, "gray");
}

TEST(HeatmapSpec, SumWeightsWithNegativesAndNaNs) {
  ValueScan scan;
  scan.any_finite = true, scan.lo = -0.5f, scan.hi = 1.5f, scan.has_negative = true;
  scan.has_nan = scan.has_inf = true;
  EXPECT_TRUE(StageIsDiverging(Stage::kWeights, scan));
  EXPECT_FALSE(StageIsDiverging(Stage::kMask, scan));
  HeatmapContent c;
  c.stage = Stage::kWeights;
  c.diverging = true;
  c.hatch_masked = true;
  const HeatmapSpec s = MakeHeatmapSpec(c, 3, 3, scan, true, {});
  EXPECT_EQ(s.range.lo, -1.5f);
  ASSERT_EQ(s.legends.size(), 3u);
  EXPECT_EQ(s.legends[1].text, "NaN");
  EXPECT_EQ(s.legends[2].text, "\u00B1inf");
  c.stage = Stage::kLogits;  // -inf is how logits are masked: no inf legend
  EXPECT_EQ(MakeHeatmapSpec(c, 3, 3, scan, true, {}).legends.size(), 2u);
  scan.has_pos_inf = true;  // but +inf is an overflow (float16's scores above 65504)
  const HeatmapSpec over = MakeHeatmapSpec(c, 3, 3, scan, true, {});
  ASSERT_EQ(over.legends.size(), 3u);
  EXPECT_EQ(over.legends[2].text, "+inf");
  EXPECT_EQ(CellColor(s, NAN), kNanColor);
  // ScanStage finds the +inf, and tells it from the mask's -inf.
  Matrix m(2, 9);
  m.setConstant(1.0f);
  m(0, 0) = -INFINITY;
  EXPECT_FALSE(ScanStage(Stage::kLogits, m).has_pos_inf);
  m(1, 7) = INFINITY;  // past the first vector of lanes, and in the tail
  EXPECT_TRUE(ScanStage(Stage::kLogits, m).has_pos_inf);
}

TEST(HeatmapSpec, WhitespaceTokensAreVisibleLabels) {
  const HeatmapSpec s = SpecOf("dog-attacks-cat", Stage::kWeights);
  ASSERT_GE(s.row_labels.size(), 2u);
  EXPECT_EQ(s.row_labels[1], "\u2423");  // "the dog": words and spaces, the space as a sign
}

TEST(HeatmapSpec, CellTextInkFitAndThinning) {
  const MeasureText seven = [](std::string_view t) { return 7.0f * Utf8Length(t); };
  EXPECT_EQ(FittedCellValue(0.43f, 42, seven), "0.4300");  // 6 chars fit in 42 px
  EXPECT_EQ(FittedCellValue(0.43f, 35, seven), "0.430");
  EXPECT_EQ(FittedCellValue(-0.43f, 35, seven), "-0.43");
  EXPECT_EQ(FittedCellValue(-0.43f, 34, seven), "\u2026");  // never fewer than 2 decimals
  EXPECT_EQ(FittedCellValue(-0.43f, 6, seven), "");         // not even the ellipsis
  EXPECT_EQ(CellText(Stage::kLogits, -INFINITY, true, 28, seven), "-inf");
  // A masked weight is the number 0 at the decimals that fit, as PyTorch prints 0.0000.
  EXPECT_EQ(CellText(Stage::kWeights, 0.0f, true, 28, seven), "0.00");
  EXPECT_EQ(CellText(Stage::kWeights, 0.0f, true, 42, seven), "0.0000");
  EXPECT_EQ(CellText(Stage::kWeightsDropped, 0.0f, true, 28, seven), "0.00");
  EXPECT_EQ(CellText(Stage::kMask, 1.0f, false, 28, seven), "1");
  EXPECT_EQ(CellText(Stage::kMask, 0.0f, true, 28, seven), "0");
  EXPECT_EQ(CellText(Stage::kLogits, -INFINITY, true, 20, seven), "\u2026");
  // A masked cell holding something else prints it: a row that sees no key is nan (NaN is
  // never hatched), a finite fill its number, and that row's 1 / T.
  EXPECT_EQ(CellText(Stage::kWeights, NAN, true, 28, seven),
            CellText(Stage::kWeights, NAN, false, 28, seven));
  EXPECT_NE(CellText(Stage::kWeights, NAN, true, 28, seven), "0.00");
  EXPECT_EQ(CellText(Stage::kLogits, -65504.0f, true, 140, seven),
            FittedCellValue(-65504.0f, 140, seven));
  EXPECT_EQ(CellText(Stage::kWeights, 0.125f, true, 42, seven), "0.1250");
  EXPECT_TRUE(DrawnHatched(true, 0.0f));
  EXPECT_FALSE(DrawnHatched(true, NAN));
  EXPECT_FALSE(DrawnHatched(false, 0.0f));
  EXPECT_EQ(CellText(Stage::kScores, -0.07f, false, 35, seven), "-0.07");
  EXPECT_EQ(ShortestCellText(Stage::kQ, -0.0712f, false), "-0.07");
  // One map, one number of decimals: 0.181 would fit 3 decimals in 35 px, -0.07 only 2.
  EXPECT_EQ(MapCellTexts(Stage::kContext, {0.1812f, -0.0712f}, {0, 0}, 35, seven),
            (std::vector<std::string>{"0.18", "-0.07"}));
  EXPECT_EQ(MapCellTexts(Stage::kContext, {0.1812f, 0.0712f}, {0, 0}, 35, seven),
            (std::vector<std::string>{"0.181", "0.071"}));
  // An outlier that fits nowhere is "…" and does not cost the others their decimals; masked
  // cells print PyTorch's -inf whatever the decimals.
  EXPECT_EQ(MapCellTexts(Stage::kLogits, {0.5f, 12345.0f, -INFINITY}, {0, 0, 1}, 42, seven),
            (std::vector<std::string>{"0.5000", "\u2026", "-inf"}));
  // Masked weights take the map's decimals: 0.0000 beside 0.1385 (Raschka's 3.5.1 prints).
  EXPECT_EQ(MapCellTexts(Stage::kWeights, {0.1385f, 0.0f}, {0, 1}, 42, seven),
            (std::vector<std::string>{"0.1385", "0.0000"}));
  EXPECT_EQ(MapCellTexts(Stage::kWeights, {0.1385f, 0.0f}, {0, 1}, 28, seven),
            (std::vector<std::string>{"0.14", "0.00"}));
  EXPECT_EQ(FitLabel("journey", 49, seven), "journey");
  EXPECT_EQ(FitLabel("journey", 35, seven), "jour\u2026");
  EXPECT_EQ(LabelStep(13, 14), 1);
  EXPECT_EQ(LabelStep(13, 1), 13);
  // "journey" is 49 px wide in seven-pixel letters: it fits a 53-pixel cell with the gap of 4,
  // not a 52-pixel one, and a figure at scale 2 needs a gap of 8.
  EXPECT_FALSE(RotateColumnLabels(49, 4, 53));
  EXPECT_TRUE(RotateColumnLabels(49, 4, 52.9f));
  EXPECT_TRUE(RotateColumnLabels(49, 8, 53));
  const Colormap& v = FindColormap("viridis");
  EXPECT_EQ(CellInk(v.lut[0]), (Rgb{255, 255, 255}));      // dark purple: white text
  EXPECT_EQ(CellInk(v.lut[255]), (Rgb{0, 0, 0}));          // yellow: black text
  EXPECT_EQ(CellInk(Rgb{128, 128, 128}), (Rgb{0, 0, 0}));  // mid grey: black contrasts more
}

// FitLabel measures a long word a bounded number of times: the whole label once, then prefixes
// no longer than twice the one kept (dropping one code point at a time measured the 100,000
// characters 100,000 times: minutes). The cut is the longest prefix that fits, as before.
TEST(HeatmapSpec, FitLabelOfALongWordMeasuresLittle) {
  size_t measured = 0;  // bytes measured in all
  const MeasureText counting = [&measured](std::string_view t) {
    measured += t.size();
    if (measured > 2'000'000) throw std::runtime_error("FitLabel measured more than 2 MB");
    return 7.0f * Utf8Length(t);  // 7 px a code point
  };
  const std::string word(100'000, 'x');
  EXPECT_EQ(FitLabel(word, 70, counting), std::string(9, 'x') + "\u2026");
  EXPECT_LT(measured, 100'000u + 1'000u);
  measured = 0;
  std::string greek;  // two bytes a code point: never cut inside one
  for (int i = 0; i < 20'000; ++i) greek += "\u03C3";
  EXPECT_EQ(FitLabel(greek, 7 * 300 + 0.5f, counting), greek.substr(0, 2 * 299) + "\u2026");
  EXPECT_LT(measured, greek.size() + 20'000u);
  // Every width from nothing to the whole: the longest prefix that fits with its ellipsis.
  for (int w = -1; w <= 7 * 12; ++w) {
    const std::string cut = FitLabel("abcdefghijk", static_cast<float>(w), counting);
    const size_t n = w >= 7 * 11 ? 11 : static_cast<size_t>(std::clamp(w / 7 - 1, 0, 10));
    EXPECT_EQ(cut, w >= 77 ? "abcdefghijk" : std::string("abcdefghijk").substr(0, n) + "\u2026")
        << w;
    measured = 0;
  }
  EXPECT_EQ(FitLabel("", -1, counting), "\u2026");
  EXPECT_EQ(FitLabel("\u03C3", 3, counting), "\u2026");
}

// RangeMode's and ValuesMode's words come from their lists (enum_names.h).
TEST(HeatmapSpec, RangeAndValuesWords) {
  EXPECT_EQ(NameList<RangeMode>(" or "), "auto, fixed, data, per-row or log");
  EXPECT_STREQ(RangeModeName(RangeMode::kPerRow), "per-row");
  EXPECT_EQ(ParseRangeMode("log"), RangeMode::kLog);
  EXPECT_FALSE(ParseRangeMode("Log").has_value());
  EXPECT_EQ(NameList<ValuesMode>(), "auto, on, off");
  EXPECT_EQ(ParseName<ValuesMode>("off"), ValuesMode::kOff);
}

}  // namespace
}  // namespace attnlab
