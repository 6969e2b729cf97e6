// gui_test.cpp: the window end to end, under a virtual X server (xvfb-run, Mesa's llvmpipe).
// Each test starts the app with --screenshot / --script and checks what came out: the pixels of
// the heatmaps (colormap colours, the mask's hatch), and for scripted runs the saved scenario,
// the exported PNG (byte-identical to `attention-lab export`) and the restored session.
// Each run takes about a second; the tests are skipped when xvfb-run is not installed.
//
// [SECTION] Running the app under xvfb-run
// [SECTION] Reading screenshots: colormap colours and the hatch inside each heatmap
// [SECTION] Every preset opens and shows its heatmaps; cells have the figure's colours
// [SECTION] Scripted: undo/redo, export, save, bad edits, painting, session, stats
#include <gtest/gtest.h>
#include <stb_image.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "attnlab/colormap.h"
#include "attnlab/figure.h"
#include "attnlab/file_io.h"
#include "attnlab/pipeline.h"
#include "attnlab/presets.h"
#include "attnlab/scenario.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// [SECTION] Running the app under xvfb-run

struct Result {
  int status = -1;
  std::string out, err;
};

std::string TestName() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "_" + info->name();
  for (char& c : name)
    if (c == '/') c = '_';
  return name + "_" + std::to_string(getpid());
}

bool HaveXvfb() { return std::system("command -v xvfb-run >/dev/null 2>&1") == 0; }

/// A fresh folder per test, also used as XDG_CONFIG_HOME so no test touches a real session.
class Gui : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveXvfb()) GTEST_SKIP() << "xvfb-run is not installed (Debian package xvfb)";
    dir_ = fs::temp_directory_path() / ("attnlab_gui_" + TestName());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name)) << text;
    return Path(name);
  }

  /// Runs the app under xvfb-run with XDG_CONFIG_HOME in the test folder. xvfb-run -a can lose
  /// a race for a display number when tests run side by side: then it is tried again.
  Result RunApp(const std::string& args, bool gui = true) const {
    Result r;
    for (int attempt = 0; attempt < 4; ++attempt) {
      const std::string err_path = Path("stderr.txt");
      std::string cmd = "XDG_CONFIG_HOME=" + Path("config") + " ";
      if (gui) cmd += "xvfb-run -a -s '-screen 0 1280x800x24' ";
      cmd += std::string(ATTNLAB_APP) + " " + args + " 2>" + err_path;
      FILE* p = popen(cmd.c_str(), "r");
      r = Result{};
      char buf[4096];
      size_t n;
      while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
      const int status = pclose(p);
      r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      r.err = ReadFile(err_path);
      if (r.err.find("Xvfb failed to start") == std::string::npos) break;
      usleep(200000 * (attempt + 1));
    }
    return r;
  }

  fs::path dir_;
};

// ---------------------------------------------------------------------------------------------
// [SECTION] Reading screenshots: colormap colours and the hatch inside each heatmap

struct Png {
  int w = 0, h = 0;
  std::vector<uint8_t> rgb;
  Rgb At(int x, int y) const {
    const uint8_t* p = &rgb[(static_cast<size_t>(y) * w + x) * 3];
    return Rgb{p[0], p[1], p[2]};
  }
};

Png LoadPng(const std::string& path) {
  Png png;
  int channels = 0;
  unsigned char* data = stbi_load(path.c_str(), &png.w, &png.h, &channels, 3);
  if (!data) return png;
  png.rgb.assign(data, data + static_cast<size_t>(png.w) * png.h * 3);
  stbi_image_free(data);
  return png;
}

uint32_t Key(Rgb c) { return (c.r << 16) | (c.g << 8) | c.b; }

/// Every colour of every colormap.
const std::set<uint32_t>& ColormapColours() {
  static const std::set<uint32_t> colours = [] {
    std::set<uint32_t> s;
    for (const Colormap& cm : Colormaps())
      for (const Rgb& c : cm.lut) s.insert(Key(c));
    return s;
  }();
  return colours;
}

/// One heatmap image as the app reports it (--layout), and what its pixels hold.
struct HeatmapStats {
  std::string stage;
  int rows = 0, cols = 0;
  int64_t pixels = 0;
  int distinct_colours = 0;      ///< distinct colormap colours
  double colormap_fraction = 0;  ///< pixels that are a colormap colour or the hatch
  double hatch_fraction = 0;     ///< pixels of the masked hatch (kMaskedLight, kMaskedStripe)
};

