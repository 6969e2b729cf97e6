// figure_vector_test.cpp: figures as files (figure.h FigureFile, figure_meta.h): SVG that parses
// as XML with the tokens as <text>, PDF whose text pdftotext finds, the scenario every format
// carries (round-tripping for every preset), refusals of figures without one, and multi-panel
// figures whose panels are the single figures' pixels.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "attnlab/base/file_io.h"
#include "attnlab/figures/export.h"
#include "attnlab/figures/figure.h"
#include "attnlab/figures/figure_meta.h"
#include "attnlab/model/presets.h"
#include "attnlab/python/stages_json.h"
#include "test_util.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;

using test::TempPath;

using test::Shell;

StageView View(const Scenario& s, Stage stage) {
  return ExtractStage(RunScenario(s), s, stage, 0, 0);
}

std::string Meta(const Scenario& s, Stage stage, const FigureOptions& o = {}) {
  return FigureMetadata(s, {stage}, 0, 0, o);
}

// X = randn(1, T, 8), identity projections: a T x T weights figure of any size.
Scenario RandnScenario(int64_t T) {
  Scenario s;
  s.title = "randn T=" + std::to_string(T);
  s.input.source = InputSource::kRandn;
  s.input.d_in = 8;
  s.input.length = T;
  ValidateScenario(s);
  return s;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string XmlText(const std::string& s) {
  std::string out;
  for (char c : s)
    out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return out;
}

TEST(SvgFigure, ParsesAsXmlAndHoldsTitleAndTokensAsText) {
  const Scenario s = LoadPreset("dog-attacks-cat");
  const StageView v = View(s, Stage::kWeights);
  const std::string svg = FigureFile({v}, "", {}, FigureFormat::kSvg, Meta(s, Stage::kWeights));
  const fs::path path = TempPath(".svg");
  WriteFileAtomic(path.string(), svg);
  const auto [status, out] = Shell("xmllint --noout " + path.string() + " 2>&1");
  EXPECT_EQ(status, 0) << out;
  const HeatmapSpec spec = FigureSpec(v, {});
  EXPECT_NE(svg.find(">" + XmlText(spec.title) + "</text>"), std::string::npos) << spec.title;
  ASSERT_FALSE(spec.row_labels.empty());
  for (const std::string& token : spec.row_labels)
    EXPECT_NE(svg.find(">" + XmlText(token) + "</text>"), std::string::npos) << token;
  // Small grids are rectangles, one per cell: the one picture is the colorbar's gradient.
  EXPECT_EQ(Count(svg, "<image"), 1u);
  EXPECT_GE(Count(svg, "<rect"), size_t(v.values.size()));
  fs::remove(path);
}

TEST(SvgFigure, LargeGridsAreOnePictureNotOneRectanglePerCell) {
  const StageView v = View(RandnScenario(100), Stage::kWeights);
  ASSERT_GT(v.values.size(), 4096);
  const std::string svg = FigureFile({v}, "", {}, FigureFormat::kSvg);
  EXPECT_EQ(Count(svg, "<image"), 2u);   // the grid and the colorbar
  EXPECT_LT(Count(svg, "<rect"), 200u);  // background, ticks: not 10000 cells
}

TEST(PdfFigure, PdftotextFindsTheTitleAndTheTokens) {
  const Scenario s = LoadPreset("dog-attacks-cat");
  const StageView v = View(s, Stage::kWeights);
  const fs::path path = TempPath(".pdf");
  WriteFileAtomic(path.string(), FigureFile({v}, "", {}, FigureFormat::kPdf, ""));
  const auto [status, text] = Shell("pdftotext -layout " + path.string() + " - 2>&1");
  ASSERT_EQ(status, 0) << text;
  const HeatmapSpec spec = FigureSpec(v, {});
  EXPECT_NE(text.find("weights"), std::string::npos) << text;
  EXPECT_NE(text.find("softmax"), std::string::npos) << text;
  for (const std::string& token : spec.row_labels)
    EXPECT_NE(text.find(token), std::string::npos) << token << " not in\n" << text;
  fs::remove(path);
}

// Every format carries the scenario: a run of what the figure carries dumps as the original.
TEST(FigureMetadata, EveryFormatRoundTripsEveryPreset) {
  for (const PresetInfo& p : Presets()) {
    const Scenario s = LoadPreset(p.id);
    const Stages run = RunScenario(s);
    const std::string dump = DumpStages(run);
    StageView v = ExtractStage(run, s, Stage::kScores, 0, 0);
    FigureOptions o;
    o.colormap = "magma";
    o.range = RangeMode::kLog;
    const std::string meta = FigureMetadata(s, {Stage::kScores}, 0, 0, o);
    for (FigureFormat f : {FigureFormat::kPng, FigureFormat::kSvg, FigureFormat::kPdf}) {
      SCOPED_TRACE(p.id + " " + FigureFormatName(f));
      const FigureSource back = ReadFigureScenario(FigureFile({v}, "", o, f, meta));
      EXPECT_EQ(back.scenario_text, WriteScenario(s));
      EXPECT_EQ(DumpStages(RunScenario(back.scenario)), dump);
      ASSERT_EQ(back.stages.size(), 1u);
      EXPECT_EQ(back.stages[0], Stage::kScores);
      EXPECT_EQ(back.options.colormap, "magma");
      EXPECT_EQ(back.options.range, RangeMode::kLog);
    }
  }
}

TEST(FigureMetadata, PngTextChunkHasTheRightCrcAndSitsBeforeIend) {
  const std::string png = EncodePng(Image{1, 1, {255, 0, 0}});
  const std::string with = EmbedPngText(png, "k", "hello");
  // length 11, "iTXt", "k\0" + 4 zero bytes + "hello", CRC-32 computed independently (zlib).
  const std::string chunk = std::string("\0\0\0\x0biTXtk\0\0\0\0\0hello\x2a\x3a\x0b\x9d", 23);
  EXPECT_EQ(with, png.substr(0, png.size() - 12) + chunk + png.substr(png.size() - 12));
  EXPECT_EQ(PngText(with, "k"), "hello");
  EXPECT_EQ(PngText(with, "other"), std::nullopt);
  EXPECT_EQ(PngText(png, "k"), std::nullopt);
  EXPECT_THROW(EmbedPngText("not a png", "k", "x"), std::invalid_argument);
}

TEST(FigureMetadata, FiguresWithoutAScenarioAndDamagedFilesAreRefusedClearly) {
  const Scenario s = LoadPreset("dog-attacks-cat");
  const StageView v = View(s, Stage::kWeights);
  const std::string png = FigureFile({v}, "", {}, FigureFormat::kPng, Meta(s, Stage::kWeights));
  auto message = [](const std::string& bytes) {
    try {
      ReadFigureScenario(bytes);
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message(EncodePng(RenderFigure(v, {}))),
            "this PNG carries no Attention Lab scenario (only figures exported by Attention Lab "
            "do)");
  EXPECT_NE(message(FigureFile({v}, "", {}, FigureFormat::kSvg)).find("this SVG carries no"),
            std::string::npos);
  EXPECT_NE(message(FigureFile({v}, "", {}, FigureFormat::kPdf)).find("this PDF carries no"),
            std::string::npos);
  EXPECT_EQ(message("garbage"), "not a PNG, SVG or PDF figure");
  // Every truncation of a figure is refused (or, cut after its chunk, still read), never a crash.
  for (size_t n = 0; n < png.size(); n += 97) {
    const std::string m = message(png.substr(0, n));
    EXPECT_TRUE(m.find("carries no") != std::string::npos || m == "not a PNG, SVG or PDF figure" ||
                m == "accepted")
        << n << ": " << m;
  }
  std::string broken = FigureFile({v}, "", {}, FigureFormat::kSvg, Meta(s, Stage::kWeights));
  broken.replace(broken.find("attention-lab-figure"), 9, "something");
  EXPECT_NE(message(broken).find("the SVG's embedded scenario is damaged"), std::string::npos);
}

TEST(MultiPanelFigure, EachPanelIsTheSingleFigureWithItsOwnColorbar) {
  const Scenario s = LoadPreset("dog-attacks-cat");
  const Stages run = RunScenario(s);
  std::vector<StageView> views;
  for (Stage st : {Stage::kScores, Stage::kWeights, Stage::kContext})
    views.push_back(ExtractStage(run, s, st, 0, 0));
  std::vector<FigureLayout> layouts;
  const Image all = RenderFigure(views, "the title", {}, &layouts);
  ASSERT_EQ(layouts.size(), 3u);
  int right = 0;
  for (size_t i = 0; i < views.size(); ++i) {
    SCOPED_TRACE(StageName(views[i].stage));
    FigureLayout one;
    const Image single = RenderFigure(views[i], {}, &one);
    const FigureLayout& l = layouts[i];
    EXPECT_GT(l.grid_x, right);  // side by side, left to right
    right = l.bar_x + l.bar_w;
    EXPECT_EQ(l.grid_y - one.grid_y, layouts[0].grid_y - one.grid_y);  // one row, one title
    EXPECT_GT(l.grid_y, one.grid_y);                                   // under the title
    // The grid and the colorbar, pixel for pixel (none of these stages is hatched).
    auto same = [&](int x0, int y0, int w, int h) {
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          for (int k = 0; k < 3; ++k) {
            const size_t a = ((size_t(l.grid_y - one.grid_y + y0 + y)) * all.width +
                              (l.grid_x - one.grid_x + x0 + x)) *
                                 3 +
                             k;
            const size_t b = (size_t(y0 + y) * single.width + x0 + x) * 3 + k;
            if (all.rgb[a] != single.rgb[b]) return false;
          }
      return true;
    };
    EXPECT_TRUE(same(one.grid_x, one.grid_y, one.cell * one.cols, one.cell * one.rows));
    ASSERT_GT(one.bar_w, 0);
    EXPECT_TRUE(same(one.bar_x, one.bar_y, one.bar_w, one.bar_h));
  }
  EXPECT_GE(all.width, right);
  for (FigureFormat f : {FigureFormat::kSvg, FigureFormat::kPdf}) {
    const std::string bytes = FigureFile(views, "the title", {}, f);
    const fs::path path = TempPath(std::string(".") + FigureFormatName(f));
    WriteFileAtomic(path.string(), bytes);
    const std::string text =
        f == FigureFormat::kPdf ? Shell("pdftotext " + path.string() + " - 2>&1").second : bytes;
    for (const char* want : {"the title", "scores = ", "weights = ", "context = "})
      EXPECT_NE(text.find(want), std::string::npos) << FigureFormatName(f) << ": " << want;
    fs::remove(path);
  }
}

// At T = 2048 the grid is one embedded picture in every format, not T^2 shapes (the time it
// takes is bench/'s BM_ExportFigure: speed goals live in benchmarks, not in timed tests).
TEST(FigureFile, LargeFiguresAreSmallAndCarryTheirScenario) {
  const Scenario s = RandnScenario(2048);
  const StageView v = View(s, Stage::kWeights);
  size_t png_size = 0;
  for (FigureFormat f : {FigureFormat::kPng, FigureFormat::kSvg, FigureFormat::kPdf}) {
    const std::string bytes = FigureFile({v}, "", {}, f, Meta(s, Stage::kWeights));
    if (f == FigureFormat::kPng) png_size = bytes.size();
    // The grid is one picture: base64 makes the SVG's a third larger than the PNG, no more.
    EXPECT_LT(bytes.size(), png_size * 14 / 10) << FigureFormatName(f);
    EXPECT_EQ(ReadFigureScenario(bytes).scenario_text, WriteScenario(s));
  }
}

// pango shapes what the raster font cannot: combining accents, Arabic and emoji reach the PDF
// as text that pdftotext reads back.
TEST(PdfFigure, UnicodeTokensAreShapedText) {
  Scenario s;
  s.title = "Unicode";
  s.input.values = {Matrix::Identity(4, 4)};
  s.input.tokens = {"caf\u00e9", "cafe\u0301", "\u0645\u0631\u062d\u0628\u0627", "\U0001F600"};
  ValidateScenario(s);
  const fs::path pdf = TempPath(".pdf");
  WriteFileAtomic(pdf.string(), FigureFile({View(s, Stage::kWeights)}, "", {}, FigureFormat::kPdf));
  const std::string text = Shell("pdftotext " + pdf.string() + " -").second;
  EXPECT_NE(text.find("caf\u00e9"), std::string::npos) << text;
  EXPECT_NE(text.find("e\u0301"), std::string::npos) << text;
  EXPECT_NE(text.find("\U0001F600"), std::string::npos) << text;
  // Arabic comes back as its letters (in logical or visual order, as pdftotext decides).
  EXPECT_NE(text.find("\u0645"), std::string::npos) << text;
  EXPECT_NE(text.find("\u0628"), std::string::npos) << text;
  fs::remove(pdf);
}

}  // namespace
}  // namespace attnlab

