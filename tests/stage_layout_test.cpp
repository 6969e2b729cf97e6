// stage_layout_test.cpp: the Heatmaps view's layout and the first window's size, without a
// window (app/gui/widgets/stage_layout.h). The boxes are raschka-journey's maps (T = 6, d_in = 3,
// d_out = 2) with the widths the window measures in DejaVu Sans at 13 px (a digit 8.27 px, "-"
// 4.69, "." 4.13: "-0.0000" is 50.2 px, its cell 56 px with the margin), and the canvases are
// what the window leaves the maps at 1280 x 800, 1152 x 720 and 1024 x 700 (the controls
// column, the toolbar, the menu and status bars, the plots at their least).
#include "gui/widgets/stage_layout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

namespace attnlab::gui {
namespace {

constexpr float kDigit = 8.27f, kMinus = 4.69f, kDot = 4.13f, kPad = 3;

/// The cell widths at 2, 3, 4 decimals ("-0.00", "-0.000", "-0.0000"), the same for every map.
void Cells(float out[3]) {
  for (int k = 0; k < 3; ++k) out[k] = std::ceil(kMinus + kDigit * (k + 3) + kDot + kPad);
}

StageBox Box(Stage stage, int rows, int cols, bool reserved = false) {
  StageBox b;
  b.stage = stage;
  b.rows = rows;
  b.cols = cols;
  b.reserved = reserved;
  Cells(b.cell_w);
  b.label_w = 60;              // "journey" and its margin
  b.right_w = 68;              // the colorbar, its ticks ("-0.000") and the "masked" legend
  for (int k = 0; k < 3; ++k)  // upright column labels when "journey" (50 px) fits a cell
    b.top_h[k] = 16 + 4 + (b.cell_w[k] >= 54 ? 17.0f : 58.0f) + 2;
  b.min_image_h = 60 + 19;
  b.same_rows_as_previous = true;
  return b;
}

/// raschka-journey's maps; the mask and the dropout kept (reserved) when they are off.
std::vector<StageBox> Journey(bool causal, bool dropout, int d_out = 2) {
  return {Box(Stage::kX, 6, 3),
          Box(Stage::kQ, 6, d_out),
          Box(Stage::kK, 6, d_out),
          Box(Stage::kV, 6, d_out),
          Box(Stage::kScores, 6, 6),
          Box(Stage::kMask, 6, 6, !causal),
          Box(Stage::kLogits, 6, 6),
          Box(Stage::kWeights, 6, 6),
          Box(Stage::kWeightsDropped, 6, 6, !dropout),
          Box(Stage::kContext, 6, d_out)};
}

/// The window's: a cell is the 13 px text and 3 px, the gaps 16 (the regular font) and 6 px.
StageMetrics Metrics() {
  StageMetrics m;
  m.cell_h = 16;
  return m;
}

struct Canvas {
  const char* name;
  float width, height;
};

// The canvas the window leaves the maps (heatmaps_panel.cpp, window.cpp): the window less the
// controls column (25%, at least 300 px), padding and the scrollbar; the height less the menu,
// status bar, toolbar and the plots at their least (120 px).
constexpr Canvas k1280{"1280x800", 1280 - 16 - 320 - 7 - 14, 800 - 19 - 12 - 27 - 54 - 120 - 10};
constexpr Canvas k1152{"1152x720", 1152 - 16 - 300 - 7 - 14, 720 - 19 - 12 - 27 - 54 - 120 - 10};
constexpr Canvas k1024{"1024x700", 1024 - 16 - 300 - 7 - 14, 700 - 19 - 12 - 27 - 54 - 120 - 10};

std::map<Stage, PlacedStage> ByStage(const StageGrid& g) {
  std::map<Stage, PlacedStage> out;
  for (const PlacedStage& p : g.maps) out[p.stage] = p;
  return out;
}

void ExpectInside(const StageGrid& g, const Canvas& c, bool whole_height) {
  for (const PlacedStage& p : g.maps) {
    EXPECT_GE(p.x, 0) << c.name;
    EXPECT_LE(p.x + p.w, c.width) << c.name << " stage " << static_cast<int>(p.stage);
    if (whole_height) {
      EXPECT_LE(p.y + p.h, c.height) << c.name;
    }
  }
}

TEST(StageLayout, JourneyFitsAt1280x800WithFourDecimals) {
  for (bool causal : {false, true})
    for (bool dropout : {false, true}) {
      const StageGrid g =
          LayOutStageGrid(Journey(causal, dropout), Metrics(), k1280.width, k1280.height);
      EXPECT_TRUE(g.fits) << causal << dropout << " needs " << g.height;
      EXPECT_EQ(g.decimals, 4);
      EXPECT_EQ(g.maps.size(), 10u);
      ExpectInside(g, k1280, true);
      for (const PlacedStage& p : g.maps)  // a 4-decimal cell holds "-0.0000"
        EXPECT_GE(p.cell_w, kMinus + kDigit * 5 + kDot + 2);
    }
  // Two heads of d_k = 2 (the wrapper of 3.6): Q, K, V and the context twice as wide, five rows
  // of maps at 4 decimals; fewer decimals, every map still inside the canvas's width.
  const StageGrid two =
      LayOutStageGrid(Journey(true, true, 4), Metrics(), k1280.width, k1280.height);
  EXPECT_LT(two.decimals, 4);
  ExpectInside(two, k1280, two.fits);
}

// Toggling the mask, the dropout (the slots are kept) moves nothing at any size.
TEST(StageLayout, MaskAndDropoutToggleMoveNothing) {
  for (const Canvas& c : {k1280, k1152, k1024}) {
    const std::map<Stage, PlacedStage> off =
        ByStage(LayOutStageGrid(Journey(false, false), Metrics(), c.width, c.height));
    for (bool causal : {false, true})
      for (bool dropout : {false, true}) {
        const std::map<Stage, PlacedStage> on =
            ByStage(LayOutStageGrid(Journey(causal, dropout), Metrics(), c.width, c.height));
        ASSERT_EQ(on.size(), off.size());
        for (const auto& [stage, p] : off) {
          const PlacedStage& q = on.at(stage);
          EXPECT_EQ(p.x, q.x) << c.name;
          EXPECT_EQ(p.y, q.y) << c.name;
          EXPECT_EQ(p.w, q.w) << c.name;
          EXPECT_EQ(p.h, q.h) << c.name;
          EXPECT_EQ(p.cell_w, q.cell_w) << c.name;
        }
      }
  }
}

// The smaller screens: fewer decimals before scrolling, every map inside the canvas's width,
// in pipeline order (a map is right of or under the one before it).
TEST(StageLayout, SmallerCanvasesTakeFewerDecimalsAndKeepTheOrder) {
  for (const Canvas& c : {k1152, k1024}) {
    const StageGrid g = LayOutStageGrid(Journey(true, false), Metrics(), c.width, c.height);
    ExpectInside(g, c, g.fits);
    for (size_t k = 1; k < g.maps.size(); ++k) {
      const PlacedStage &a = g.maps[k - 1], &b = g.maps[k];
      EXPECT_TRUE(b.y > a.y || (b.y == a.y && b.x > a.x)) << c.name << " " << k;
      EXPECT_EQ(b.row_labels, b.y != a.y) << c.name << " " << k;  // the first of a row labels
    }
    const StageGrid big =
        LayOutStageGrid(Journey(true, false), Metrics(), k1280.width, k1280.height);
    EXPECT_LE(g.decimals, big.decimals) << c.name;
  }
  // A canvas with no room for two decimals scrolls: 2 decimals, taller than the canvas.
  const StageGrid tiny = LayOutStageGrid(Journey(true, true), Metrics(), 500, 200);
  EXPECT_FALSE(tiny.fits);
  EXPECT_EQ(tiny.decimals, 2);
  EXPECT_GT(tiny.height, 200);
  EXPECT_TRUE(LayOutStageGrid({}, {}, 500, 200).maps.empty());
}

// The decimals come from the canvas and the shapes: a wider cell of one map (a value past 100)
// is the only thing that changes them, not another map's values.
TEST(StageLayout, NeedIsTheRowsHeight) {
  const std::vector<StageBox> boxes = Journey(true, true);
  const StageGrid g = LayOutStageGrid(boxes, Metrics(), k1280.width, 10000);
  EXPECT_EQ(g.decimals, 4);
  const float need = StageGridNeed(boxes, Metrics(), k1280.width, 4);
  EXPECT_LE(need, g.height);  // the spare height grows the rows towards square cells
  const StageGrid exact = LayOutStageGrid(boxes, Metrics(), k1280.width, need);
  EXPECT_TRUE(exact.fits);
  EXPECT_FLOAT_EQ(exact.height, need);
  EXPECT_LT(LayOutStageGrid(boxes, Metrics(), k1280.width, need - 1).decimals, 4);
}

TEST(StageLayout, PlotsGiveTheMapsTheirRoom) {
  // 1280 x 800: the body is about 742 px; the plots' usual third, less when the maps need it.
  EXPECT_EQ(PlotsHeight(742, 0, 1, false), 240);
  EXPECT_EQ(PlotsHeight(742, 600, 1, false), 142);
  EXPECT_EQ(PlotsHeight(742, 700, 1, false), 120);  // never under 120 px
  EXPECT_EQ(PlotsHeight(742, 300, 1, false), 240);  // never over the usual
  EXPECT_EQ(PlotsHeight(742, 600, 1, true), std::floor(742 * 0.62f));
}

// Scrolled to the weights and the context first only in a window smaller than 1280 x 800.
TEST(StageLayout, TheCanvasStartsAtTheResultInSmallWindowsOnly) {
  EXPECT_TRUE(StartsAtTheResult(1024, 700, 1));
  EXPECT_TRUE(StartsAtTheResult(1152, 720, 1));
  EXPECT_TRUE(StartsAtTheResult(1280, 770, 1));
  EXPECT_FALSE(StartsAtTheResult(1280, 800, 1));
  EXPECT_FALSE(StartsAtTheResult(1920, 1080, 1));
  EXPECT_TRUE(StartsAtTheResult(1920, 1080, 2));  // 1280 x 800 at scale 2 is 2560 x 1600
  EXPECT_FALSE(StartsAtTheResult(1280, 800, 0));  // no scale reported: 1
}

TEST(StageLayout, FirstWindowIs1280x800WhereTheWorkAreaHasRoom) {
  auto size = [](int w, int h, float scale) {
    const WindowSize s = FirstWindowSize(w, h, scale);
    return std::to_string(s.width) + "x" + std::to_string(s.height);
  };
  EXPECT_EQ(size(1920, 1050, 1), "1280x800");
  EXPECT_EQ(size(1280, 800, 1), "1280x800");
  EXPECT_EQ(size(1280, 770, 1), "1280x770");  // a desktop panel: the whole work area
  EXPECT_EQ(size(1152, 720, 1), "1152x720");
  EXPECT_EQ(size(1024, 700, 1), "1024x700");  // never below 1024 x 700 on a screen that has it
  EXPECT_EQ(size(800, 600, 1), "800x600");
  EXPECT_EQ(size(300, 200, 1), "480x480");
  EXPECT_EQ(size(3840, 2100, 2), "2560x1600");
  EXPECT_EQ(size(0, 0, 1), "1280x800");  // no work area reported
}

}  // namespace
}  // namespace attnlab::gui