std::vector<HeatmapStats> Analyse(const Png& png, const std::string& layout_json) {
  std::vector<HeatmapStats> out;
  const nlohmann::json layout = nlohmann::json::parse(layout_json);
  for (const nlohmann::json& m : layout["heatmaps"]) {
    HeatmapStats s;
    s.stage = m["stage"];
    s.rows = m["rows"];
    s.cols = m["cols"];
    // One pixel in from the edges: the frame and the row highlight sit there.
    const int x0 = static_cast<int>(m["x0"].get<double>()) + 1,
              x1 = static_cast<int>(m["x1"].get<double>()) - 1;
    const int y0 = static_cast<int>(m["y0"].get<double>()) + 1,
              y1 = static_cast<int>(m["y1"].get<double>()) - 1;
    std::set<uint32_t> seen;
    int64_t in_map = 0, hatch = 0;
    for (int y = std::max(y0, 0); y < std::min(y1, png.h); ++y)
      for (int x = std::max(x0, 0); x < std::min(x1, png.w); ++x) {
        const Rgb c = png.At(x, y);
        ++s.pixels;
        if (c == kMaskedLight || c == kMaskedStripe) {
          ++hatch;
          ++in_map;
        } else if (ColormapColours().count(Key(c))) {
          ++in_map;
          seen.insert(Key(c));
        }
      }
    s.distinct_colours = static_cast<int>(seen.size());
    s.colormap_fraction = s.pixels ? static_cast<double>(in_map) / s.pixels : 0;
    s.hatch_fraction = s.pixels ? static_cast<double>(hatch) / s.pixels : 0;
    out.push_back(s);
  }
  return out;
}

