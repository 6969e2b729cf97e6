// figure_test.cpp: exported figures, checked by their pixels: size and layout, cell colours
// equal to the shared colormap, masked cells hatched, colorbar ends, text in the label margins,
// thinned labels at T = 2048, and one golden image per preset (compared with a tolerance, since
// a different build of the DejaVu font may move a few text pixels). Set ATTNLAB_UPDATE_GOLDENS=1
// to rewrite the golden images after a deliberate change of the figure design.
#include "attnlab/figures/figure.h"

#include <stb_image.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "attnlab/base/file_io.h"
#include "attnlab/figures/export.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/presets.h"
#include "test_util.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;

Rgb Pixel(const Image& im, int x, int y) {
  const uint8_t* p = &im.rgb[(static_cast<size_t>(y) * im.width + x) * 3];
  return {p[0], p[1], p[2]};
}

Image Decode(const std::string& png) {
  int w, h, n;
  unsigned char* data = stbi_load_from_memory(reinterpret_cast<const unsigned char*>(png.data()),
                                              static_cast<int>(png.size()), &w, &h, &n, 3);
  Image im;
  if (!data) return im;
  im.width = w;
  im.height = h;
  im.rgb.assign(data, data + static_cast<size_t>(w) * h * 3);
  stbi_image_free(data);
  return im;
}

StageView View(const std::string& preset, Stage stage, int64_t head = 0, int64_t batch = 0) {
  const Scenario s = LoadPreset(preset);
  return ExtractStage(RunScenario(s), s, stage, head, batch);
}

// Counts non-white pixels in a rectangle: text was drawn there.
int Ink(const Image& im, int x0, int y0, int x1, int y1) {
  int n = 0;
  for (int y = std::max(0, y0); y < std::min(im.height, y1); ++y)
    for (int x = std::max(0, x0); x < std::min(im.width, x1); ++x)
      n += !(Pixel(im, x, y) == Rgb{255, 255, 255});
  return n;
}

TEST(RenderFigure, CellsUseTheSharedColormapAndTheMaskIsHatched) {
  const StageView v = View("karpathy-head", Stage::kWeights);
  FigureLayout lay;
  const Image im = RenderFigure(v, {}, &lay);
  EXPECT_EQ(lay.rows, 8);
  EXPECT_EQ(lay.cols, 8);
  ASSERT_GE(lay.cell, 20);
  const ValueRange range = FigureRange(v);
  EXPECT_EQ(range.lo, 0.0f);
  EXPECT_EQ(range.hi, 1.0f);
  const Colormap& cmap = DefaultColormap(false);
  // An allowed cell, sampled near its corner (away from the printed value and the grid lines).
  const int x = lay.grid_x + 2 * lay.cell + 3, y = lay.grid_y + 5 * lay.cell + 3;
  EXPECT_EQ(Pixel(im, x, y), cmap.lut[LutIndex(v.values(5, 2), range)]);
  // A masked cell (row 1, column 6): the hatch, pixel by pixel, never a colormap colour (but
  // in its middle line, where it prints its weight 0.0000 as PyTorch does, across the cell).
  auto in_middle = [&](int d) { return d >= lay.cell / 4 && d < lay.cell - lay.cell / 4; };
  for (int dy = 3; dy < lay.cell - 3; ++dy)
    for (int dx = 3; dx < lay.cell - 3; ++dx) {
      if (in_middle(dy)) continue;
      const int mx = lay.grid_x + 6 * lay.cell + dx, my = lay.grid_y + 1 * lay.cell + dy;
      ASSERT_EQ(Pixel(im, mx, my), MaskedColorAt(mx, my));
    }
  // Colorbar: high end at the top, low end at the bottom.
  EXPECT_EQ(Pixel(im, lay.bar_x + 5, lay.bar_y), cmap.lut[255]);
  EXPECT_EQ(Pixel(im, lay.bar_x + 5, lay.bar_y + lay.bar_h - 1), cmap.lut[0]);
  // Text in the margins: the title, the row labels, the column labels, the tick labels.
  EXPECT_GT(Ink(im, 0, 0, im.width, lay.grid_y - 4), 200);
  EXPECT_GT(Ink(im, lay.grid_x - 40, lay.grid_y, lay.grid_x - 2, lay.grid_y + 8 * lay.cell), 100);
  EXPECT_GT(
      Ink(im, lay.grid_x, lay.grid_y + 8 * lay.cell + 2, lay.grid_x + 8 * lay.cell, im.height),
      100);
  EXPECT_GT(Ink(im, lay.bar_x + lay.bar_w + 2, lay.bar_y, im.width, lay.bar_y + lay.bar_h), 100);
  EXPECT_TRUE(lay.values_shown);
}

