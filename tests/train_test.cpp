// train_test.cpp: the training experiment (train.h) against the same loop run by PyTorch
// (tests/golden/train, made by tools/make_train_goldens.py with Debian's torch 1.13).
//
// Tolerance: the generator draws (tables, batches, nn.Linear) are bit for bit PyTorch's and
// step 0's loss is identical, but matrix products sum in another order, so float32 rounding
// differs by about 1e-7 relative and Adam carries it on. Measured (this machine, Release):
// over 100 steps of the 10 well-conditioned goldens the largest relative loss difference is
// 1.5e-6 and the largest weight difference 1e-6 of the weights' largest |W|. An unscaled head
// at d_k = 64 is ill-conditioned: its saturated softmax rows give tiny gradients that Adam
// divides by their own size, and the rounding difference grows about tenfold every 5-10 steps
// from step ~25 (2.5e-6 at step 30, 5e-5 at 40, 1e-1 at 70): those goldens are compared over
// their first 30 steps (make_train_goldens.py's exact_steps). The test allows 2e-4 relative on
// the loss and 1e-3 of the largest |W| on the weights: room for other compilers and
// instruction sets, yet a wrong formula (a bias correction, one step off, another draw order)
// is far outside it.
#include "attnlab/lessons/train.h"

#include <filesystem>
#include <numeric>

#include "attnlab/figures/loss_plot.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/presets.h"
#include "attnlab/python/codegen.h"
#include "test_util.h"

namespace attnlab {
namespace {

constexpr double kLossTolerance = 2e-4;    // relative
constexpr double kWeightTolerance = 1e-3;  // of the largest |W|

std::vector<std::string> GoldenNames() {
  std::vector<std::string> names;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(ATTNLAB_GOLDEN_DIR) + "/train"))
    names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

TrainOptions OptionsOf(const nlohmann::json& o) {
  TrainOptions opt;
  opt.task = *ParseTrainTask(o["task"].get<std::string>());
  opt.steps = o["steps"];
  opt.scale = o["scale"];
  opt.d_k = o["d_k"];
  opt.lr = o["lr"];
  opt.batch = o["batch"];
  opt.data_seed = o["data_seed"];
  return opt;
}

Matrix MatrixOf(const nlohmann::json& rows) {
  Matrix m(rows.size(), rows[0].size());
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < rows[r].size(); ++c) m(r, c) = rows[r][c].get<float>();
  return m;
}

class TrainGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(TrainGolden, LossAndWeightsMatchPyTorch) {
  const nlohmann::json g = test::LoadGolden("train/" + GetParam() + ".json");
  const Scenario s = ParseScenario(g["scenario"].dump());
  TrainOptions options = OptionsOf(g["options"]);
  options.steps = g["exact_steps"];  // 100, or 30 for the ill-conditioned runs (header comment)
  const TrainRun run = TrainAttentionHead(s, options);
  const std::vector<float> want = g["loss"].get<std::vector<float>>();
  ASSERT_EQ(run.loss.size(), static_cast<size_t>(options.steps));
  double worst = 0;
  for (size_t i = 0; i < run.loss.size(); ++i)
    worst = std::max(worst, std::abs(double(run.loss[i]) - want[i]) / std::abs(double(want[i])));
  EXPECT_LT(worst, kLossTolerance) << "largest relative loss difference";
  const char* names[3] = {"W_query", "W_key", "W_value"};
  const char* bias_names[3] = {"b_query", "b_key", "b_value"};
  for (int w = 0; w < 3; ++w) {
    const Matrix expected = MatrixOf(g[names[w]]);
    ASSERT_EQ(run.trained.W[w].rows(), expected.rows());
    ASSERT_EQ(run.trained.W[w].cols(), expected.cols());
    const double diff = (run.trained.W[w] - expected).cwiseAbs().maxCoeff();
    // The ill-conditioned runs (30 exact steps) amplify float32 rounding about tenfold every
    // 5-10 steps: a build with FMA contractions (-DATTNLAB_NATIVE=ON) lands 1.002e-3 away.
    const double tolerance = kWeightTolerance * (options.steps < 100 ? 4 : 1);
    EXPECT_LT(diff, tolerance * expected.cwiseAbs().maxCoeff()) << names[w];
    // b_key's gradient is 0 in exact arithmetic (adding q.b_key to a whole row of scores does not
    // change its softmax), so both programs move it by Adam-normalised rounding noise alone.
    if (!g.contains(bias_names[w]) || w == static_cast<int>(Projection::kKey)) continue;
    const std::vector<float> b = g[bias_names[w]].get<std::vector<float>>();
    ASSERT_EQ(run.trained.b[w].size(), static_cast<Eigen::Index>(b.size()));
    for (size_t j = 0; j < b.size(); ++j)
      EXPECT_NEAR(run.trained.b[w][j], b[j], kWeightTolerance) << bias_names[w] << " " << j;
  }
  // Training must have moved the weights and lowered the loss (a golden that cannot fail).
  EXPECT_LT(want.back(), want.front());
  EXPECT_GT((run.trained.W[0] - run.initial.W[0]).cwiseAbs().maxCoeff(), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Goldens, TrainGolden, ::testing::ValuesIn(GoldenNames()),
                         [](const auto& info) { return test::ParamName(info.param); });

// The lesson, from PyTorch's own numbers: at d_k = 64 the scaled head ends lower on every task.
TEST(Train, GoldensShowScalingHelpsAtLargeDk) {
  for (const char* task : {"previous-token", "copy-first", "associative-recall"}) {
    auto tail = [&](const char* scaling) {
      const nlohmann::json g =
          test::LoadGolden(std::string("train/") + task + "_" + scaling + "_dk64.json");
      const std::vector<float> loss = g["loss"].get<std::vector<float>>();
      return std::accumulate(loss.end() - 20, loss.end(), 0.0) / 20;
    };
    EXPECT_LT(tail("scaled") * 1.5, tail("unscaled")) << task;
  }
}

TEST(Train, InitialHeadIsTheEnginesProjections) {
  Scenario s = LoadPreset("karpathy-head");  // nn.Linear key, query, value after randn input
  const Stages st = RunScenario(s);
  TrainOptions o;
  o.steps = 1;
  const TrainRun run = TrainAttentionHead(s, o);
  for (int w = 0; w < 3; ++w) EXPECT_EQ(run.initial.W[w], st.W[w]) << w;
}

TEST(Train, SnapshotsAndTheSavedScenarioShowTheSameAttention) {
  TrainOptions o;
  o.task = TrainTask::kCopyFirst;
  o.steps = 30;
  o.snapshot_every = 10;
  o.example = 3;
  const TrainRun run = TrainAttentionHead(LoadPreset("karpathy-head"), o);
  ASSERT_EQ(run.snapshots.size(), 4u);  // steps 0, 10, 20 and the trained head (30)
  EXPECT_EQ(run.snapshots[1].step, 10);
  EXPECT_EQ(run.snapshots.back().step, 30);
  const Stages st = RunScenario(TrainedHeadScenario(run));
  const Matrix& last = run.snapshots.back().weights;
  EXPECT_LT((st.weights[0] - last).cwiseAbs().maxCoeff(), 1e-5);
  // Copy-first learnt: token 0 gets more weight than at the start in every row.
  for (int64_t i = 0; i < run.T; ++i)
    EXPECT_GT(last(i, 0), run.snapshots[0].weights(i, 0)) << "row " << i;
  EXPECT_EQ(run.example_tokens.size(), static_cast<size_t>(run.T));
}

TEST(Train, BiasesFoldIntoAnInputColumnOfOnes) {
  Scenario s =
      ParseScenario(test::LoadGolden("train/copy-first_scaled_dk8_bias.json")["scenario"].dump());
  TrainOptions o;
  o.steps = 5;
  const TrainRun run = TrainAttentionHead(s, o);
  const Scenario saved = TrainedHeadScenario(run);
  EXPECT_EQ(saved.input.values[0].cols(), run.d_in + 1);
  const Stages st = RunScenario(saved);
  EXPECT_LT((st.weights[0] - run.snapshots.back().weights).cwiseAbs().maxCoeff(), 1e-5);
}

TEST(Train, ProgressCancels) {
  TrainOptions o;
  o.steps = 50;
  int64_t seen = 0;
  const TrainRun run = TrainAttentionHead(LoadPreset("karpathy-head"), o, [&](int64_t done) {
    seen = done;
    return done < 7;
  });
  EXPECT_EQ(seen, 7);
  EXPECT_EQ(run.loss.size(), 7u);
  EXPECT_TRUE(run.cancelled);
  EXPECT_EQ(run.snapshots.back().step, 7);
}

TEST(Train, RefusesWhatItCannotTrain) {
  Scenario qkv;
  qkv.input.source = InputSource::kQkv;
  qkv.input.length = 4;
  qkv.input.d_k = 2;
  EXPECT_THROW(TrainAttentionHead(qkv, {}), ScenarioError);
  TrainOptions o;
  o.steps = 1;
  o.d_k = 7;  // raschka-journey's W are torch.rand, so d_k can change; identity's cannot
  EXPECT_NO_THROW(TrainAttentionHead(LoadPreset("raschka-journey"), o));
  Scenario m = LoadPreset("raschka-journey");
  m.projections.init = ProjectionInit::kIdentity;
  EXPECT_THROW(TrainAttentionHead(m, o), ScenarioError);
  o.d_k = 0;
  o.steps = 0;
  EXPECT_THROW(TrainAttentionHead(m, o), std::invalid_argument);
}

TEST(Train, TasksByName) {
  ASSERT_EQ(TrainTasks().size(), 3u);
  EXPECT_EQ(ParseTrainTask("associative-recall"), TrainTask::kAssociativeRecall);
  EXPECT_EQ(ParseTrainTask("copy"), std::nullopt);
  EXPECT_STREQ(Name(TrainTask::kPreviousToken), "previous-token");
}

TEST(Train, CurvesCsv) {
  TrainRun a, b;
  a.loss = {2.5f, 1.25f};
  b.loss = {3.0f};
  EXPECT_EQ(LossCurvesCsv({&a, &b}, {"scaled", "unscaled"}),
            "step,scaled,unscaled\n0,2.5,3\n1,1.25,\n");
}

TEST(Train, CodeLeavesLossesAndDrawsTheHeadFromTheSeed) {
  TrainOptions o;
  o.task = TrainTask::kAssociativeRecall;
  o.scale = false;
  const std::string py = GenerateTrainingCode(LoadPreset("karpathy-head"), o);
  EXPECT_NE(py.find("torch.manual_seed(1337)\n_ = torch.randn(4, 8, 32)"), std::string::npos) << py;
  EXPECT_NE(py.find("W_key = nn.Linear(d_in, d_k, bias=False)\nW_query = "), std::string::npos);
  EXPECT_NE(py.find("scale = False"), std::string::npos);
  EXPECT_NE(py.find("losses.append(loss.item())"), std::string::npos);
  EXPECT_NE(py.find("argsort(dim=1, stable=True)"), std::string::npos);
}

}  // namespace
}  // namespace attnlab