std::vector<std::string> PresetIds() {
  std::vector<std::string> ids;
  for (const PresetInfo& p : Presets()) ids.push_back(p.id);
  return ids;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Every preset opens and shows its heatmaps; cells have the figure's colours

class GuiPreset : public Gui, public ::testing::WithParamInterface<std::string> {};

/// Checks that each heatmap of a screenshot is made of colormap colours (cell values printed
/// on small grids take some pixels), shows several values, and is hatched where masked.
void ExpectHeatmaps(const std::vector<HeatmapStats>& maps, const Scenario& scenario,
                    const std::string& what) {
  const bool dropout = scenario.dropout.p > 0;
  EXPECT_EQ(maps.size(), dropout ? 6u : 5u) << what;
  for (const HeatmapStats& m : maps) {
    const std::string where = what + ", " + m.stage;
    EXPECT_GT(m.pixels, 2000) << where;
    EXPECT_GE(m.colormap_fraction, 0.7) << where;
    if (m.stage != "mask") {
      EXPECT_GE(m.distinct_colours, std::min(m.rows * m.cols, 8)) << where;
    }
    const bool hatched = m.stage == "mask" || m.stage == "logits" || m.stage == "weights";
    if (scenario.mask.kind == MaskKind::kCausal && hatched) {
      // The upper triangle, T(T-1)/2 of T^2 cells.
      EXPECT_GE(m.hatch_fraction, 0.3) << where;
    } else if (scenario.mask.kind == MaskKind::kNone) {
      EXPECT_EQ(m.hatch_fraction, 0.0) << where;
    }
  }
}

TEST_P(GuiPreset, ScreenshotShowsTheHeatmaps) {
  const std::string id = GetParam();
  const std::string shot = Path("shot.png"), layout = Path("layout.json");
  const Result r = RunApp("--preset " + id + " --screenshot " + shot + " --layout " + layout +
                          " --frames 4 --no-autosave");
  ASSERT_EQ(r.status, 0) << r.err;
  const Png png = LoadPng(shot);
  ASSERT_EQ(png.w, 1280) << "not a PNG of the window: " << shot;
  ASSERT_EQ(png.h, 800);
  ExpectHeatmaps(Analyse(png, ReadFile(layout)), LoadPreset(id), id);
  EXPECT_FALSE(fs::exists(Path("config/attention-lab/last-session.json")));  // --no-autosave
}

INSTANTIATE_TEST_SUITE_P(Presets, GuiPreset, ::testing::ValuesIn(PresetIds()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// The screen colours each cell exactly as a figure does: the same lookup table, the same range
// (FigureRange), the same hatch on masked cells.
TEST_F(Gui, CellsHaveTheFigureColours) {
  const std::string shot = Path("shot.png"), layout = Path("layout.json");
  const std::string script = Write("colours.script", "preset karpathy-head\nnumbers off\nwait 3\n");
  const Result r = RunApp("--script " + script + " --screenshot " + shot + " --layout " + layout +
                          " --no-autosave");
  ASSERT_EQ(r.status, 0) << r.err;
  const Png png = LoadPng(shot);
  const nlohmann::json maps = nlohmann::json::parse(ReadFile(layout))["heatmaps"];
  const Scenario scenario = LoadPreset("karpathy-head");
  const Stages stages = RunScenario(scenario);
  int checked = 0;
  for (const nlohmann::json& m : maps) {
    const Stage stage = *ParseStage(m["stage"].get<std::string>());
    const StageView view = ExtractStage(stages, scenario, stage, 0, 0);
    const ValueRange range = FigureRange(view);
    const Colormap& cm = DefaultColormap(view.diverging);
    const double x0 = m["x0"], y0 = m["y0"], x1 = m["x1"], y1 = m["y1"];
    const int rows = m["rows"], cols = m["cols"];
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        const int x = static_cast<int>(x0 + (x1 - x0) * (j + 0.5) / cols);
        const int y = static_cast<int>(y0 + (y1 - y0) * (i + 0.5) / rows);
        const Rgb got = png.At(x, y);
        const std::string where =
            StageName(stage) + std::string(" cell ") + std::to_string(i) + "," + std::to_string(j);
        if (view.masked.size() && view.masked(i, j)) {
          EXPECT_TRUE(got == kMaskedLight || got == kMaskedStripe) << where;
        } else {
          const Rgb want = cm.lut[LutIndex(view.values(i, j), range)];
          EXPECT_TRUE(got == want)
              << where << ": (" << int(got.r) << "," << int(got.g) << "," << int(got.b)
              << ") instead of (" << int(want.r) << "," << int(want.g) << "," << int(want.b) << ")";
        }
        ++checked;
      }
  }
  EXPECT_EQ(checked, 4 * 64 + 8 * 16);  // scores, mask, logits, weights; context 8 x 16
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Scripted: undo/redo, export, save, bad edits, painting, session, stats
// The script's actions go through the same Emit() as the widgets.

TEST_F(Gui, ScriptUndoRedoExportSave) {
  const std::string script = Write("edits.script", R"(# temperature, mask, undo, redo
preset raschka-journey
temperature 2.5
mask causal
undo                       # mask back to none, multiplier stays 2.5
redo                       # causal again
undo                       # none again
drag-temperature 1 4 8     # a slider drag: one undo step however many frames
undo                       # back to 2.5 in one step
expect-ok
export weights )" + Path("weights.png") + R"(
export-all )" + Path("all") + R"(
save )" + Path("after.json") + "\n");
  const Result r = RunApp("--script " + script + " --no-autosave");
  ASSERT_EQ(r.status, 0) << r.err;

  const Scenario s = ParseScenario(ReadFile(Path("after.json")));
  EXPECT_DOUBLE_EQ(s.scaling.multiplier, 2.5);
  EXPECT_EQ(s.mask.kind, MaskKind::kNone);
  EXPECT_TRUE(s.input.tokens ==
              std::vector<std::string>({"Your", "journey", "starts", "with", "one", "step"}));

  // The window's export is a valid PNG, the very bytes the command line writes.
  const Png png = LoadPng(Path("weights.png"));
  ASSERT_GT(png.w, 100) << "not a PNG";
  const Result cli =
      RunApp("export " + Path("after.json") + " --stage weights -o " + Path("cli.png"), false);
  ASSERT_EQ(cli.status, 0) << cli.err;
  EXPECT_EQ(ReadFile(Path("weights.png")), ReadFile(Path("cli.png")));
  // One figure per stage (no dropout: five).
  int files = 0;
  for (const auto& e : fs::directory_iterator(Path("all"))) files += e.path().extension() == ".png";
  EXPECT_EQ(files, 5);
}

TEST_F(Gui, BadEditShowsTheErrorAndKeepsTheLastHeatmaps) {
  const std::string shot = Path("shot.png");
  const std::string script = Write("bad.script", R"(preset raschka-journey
heads 3                    # d_out = 2 is not divisible by 3
expect-error projections.heads
wait 2
)");
  const Result r = RunApp("--script " + script + " --screenshot " + shot + " --layout " +
                          Path("layout.json") + " --no-autosave");
  ASSERT_EQ(r.status, 0) << r.err;
  // The last good heatmaps are still there.
  ExpectHeatmaps(Analyse(LoadPng(shot), ReadFile(Path("layout.json"))),
                 LoadPreset("raschka-journey"), "after a bad edit");

  const std::string fix = Write("fix.script", R"(preset raschka-journey
heads 3
expect-error heads
undo
expect-ok
input-cell 2 1 nan         # a non-finite embedding is refused too
expect-error input.values
undo
expect-ok
save )" + Path("fixed.json") + "\n");
  const Result f = RunApp("--script " + fix + " --no-autosave");
  ASSERT_EQ(f.status, 0) << f.err;
  EXPECT_EQ(ParseScenario(ReadFile(Path("fixed.json"))).projections.heads, 1);
}

TEST_F(Gui, FailingScriptStepExits3) {
  const std::string script = Write("fail.script", "preset raschka-journey\nexpect-error nothing\n");
  const Result r = RunApp("--script " + script + " --no-autosave");
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find("fail.script:2"), std::string::npos) << r.err;
}

// Painting the custom mask with the mouse (the script stands in for it), as a learner would.
TEST_F(Gui, ClickingAHeatmapCellPaintsTheCustomMask) {
  const std::string script = Write("paint.script", R"(preset raschka-journey
mask custom
wait 2
click mask 0 5             # query 0 may no longer see key 5
hover weights 3 1
wait 2
save )" + Path("painted.json") + R"(
undo                       # the click was one step
save )" + Path("unpainted.json") + "\n");
  const Result r = RunApp("--script " + script + " --no-autosave");
  ASSERT_EQ(r.status, 0) << r.err;
  const Scenario painted = ParseScenario(ReadFile(Path("painted.json")));
  ASSERT_EQ(painted.mask.kind, MaskKind::kCustom);
  EXPECT_EQ(painted.mask.allowed(0, 5), 0);
  EXPECT_EQ(painted.mask.allowed.sum(), 35);
  const Scenario unpainted = ParseScenario(ReadFile(Path("unpainted.json")));
  EXPECT_EQ(unpainted.mask.allowed.sum(), 36);
}

// The last session comes back when the app starts without arguments.
TEST_F(Gui, SessionIsSavedAtExitAndRestored) {
  const std::string first = Write("first.script", "temperature 3\nmask causal\n");
  const Result a = RunApp("--preset karpathy-trick --script " + first);
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_TRUE(fs::exists(Path("config/attention-lab/last-session.json")));
  const std::string second = Write("second.script", "save " + Path("restored.json") + "\n");
  const Result b = RunApp("--script " + second + " --no-autosave");
  ASSERT_EQ(b.status, 0) << b.err;
  const Scenario s = ParseScenario(ReadFile(Path("restored.json")));
  EXPECT_DOUBLE_EQ(s.scaling.multiplier, 3.0);
  EXPECT_EQ(s.mask.kind, MaskKind::kCausal);
  EXPECT_EQ(s.input.source, InputSource::kRandn);
  EXPECT_EQ(s.normalization, Normalization::kMean);  // karpathy-trick's
}

TEST_F(Gui, FrameStatsPrintsTheMedianFrameTime) {
  const Result r = RunApp("--preset raschka-journey --frames 12 --frame-stats --no-autosave");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"median_ms\": "), std::string::npos) << r.out;
}

TEST_F(Gui, AFileThatCannotBeOpenedExits2BeforeAnyWindow) {
  const std::string bad = Write("bad.json", R"({"format": "attention-lab/scenario@1"})");
  const Result r = RunApp(bad, false);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("attention-lab: error: " + bad + ": ", 0), 0u) << r.err;
  const Result p = RunApp("--preset no-such-preset", false);
  EXPECT_EQ(p.status, 2);
  EXPECT_NE(p.err.find("no-such-preset"), std::string::npos) << p.err;
}

}  // namespace
}  // namespace attnlab