TEST(RenderFigure, DivergingStagesAreCentredOnZero) {
  const StageView v = View("raschka-journey", Stage::kScores);
  EXPECT_TRUE(v.diverging);
  const ValueRange r = FigureRange(v);
  EXPECT_EQ(r.lo, -r.hi);
  FigureLayout lay;
  const Image im = RenderFigure(v, {}, &lay);
  const Colormap& cmap = DefaultColormap(true);
  EXPECT_EQ(Pixel(im, lay.grid_x + 3, lay.grid_y + 3), cmap.lut[LutIndex(v.values(0, 0), r)]);
  const Rgb zero = Pixel(im, lay.bar_x + 5, lay.bar_y + lay.bar_h / 2);  // the value 0
  EXPECT_TRUE(zero == cmap.lut[127] || zero == cmap.lut[128]);
}

TEST(RenderFigure, DataRangeGivesContrastToTinyWeights) {
  Scenario s;
  s.input.source = InputSource::kRandn;
  s.input.length = 300;
  s.input.d_in = 4;
  s.projections.init = ProjectionInit::kIdentity;
  s.scaling.multiplier = 0.01;  // almost uniform: every weight near 1/300
  const StageView v = ExtractStage(RunScenario(s), s, Stage::kWeights, 0, 0);
  EXPECT_EQ(FigureRange(v).hi, 1.0f);
  const ValueRange data = FigureRange(v, RangeMode::kData);
  EXPECT_EQ(data.lo, 0.0f);
  EXPECT_EQ(data.hi, v.values.maxCoeff());
  FigureLayout lay;
  const Image im = RenderFigure(
      v,
      [] {
        FigureOptions o;
        o.range = RangeMode::kData;
        return o;
      }(),
      &lay);
  // The largest weight gets the top colour of the map.
  Eigen::Index r, c;
  v.values.maxCoeff(&r, &c);
  EXPECT_EQ(Pixel(im, lay.grid_x + c * lay.cell, lay.grid_y + r * lay.cell),
            DefaultColormap(false).lut[255]);
}

TEST(RenderFigure, NanCellsAreMagenta) {
  Scenario s = LoadPreset("raschka-journey");
  s.scaling.multiplier = 1e6;
  s.normalization = Normalization::kSoftmaxNaive;  // overflow: inf / inf
  const StageView v = ExtractStage(RunScenario(s), s, Stage::kWeights, 0, 0);
  ASSERT_TRUE(std::isnan(v.values(1, 1)));
  FigureLayout lay;
  const Image im = RenderFigure(v, {}, &lay);
  EXPECT_EQ(Pixel(im, lay.grid_x + lay.cell + 3, lay.grid_y + lay.cell + 3), kNanColor);
}

TEST(RenderFigure, LargeGridsUseOnePixelPerCellAndThinTheLabels) {
  Scenario s;
  s.input.source = InputSource::kRandn;
  s.input.length = 2048;
  s.input.d_in = 8;
  s.projections.init = ProjectionInit::kIdentity;
  s.mask.kind = MaskKind::kCausal;
  const StageView v = ExtractStage(RunScenario(s), s, Stage::kLogits, 0, 0);
  FigureLayout lay;
  const Image im = RenderFigure(v, {}, &lay);
  EXPECT_EQ(lay.cell, 1);
  EXPECT_GE(im.width, 2048);
  EXPECT_GE(lay.row_label_step, 10);  // labels at least a line apart, not 2048 on top of each other
  EXPECT_TRUE(lay.col_labels_rotated);
  EXPECT_FALSE(lay.values_shown);
}

TEST(RenderFigure, ScaleDoublesEverything) {
  const StageView v = View("raschka-journey", Stage::kWeights);
  FigureLayout a, b;
  const Image one = RenderFigure(v, {}, &a);
  const Image two = RenderFigure(v, {.scale = 2}, &b);
  EXPECT_EQ(b.cell, 2 * a.cell);
  EXPECT_NEAR(two.width, 2 * one.width, 8);
  EXPECT_THROW(RenderFigure(v, {.scale = 9}), std::invalid_argument);
  EXPECT_THROW(RenderFigure(v,
                            [] {
                              FigureOptions o;
                              o.colormap = "jet";
                              return o;
                            }()),
               std::invalid_argument);
}

