// loss_plot_test.cpp: the loss curves as a PNG plot (loss_plot.h), checked by its pixels: every
// plotted step sits where its loss says, in its run's colour, and nothing of the curves lies
// where the losses are not; and the observer that lets the Training view draw the curves while
// the run goes on (train.h TrainAttentionHeadObserved) sees the same losses the run ends with.
#include "attnlab/figures/loss_plot.h"

#include <stb_image.h>

#include <cmath>

#include "attnlab/figures/export.h"
#include "attnlab/model/presets.h"
#include "test_util.h"

namespace attnlab {
namespace {

Rgb Pixel(const Image& im, int x, int y) {
  const uint8_t* p = &im.rgb[(static_cast<size_t>(y) * im.width + x) * 3];
  return {p[0], p[1], p[2]};
}

// Whether a pixel within `r` of (x, y) has about colour c (the curve is antialiased).
bool ColourNear(const Image& im, double x, double y, Rgb c, int r = 2) {
  for (int dy = -r; dy <= r; ++dy)
    for (int dx = -r; dx <= r; ++dx) {
      const Rgb p =
          Pixel(im, static_cast<int>(std::lround(x)) + dx, static_cast<int>(std::lround(y)) + dy);
      if (std::abs(p.r - c.r) + std::abs(p.g - c.g) + std::abs(p.b - c.b) < 30) return true;
    }
  return false;
}

// Two made-up runs: a loss falling from 3 to 0.2, and one staying near 2.5.
std::pair<TrainRun, TrainRun> Runs() {
  TrainRun a, b;
  for (int s = 0; s < 120; ++s) {
    a.loss.push_back(static_cast<float>(0.2 + 2.8 * std::exp(-s / 25.0)));
    b.loss.push_back(static_cast<float>(2.5 + 0.1 * std::sin(s / 7.0)));
  }
  return {a, b};
}

TEST(LossPlot, EveryStepIsWhereItsLossSays) {
  const auto [a, b] = Runs();
  LossPlotLayout l;
  const Image im = LossCurvesImage({&a, &b}, {"scaled", "unscaled"}, "test", 900, 560, &l);
  ASSERT_EQ(im.width, 900);
  ASSERT_EQ(im.height, 560);
  EXPECT_DOUBLE_EQ(l.x_max, 119);
  EXPECT_NEAR(l.y_max, 3.0 * 1.05, 1e-5);
  EXPECT_GT(l.right - l.left, 700);
  EXPECT_GT(l.bottom - l.top, 400);
  auto x = [&](double s) { return l.left + s / l.x_max * (l.right - l.left); };
  auto y = [&](double v) { return l.bottom - v / l.y_max * (l.bottom - l.top); };
  const Rgb blue = LossCurveColor(0), orange = LossCurveColor(1);
  for (int s = 0; s < 120; s += 7) {
    EXPECT_TRUE(ColourNear(im, x(s), y(a.loss[s]), blue)) << "scaled, step " << s;
    EXPECT_TRUE(ColourNear(im, x(s), y(b.loss[s]), orange)) << "unscaled, step " << s;
  }
  // Where no loss is (halfway between the curves at step 60, and near 0) there is no curve.
  const double mid = (a.loss[60] + b.loss[60]) / 2;
  EXPECT_FALSE(ColourNear(im, x(60), y(mid), blue, 3));
  EXPECT_FALSE(ColourNear(im, x(60), y(mid), orange, 3));
  EXPECT_FALSE(ColourNear(im, x(60), y(0.05), blue, 3));
  // Text: dark pixels left of the plot (tick numbers and the axis label) and under it.
  int dark_left = 0, dark_below = 0;
  for (int py = 0; py < im.height; ++py)
    for (int px = 0; px < im.width; ++px) {
      const Rgb p = Pixel(im, px, py);
      const bool dark = p.r + p.g + p.b < 200;
      dark_left += dark && px < l.left - 2;
      dark_below += dark && py > l.bottom + 2;
    }
  EXPECT_GT(dark_left, 200);
  EXPECT_GT(dark_below, 200);
}

TEST(LossPlot, PngOfTheImageAndBadInput) {
  const auto [a, b] = Runs();
  const std::string png = LossCurvesPng({&a, &b}, {"scaled", "unscaled"}, "title");
  int w = 0, h = 0, n = 0;
  unsigned char* data = stbi_load_from_memory(reinterpret_cast<const unsigned char*>(png.data()),
                                              static_cast<int>(png.size()), &w, &h, &n, 3);
  ASSERT_NE(data, nullptr);
  const Image im = LossCurvesImage({&a, &b}, {"scaled", "unscaled"}, "title");
  EXPECT_EQ(w, im.width);
  EXPECT_EQ(h, im.height);
  EXPECT_TRUE(std::equal(im.rgb.begin(), im.rgb.end(), data));
  stbi_image_free(data);
  const TrainRun empty;
  EXPECT_THROW(LossCurvesImage({}, {}, "t"), std::invalid_argument);
  EXPECT_THROW(LossCurvesImage({&a}, {"a", "b"}, "t"), std::invalid_argument);
  EXPECT_THROW(LossCurvesImage({&empty}, {"e"}, "t"), std::invalid_argument);
  EXPECT_THROW(LossCurvesImage({&a}, {"a"}, "t", 100, 100), std::invalid_argument);
}

TEST(LossPlot, ObserverSeesTheLossesAsTheyCome) {
  TrainOptions o;
  o.task = TrainTask::kCopyFirst;
  o.steps = 40;
  o.snapshot_every = 10;
  std::vector<float> seen;
  size_t snapshots_seen = 0;
  const Scenario s = LoadPreset("karpathy-head");
  const TrainRun run = TrainAttentionHeadObserved(s, o, [&](const TrainRun& so_far) {
    EXPECT_EQ(so_far.loss.size(), seen.size() + 1);
    EXPECT_EQ(so_far.example_tokens.size(), static_cast<size_t>(so_far.T));
    seen.push_back(so_far.loss.back());
    snapshots_seen = so_far.snapshots.size();
    return true;
  });
  EXPECT_EQ(seen, run.loss);
  EXPECT_EQ(snapshots_seen, 4u);  // steps 0, 10, 20, 30; the trained head's comes with the result
  EXPECT_EQ(run.snapshots.size(), 5u);
  EXPECT_EQ(run.loss, TrainAttentionHead(s, o).loss);
  EXPECT_EQ(LossPlotTitle(run), "copy-first \xC2\xB7 T " + std::to_string(run.T) +
                                    " \xC2\xB7 d_k " + std::to_string(run.d_k) +
                                    " \xC2\xB7 40 Adam steps (lr 0.01, batch 16)");
}

}  // namespace
}  // namespace attnlab