namespace attnlab {
namespace {

// A printed size: the PDF page, the SVG's width and the PNG's pHYs all say 8 cm.
TEST(FigureFile, PrintedWidthIsThePageTheSvgSizeAndThePngResolution) {
  const Scenario s = LoadPreset("dog-attacks-cat");
  const StageView v = View(s, Stage::kWeights);
  FigureOptions o;
  o.width_inches = 8 / 2.54;
  o.scale = 2;
  const Image im = RenderFigure(v, o);
  const fs::path pdf = TempPath(".pdf");
  WriteFileAtomic(pdf.string(), FigureFile({v}, "", o, FigureFormat::kPdf));
  const std::string info = Shell("pdfinfo " + pdf.string()).second;
  EXPECT_NE(info.find("Page size:       226.77"), std::string::npos) << info;  // 8 cm = 226.77 pt
  fs::remove(pdf);
  EXPECT_NE(FigureFile({v}, "", o, FigureFormat::kSvg).find("width=\"3.1496in\""),
            std::string::npos);
  const std::string png = FigureFile({v}, "", o, FigureFormat::kPng);
  const size_t at = png.find("pHYs");
  ASSERT_EQ(at, 37u);  // right after IHDR
  const uint32_t per_metre = uint32_t(uint8_t(png[at + 4])) << 24 |
                             uint32_t(uint8_t(png[at + 5])) << 16 |
                             uint32_t(uint8_t(png[at + 6])) << 8 | uint8_t(png[at + 7]);
  EXPECT_NEAR(im.width / double(per_metre), 0.08, 0.0001);  // metres
  EXPECT_EQ(png[at + 12], 1);                               // unit: the metre
  // No size asked: no pHYs, the PNG is RenderFigure's.
  EXPECT_EQ(FigureFile({v}, "", {}, FigureFormat::kPng), EncodePng(RenderFigure(v, {})));
}

}  // namespace
}  // namespace attnlab