TEST(ExtractStage, RefusesWhatTheScenarioDoesNotHave) {
  const Scenario s = LoadPreset("raschka-journey");
  const Stages st = RunScenario(s);
  auto message = [&](Stage stage, int64_t h, int64_t b) {
    try {
      ExtractStage(st, s, stage, h, b);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(message(Stage::kWeights, 1, 0), "head 1 is out of range: the scenario has 1 head (0)");
  EXPECT_EQ(message(Stage::kWeights, 0, 2),
            "batch 2 is out of range: the scenario has a batch of 1 (0..0)");
  EXPECT_EQ(message(Stage::kWeightsDropped, 0, 0),
            "weights_dropped needs dropout p > 0 (this scenario has none)");
}

TEST(StageData, CsvAndNpyHoldTheMatrix) {
  const StageView v = View("raschka-journey", Stage::kScores);
  const std::string csv = StageCsv(v);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "query,Your,journey,starts,with,one,step");
  EXPECT_EQ(csv.substr(csv.find('\n') + 1, 5), "Your,");
  const std::string npy = StageNpy(v);
  EXPECT_EQ(npy.substr(0, 6), "\x93NUMPY");
  const size_t header =
      static_cast<unsigned char>(npy[8]) | (static_cast<unsigned char>(npy[9]) << 8);
  EXPECT_EQ((10 + header) % 64, 0u);
  EXPECT_NE(npy.find("'shape': (6, 6)"), std::string::npos);
  ASSERT_EQ(npy.size(), 10 + header + 36 * 4);
  float first;
  std::memcpy(&first, npy.data() + 10 + header, 4);
  EXPECT_EQ(first, v.values(0, 0));
}

// A float64 scenario (the NumPy notebook's preset) exports its double values: NPY as '<f8',
// CSV as the shortest text of each double. They used to be the float32 roundings.
TEST(StageData, Float64ScenariosExportTheirDoubles) {
  const Scenario s = LoadPreset("numpy-masked");
  ASSERT_EQ(s.dtype, Dtype::kFloat64);
  const Stages st = RunScenario(s);
  ASSERT_TRUE(st.f64);
  const StageView v = ExtractStage(st, s, Stage::kWeights, 0, 0);
  const MatrixD& want = st.f64->weights[0];
  ASSERT_EQ(v.values64.rows(), want.rows());
  const std::string npy = StageNpy(v);
  EXPECT_NE(npy.find("'descr': '<f8'"), std::string::npos);
  const size_t header =
      static_cast<unsigned char>(npy[8]) | (static_cast<unsigned char>(npy[9]) << 8);
  ASSERT_EQ(npy.size(), 10 + header + static_cast<size_t>(want.size()) * 8);
  int differ_from_float = 0;
  for (Eigen::Index k = 0; k < want.size(); ++k) {
    double got;
    std::memcpy(&got, npy.data() + 10 + header + 8 * k, 8);
    EXPECT_EQ(got, want.data()[k]) << k;
    differ_from_float += got != static_cast<double>(static_cast<float>(got));
  }
  EXPECT_GT(differ_from_float, 0);  // doubles that a float32 file could not have held
  // CSV: row 1 (the second query) after its label; each field reads back as the double.
  const std::string csv = StageCsv(v);
  size_t line = csv.find('\n') + 1;
  line = csv.find('\n', line) + 1;
  std::string row = csv.substr(line, csv.find('\n', line) - line);
  row = row.substr(row.find(',') + 1);
  for (Eigen::Index c = 0; c < want.cols(); ++c) {
    const size_t comma = row.find(',');
    EXPECT_EQ(std::stod(row.substr(0, comma)), want(1, c)) << "column " << c;
    row = comma == std::string::npos ? "" : row.substr(comma + 1);
  }
  // A float32 scenario keeps writing float32.
  EXPECT_NE(StageNpy(View("raschka-journey", Stage::kWeights)).find("'<f4'"), std::string::npos);
}

TEST(ExportAll, OneFilePerStageHeadAndBatch) {
  const fs::path dir =
      fs::temp_directory_path() / ("attnlab_export_all_" + std::to_string(getpid()));
  fs::remove_all(dir);
  Scenario s = LoadPreset("karpathy-head");  // B = 4, H = 1
  s.dropout.p = 0.1;
  const std::vector<std::string> files =
      ExportAll(RunScenario(s), s, {}, ExportFormat::kCsv, dir.string());
  // X, Q, K, V, scores, logits, weights, weights_dropped, context: 4 batches each; mask: one.
  EXPECT_EQ(files.size(), 37u);
  EXPECT_TRUE(fs::exists(dir / "Q_b0.csv"));
  EXPECT_TRUE(fs::exists(dir / "weights_dropped_b3.csv"));
  EXPECT_TRUE(fs::exists(dir / "mask.csv"));
  fs::remove_all(dir);
}

// A qkv scenario has no X: `export --all` writes the stages its run makes (StageInRun) and
// skips X, where it stopped with ExtractStage's error before the stages' table.
TEST(ExportAll, SkipsTheXOfAQkvScenario) {
  const fs::path dir =
      fs::temp_directory_path() / ("attnlab_export_qkv_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const Scenario s = LoadPreset("numpy-masked");  // input.source "qkv", B = 1, H = 1
  const std::vector<std::string> files =
      ExportAll(RunScenario(s), s, {}, ExportFormat::kCsv, dir.string());
  // Q, K, V, scores, mask, logits, weights, context.
  EXPECT_EQ(files.size(), 8u);
  EXPECT_FALSE(fs::exists(dir / "X.csv"));
  EXPECT_TRUE(fs::exists(dir / "Q.csv"));
  EXPECT_TRUE(fs::exists(dir / "context.csv"));
  fs::remove_all(dir);
}

// gpt-oss's sink (scaling.sink): `export --all` writes what the sink took of each row, one
// T x 1 file per head, with PyTorch's numbers (the preset's golden, tools/torch_oracle.py);
// its CSV column is labelled "sink". A scenario without a sink has no such stage.
TEST(ExportAll, WritesTheSinkColumnOfEachHead) {
  const fs::path dir =
      fs::temp_directory_path() / ("attnlab_export_sink_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const Scenario s = LoadPreset("gpt-oss-sink");  // T = 8, H = 2, sinks 1.5 and -1
  const Stages st = RunScenario(s);
  const std::vector<std::string> files = ExportAll(st, s, {}, ExportFormat::kNpy, dir.string());
  const nlohmann::json want =
      test::LoadGolden("scenarios/preset-gpt-oss-sink.json")["expected"]["sink"];
  for (int h = 0; h < 2; ++h) {
    const fs::path path = dir / ("sink_h" + std::to_string(h) + ".npy");
    ASSERT_NE(std::find(files.begin(), files.end(), path.string()), files.end()) << path;
    const std::string npy = ReadFile(path.string());
    EXPECT_NE(npy.find("'shape': (8, 1)"), std::string::npos);
    const size_t header =
        static_cast<unsigned char>(npy[8]) | (static_cast<unsigned char>(npy[9]) << 8);
    ASSERT_EQ(npy.size(), 10 + header + 8 * 4);
    for (int i = 0; i < 8; ++i) {
      float got;
      std::memcpy(&got, npy.data() + 10 + header + 4 * i, 4);
      EXPECT_NEAR(got, want[0][h][i][0].get<double>(), 1e-6) << "head " << h << " row " << i;
    }
  }
  // Row 0 of head 0 (one key, logit z; the sink's logit 1.5): PyTorch's 0.776070..
  EXPECT_NEAR(st.Head(st.sink, 0, 0)(0, 0), 0.7760704159736633, 1e-6);
  const std::string csv = StageCsv(ExtractStage(st, s, Stage::kSink, 1, 0));
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "query,sink");
  EXPECT_EQ(csv.substr(csv.find('\n') + 1, 4), "the,");
  // With the weights, each row sums to 1.
  const Matrix& w = st.Head(st.weights, 0, 1);
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(w.row(i).sum() + st.Head(st.sink, 0, 1)(i, 0), 1.0, 1e-6);
  fs::remove_all(dir);
  const Scenario plain = LoadPreset("raschka-journey");
  try {
    ExtractStage(RunScenario(plain), plain, Stage::kSink, 0, 0);
    ADD_FAILURE() << "a sink stage without scaling.sink";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "sink needs scaling.sink (this scenario has no attention sink)");
  }
}

class GoldenFigure : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenFigure, MatchesTheCommittedImage) {
  const std::string path =
      std::string(ATTNLAB_GOLDEN_DIR) + "/figures/" + GetParam() + "-weights.png";
  const Image im = RenderFigure(View(GetParam(), Stage::kWeights), {});
  if (std::getenv("ATTNLAB_UPDATE_GOLDENS")) {
    fs::create_directories(fs::path(path).parent_path());
    WriteFileAtomic(path, EncodePng(im));
  }
  const Image want = Decode(ReadFile(path));
  ASSERT_EQ(im.width, want.width);
  ASSERT_EQ(im.height, want.height);
  size_t differing = 0;
  for (size_t i = 0; i < im.rgb.size(); i += 3)
    for (int c = 0; c < 3; ++c)
      if (std::abs(int(im.rgb[i + c]) - int(want.rgb[i + c])) > 24) {
        ++differing;
        break;
      }
  // At most 0.5% of the pixels may differ noticeably (text antialiasing of another font build).
  EXPECT_LE(differing, im.rgb.size() / 3 / 200) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Presets, GoldenFigure,
                         ::testing::Values("raschka-journey", "dog-attacks-cat", "karpathy-trick",
                                           "karpathy-head", "scaling-demo"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace attnlab

namespace attnlab {
namespace {

TEST(DifferenceView, ScaledAgainstUnscaled) {
  Scenario a = LoadPreset("karpathy-head");
  Scenario b = a;
  a.scaling.sqrt_dk = true;
  const StageView va = ExtractStage(RunScenario(a), a, Stage::kWeights, 0, 0);
  const StageView vb = ExtractStage(RunScenario(b), b, Stage::kWeights, 0, 0);
  const StageView d = DifferenceView(va, vb, "scaled", "unscaled");
  EXPECT_TRUE(d.diverging);
  EXPECT_EQ(d.title, "weights: scaled \u2212 unscaled");
  EXPECT_FLOAT_EQ(d.values(3, 1), va.values(3, 1) - vb.values(3, 1));
  EXPECT_EQ(d.values(0, 0), 0.0f);  // the first token attends only to itself either way
  EXPECT_EQ(d.masked(0, 5), 1);     // causal: still masked
  // Each row of the difference sums to 0: both rows sum to 1.
  EXPECT_NEAR(d.values.row(7).sum(), 0.0f, 1e-6);
  const StageView ctx = ExtractStage(RunScenario(a), a, Stage::kContext, 0, 0);
  EXPECT_THROW(DifferenceView(va, ctx, "a", "b"), std::invalid_argument);
}

}  // namespace
}  // namespace attnlab

namespace attnlab {
namespace {

TEST(ExportAll, UsesTheTwoColormapsItIsGiven) {
  // The window's "export all" passes its two colour choices: weights in magma, scores in rdbu.
  const Scenario s = LoadPreset("raschka-journey");
  const Stages st = RunScenario(s);
  FigureOptions opt;
  opt.sequential_colormap = "magma";
  opt.diverging_colormap = "rdbu";
  for (Stage stage : {Stage::kWeights, Stage::kScores}) {
    const StageView v = ExtractStage(st, s, stage, 0, 0);
    FigureLayout lay;
    const Image im = RenderFigure(v, opt, &lay);
    const Colormap& want = FindColormap(v.diverging ? "rdbu" : "magma");
    EXPECT_EQ(Pixel(im, lay.bar_x + 5, lay.bar_y), want.lut[255]) << StageName(stage);
  }
}

}  // namespace
}  // namespace attnlab

namespace attnlab {
namespace {

TEST(StageCsv, FormulaLikeTokensAreNeutralisedAndNumbersStayNumbers) {
  StageView v;
  v.stage = Stage::kScores;
  v.row_axis = "query";
  v.values = Matrix::Constant(3, 3, -1.5f);
  v.row_labels = {"=HYPERLINK(\"http://x\",\"y\")", "@SUM(A1)", "+1"};
  v.col_labels = {"-x", "\tcmd", "plain"};
  const std::string csv = StageCsv(v);
  EXPECT_EQ(csv,
            "query,\"'-x\",\"'\tcmd\",plain\n"
            "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",-1.5,-1.5,-1.5\n"
            "\"'@SUM(A1)\",-1.5,-1.5,-1.5\n"
            "\"'+1\",-1.5,-1.5,-1.5\n");
}

StageView SquareView(Eigen::Index t) {
  StageView v;
  v.stage = Stage::kWeights;
  v.values.resize(t, t);  // only the shape matters to the size check
  return v;
}

TEST(CheckFigureSize, RefusesFiguresStbCannotEncodeBeforeRendering) {
  // T = 4096 at scale 8: a 32768 x 32768 grid (stb wrote an empty PNG); T = 2048: 16384^2.
  for (Eigen::Index t : {4096, 2048}) {
    try {
      CheckFigureSize(SquareView(t), {.scale = 8});
      FAIL() << t;
    } catch (const std::invalid_argument& e) {
      const std::string side = std::to_string(8 * t);
      EXPECT_EQ(std::string(e.what()), "the weights figure would be " + side + " x " + side +
                                           " pixels, more than the PNG limit of 134217728 "
                                           "pixels (about 11585 x 11585): use a smaller scale, "
                                           "or export CSV or NPY");
    }
  }
  EXPECT_NO_THROW(CheckFigureSize(SquareView(2048), {.scale = 4}));  // 8192^2 fits
  EXPECT_NO_THROW(CheckFigureSize(SquareView(6), {.scale = 8}));
}

TEST(EncodePng, RefusesImagesItCannotEncodeInsteadOfReturningNothing) {
  EXPECT_THROW(EncodePng(Image{}), std::invalid_argument);
  EXPECT_THROW(EncodePng(Image{2, 2, std::vector<uint8_t>(5)}), std::invalid_argument);
  const Image big{20000, 20000, {}};  // over the limit: refused on the size alone
  EXPECT_THROW(EncodePng(big), std::invalid_argument);
  const std::string png = EncodePng(Image{1, 1, {255, 0, 0}});
  EXPECT_EQ(png.substr(1, 3), "PNG");
}

TEST(ExportAll, WritesEveryFileOrNone) {
  const fs::path dir =
      fs::temp_directory_path() / ("attnlab_export_all_none_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "weights.csv");  // a folder in the way of one of the files
  const Scenario s = LoadPreset("raschka-journey");
  EXPECT_THROW(ExportAll(RunScenario(s), s, {}, ExportFormat::kCsv, dir.string()), FileError);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{"weights.csv"});  // not scores.csv, no temporaries
  // A folder the failing call created is removed again.
  const fs::path fresh = dir / "fresh";
  EXPECT_THROW(ExportAll(
                   RunScenario(s), s,
                   [] {
                     FigureOptions o;
                     o.colormap = "jet";
                     return o;
                   }(),
                   ExportFormat::kPng, fresh),
               std::invalid_argument);
  EXPECT_FALSE(fs::exists(fresh));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnlab

namespace attnlab {
namespace {

// The ink of one row label's strip (left of the grid, one cell high), as RGB bytes.
struct Strip {
  std::vector<uint8_t> rgb;
  int left = -1, right = -1, top = -1, bottom = -1;  // the ink's bounding box; -1: none
};

Strip RowLabelStrip(const Image& im, const FigureLayout& lay, int row) {
  Strip s;
  const int x0 = 0, x1 = lay.grid_x - 1, y0 = lay.grid_y + row * lay.cell;
  for (int y = y0; y < y0 + lay.cell; ++y)
    for (int x = x0; x < x1; ++x) {
      const Rgb p = Pixel(im, x, y);
      s.rgb.insert(s.rgb.end(), {p.r, p.g, p.b});
      if (p == Rgb{255, 255, 255} || x < lay.grid_x - 200) continue;  // axis name far left
      if (s.left < 0 || x < s.left) s.left = x;
      s.right = std::max(s.right, x);
      if (s.top < 0) s.top = y;
      s.bottom = y;
    }
  return s;
}

// pango shapes the PNG's text: a combining accent composes with its letter (drawn exactly as the
// precomposed letter), Arabic letters join (other glyphs than the same letters kept apart by
// zero-width non-joiners), the emoji has a glyph; no label needs a replacement box.
TEST(RenderFigure, UnicodeTokensAreShapedWithoutReplacementBoxes) {
  const std::vector<std::string> tokens = {
      "caf\u00e9", "cafe\u0301", "\u0645\u0631\u062d\u0628\u0627", "\U0001F600",
      "\u0645\u200c\u0631\u200c\u062d\u200c\u0628\u200c\u0627"};
  Scenario s;
  s.input.values = {Matrix::Identity(5, 4)};
  s.input.tokens = tokens;
  ValidateScenario(s);
  FigureLayout lay;
  const Image im = RenderFigure(ExtractStage(RunScenario(s), s, Stage::kWeights, 0, 0), {}, &lay);
  std::vector<Strip> strips;
  for (int r = 0; r < 5; ++r) {
    SCOPED_TRACE(tokens[r]);
    EXPECT_EQ(MissingGlyphs(tokens[r]), 0);
    strips.push_back(RowLabelStrip(im, lay, r));
    ASSERT_GE(strips.back().left, 0);  // non-empty glyph boxes
    EXPECT_GE(strips.back().bottom - strips.back().top, 7);
    EXPECT_GE(strips.back().right - strips.back().left, 7);
  }
  EXPECT_EQ(strips[0].rgb, strips[1].rgb);  // e + U+0301 is drawn as the letter with its accent
  // Joined forms (with their connecting strokes) are not the isolated ones: unshaped, the two
  // would draw the same glyphs.
  EXPECT_GT(std::abs((strips[2].right - strips[2].left) - (strips[4].right - strips[4].left)), 8);
  EXPECT_GT(MissingGlyphs("\U0010FFFD"), 0);  // the check sees a box when there is one
}

}  // namespace
}  // namespace attnlab

namespace attnlab {
namespace {

// Multi-panel colorbars: auto shares one when every panel has the same scale (two batches'
// weights on [0, 1]); shared puts Q, K and V on one symmetric range; a diverging and a
// sequential panel cannot share one.
TEST(MultiPanelFigure, ColorbarIsSharedWhenTheScalesAgreeOrWhenAsked) {
  const Scenario s = LoadPreset("karpathy-head");
  const Stages run = RunScenario(s);
  std::vector<FigureLayout> lay;
  RenderFigure(
      {ExtractStage(run, s, Stage::kWeights, 0, 0), ExtractStage(run, s, Stage::kWeights, 0, 1)},
      "t", {}, &lay);
  ASSERT_EQ(lay.size(), 2u);
  EXPECT_EQ(lay[0].bar_w, 0);  // one colorbar, right of the last panel
  EXPECT_GT(lay[1].bar_w, 0);
  FigureOptions per_panel;
  per_panel.colorbar = ColorbarMode::kPerPanel;
  lay.clear();
  RenderFigure(
      {ExtractStage(run, s, Stage::kWeights, 0, 0), ExtractStage(run, s, Stage::kWeights, 0, 1)},
      "t", per_panel, &lay);
  EXPECT_GT(lay[0].bar_w, 0);

  std::vector<StageView> qkv;
  float a = 0;
  for (Stage st : {Stage::kQ, Stage::kK, Stage::kV}) {
    qkv.push_back(ExtractStage(run, s, st, 0, 0));
    a = std::max(a, qkv.back().values.cwiseAbs().maxCoeff());
  }
  lay.clear();
  const Image own = RenderFigure(qkv, "t", {}, &lay);  // different ranges: one colorbar each
  EXPECT_GT(lay[0].bar_w, 0);
  FigureOptions shared;
  shared.colorbar = ColorbarMode::kShared;
  lay.clear();
  const Image im = RenderFigure(qkv, "t", shared, &lay);
  ASSERT_EQ(lay.size(), 3u);
  EXPECT_EQ(lay[0].bar_w + lay[1].bar_w, 0);
  EXPECT_GT(lay[2].bar_w, 0);
  const Colormap& cmap = DefaultColormap(true);
  for (int p = 0; p < 3; ++p)  // each panel's first cell on the shared range [-a, a]
    EXPECT_EQ(Pixel(im, lay[p].grid_x + 2, lay[p].grid_y + 2),
              cmap.lut[LutIndex(qkv[p].values(0, 0), ValueRange{-a, a})]);

  try {
    RenderFigure(
        {ExtractStage(run, s, Stage::kScores, 0, 0), ExtractStage(run, s, Stage::kWeights, 0, 0)},
        "t", shared);
    ADD_FAILURE() << "scores and weights shared a colorbar";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "no shared colorbar: weights is coloured by viridis, scores by coolwarm; choose one "
              "colormap, or a colorbar per panel");
  }
  EXPECT_EQ(ParseColorbarMode("per-panel"), ColorbarMode::kPerPanel);
  EXPECT_EQ(ParseColorbarMode("both"), std::nullopt);
}

}  // namespace
}  // namespace attnlab
