// f64_test.cpp: "dtype": "float64" against real PyTorch (torch.float64) and NumPy (float64):
// the pipeline (golden/f64/*.json, made by tools/make_qkv_goldens.py), NumPy's array repr and
// torch's float64 print (golden/print/float64_cases.json, tools/make_print_goldens.py), and the
// scenario field, dump, show and code; the AVX2 and generic kernels' float64 draws
// (golden/f64_kernels.json).
//
// Tolerances: the draws (torch's float64 randn/rand/nn.Linear, NumPy's randn/rand) and the
// numbers written in the scenario are compared bit for bit; the other stages to float64
// summation order (1e-13 + 1e-12 |e|); NumPy's var of drawn q and k bit for bit (pairwise sums).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "attnlab/figures/figure.h"
#include "attnlab/figures/stage_view.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/presets.h"
#include "attnlab/model/scenario.h"
#include "attnlab/model/stats.h"
#include "attnlab/python/codegen.h"
#include "attnlab/python/numpy_print.h"
#include "attnlab/python/stages_json.h"
#include "attnlab/python/torch_print.h"
#include "test_util.h"

namespace attnlab {
namespace {

using nlohmann::json;

double JsonD(const json& j) {
  if (j.is_string()) return j == "nan" ? NAN : j == "inf" ? INFINITY : -INFINITY;
  return j.get<double>();
}

MatrixD JsonMatrixD(const json& j) {
  MatrixD m(j.size(), j[0].size());
  for (size_t r = 0; r < j.size(); ++r)
    for (size_t c = 0; c < j[r].size(); ++c) m(r, c) = JsonD(j[r][c]);
  return m;
}

// A golden stage as B matrices (per token) or B*H (per head).
MatrixStackD GoldenStackD(const json& j, bool per_head) {
  MatrixStackD out;
  for (const json& b : j) {
    if (!per_head) {
      out.push_back(JsonMatrixD(b));
      continue;
    }
    for (const json& h : b) out.push_back(JsonMatrixD(h));
  }
  return out;
}

// Same non-finite cells, the finite ones within atol + rtol |e| (0, 0: bit for bit).
::testing::AssertionResult StackNear(const std::string& what, const MatrixStackD& got,
                                     const MatrixStackD& want, double atol, double rtol) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure()
           << what << ": " << got.size() << " matrices, expected " << want.size();
  for (size_t m = 0; m < got.size(); ++m) {
    if (got[m].rows() != want[m].rows() || got[m].cols() != want[m].cols())
      return ::testing::AssertionFailure() << what << "[" << m << "]: shape differs";
    for (Eigen::Index i = 0; i < got[m].size(); ++i) {
      const double g = got[m].data()[i], w = want[m].data()[i];
      const bool ok = std::isnan(w)   ? std::isnan(g)
                      : std::isinf(w) ? g == w
                                      : std::fabs(g - w) <= atol + rtol * std::fabs(w);
      if (!ok)
        return ::testing::AssertionFailure()
               << what << "[" << m << "] element " << i << ": " << g << ", expected " << w;
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<std::string> F64Goldens() {
  std::vector<std::string> names;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(ATTNLAB_GOLDEN_DIR) + "/f64"))
    names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

class F64Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(F64Golden, EveryStageMatchesPyTorchAndNumpyInFloat64) {
  const json golden = test::LoadGolden("f64/" + GetParam() + ".json");
  const json& ex = golden["expected"];
  const Scenario s = ParseScenario(golden["scenario"].dump());
  ASSERT_EQ(s.dtype, Dtype::kFloat64);
  const Stages st = RunScenario(s);
  ASSERT_TRUE(st.f64);
  const StagesF64& f = *st.f64;
  const bool drawn_qkv = s.input.source == InputSource::kQkv;
  const double exact = 0, atol = 1e-13, rtol = 1e-12;
  const double qkv_tol = drawn_qkv ? exact : rtol;
  EXPECT_TRUE(StackNear("Q", f.Q, GoldenStackD(ex["Q"], false), drawn_qkv ? 0 : atol, qkv_tol));
  EXPECT_TRUE(StackNear("K", f.K, GoldenStackD(ex["K"], false), drawn_qkv ? 0 : atol, qkv_tol));
  EXPECT_TRUE(StackNear("V", f.V, GoldenStackD(ex["V"], false), drawn_qkv ? 0 : atol, qkv_tol));
  if (ex.contains("X")) {
    EXPECT_TRUE(StackNear("X", f.X, GoldenStackD(ex["X"], false), 0, 0));
    const char* names[3] = {"W_query", "W_key", "W_value"};
    for (int w = 0; w < 3; ++w)
      EXPECT_TRUE(StackNear(names[w], {f.W[w]}, {JsonMatrixD(ex[names[w]])}, 0, 0));
  }
  // RoPE's rotated Q and K (oracle-rope-*: tools/make_goldens.py's float64 variants).
  if (ex.contains("Q_rot")) {
    EXPECT_TRUE(StackNear("Q_rot", f.Q_rot, GoldenStackD(ex["Q_rot"], false), atol, rtol));
    EXPECT_TRUE(StackNear("K_rot", f.K_rot, GoldenStackD(ex["K_rot"], false), atol, rtol));
  } else {
    EXPECT_TRUE(f.Q_rot.empty());
  }
  EXPECT_TRUE(StackNear("scores", f.scores, GoldenStackD(ex["scores"], true), atol, rtol));
  EXPECT_TRUE(StackNear("logits", f.logits, GoldenStackD(ex["logits"], true), atol, rtol));
  EXPECT_TRUE(StackNear("weights", f.weights, GoldenStackD(ex["weights"], true), atol, rtol));
  if (ex.contains("weights_dropped")) {
    EXPECT_TRUE(StackNear("weights_dropped", f.weights_dropped,
                          GoldenStackD(ex["weights_dropped"], true), atol, rtol));
  }
  // gpt-oss's sink: what it took of each row (B x H x T x 1).
  if (ex.contains("sink")) {
    EXPECT_TRUE(StackNear("sink", f.sink, GoldenStackD(ex["sink"], true), atol, rtol));
  } else {
    EXPECT_TRUE(f.sink.empty());
  }
  EXPECT_TRUE(StackNear("context", f.context, GoldenStackD(ex["context"], false), atol, rtol));
  // The float fields are the double stages rounded: what the window draws.
  EXPECT_EQ(st.weights[0](0, 0), static_cast<float>(f.weights[0](0, 0)));
  EXPECT_EQ(st.Q[0](0, 0), static_cast<float>(f.Q[0](0, 0)));

  const VarianceKind kind = VarianceKindOf(s.input.generator);
  const StageVariances v = WholeVariances(st, kind);
  const json& want = ex["stats"];
  const std::pair<const char*, double> got[] = {{"var_q", v.var_q},
                                                {"var_k", v.var_k},
                                                {"var_scores", v.var_scores},
                                                {"var_logits", v.var_logits},
                                                {"var_weights", v.var_weights}};
  for (const auto& [key, value] : got) {
    const double w = JsonD(want[key]);
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(value)) << key;
    } else if (kind == VarianceKind::kNumpy && drawn_qkv &&
               (std::string(key) == "var_q" || std::string(key) == "var_k")) {
      EXPECT_EQ(value, w) << key << ": NumPy's pairwise var of the exact draws";
    } else {
      EXPECT_NEAR(value, w, 1e-11 * std::fabs(w) + 1e-15) << key;  // mean rows: var ~ 0
    }
  }
  // var_K: K.var() in float64, NumPy's ddof = 0 for numpy scenarios (make_qkv_goldens.py).
  const double var_K = JsonD(ex["var_K"]);
  EXPECT_NEAR(st.var_K, var_K, 1e-12 * std::fabs(var_K)) << "var_K";
  EXPECT_EQ(st.var_K, v.var_k) << "var_K is stats.var_k: one rule";
}

INSTANTIATE_TEST_SUITE_P(Goldens, F64Golden, ::testing::ValuesIn(F64Goldens()),
                         [](const auto& info) { return test::ParamName(info.param); });

// docs/generator.md's claims on float64 draws, as tools/make_qkv_goldens.py checked them with
// PyTorch (tests/golden/f64_kernels.json, seed 0): nn.Linear(64, 16) weights differ between
// the AVX2 and the generic kernels by at most one unit in the last place of the bound; rand
// and randn do not. The engine reproduces each kernel's values bit for bit.
TEST(F64Kernels, LinearWeightsDifferInTheBoundsLastPlaceAndTheEngineFollowsEach) {
  const json g = test::LoadGolden("f64_kernels.json");
  const auto vec = [](const json& j) { return j.get<std::vector<double>>(); };
  const std::pair<const char*, NormalKernel> kernels[] = {{"native", NormalKernel::kAvx2},
                                                          {"generic", NormalKernel::kScalar}};
  for (const auto& [name, kernel] : kernels) {
    const json& want = g[name];
    TorchGenerator gen(0, kernel);
    const LinearInitOf<double> lin = gen.LinearOf<double>(64, 16, true);
    EXPECT_EQ(lin.weight, vec(want["linear_weight"])) << name;
    EXPECT_EQ(lin.bias, vec(want["linear_bias"])) << name;
    gen.ManualSeed(0);
    EXPECT_EQ(gen.UniformOf<double>(40), vec(want["rand"])) << name;
    gen.ManualSeed(0);
    EXPECT_EQ(gen.NormalOf<double>(40), vec(want["randn"])) << name;
  }
  const std::vector<double> a = vec(g["native"]["linear_weight"]),
                            b = vec(g["generic"]["linear_weight"]);
  const double bound = std::sqrt(3.0) * (std::sqrt(2.0 / 6.0) / std::sqrt(64.0));
  const double ulp = std::nextafter(bound, 1.0) - bound;
  int differ = 0;
  double largest = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    differ += a[i] != b[i];
    largest = std::max(largest, std::fabs(a[i] - b[i]));
  }
  EXPECT_EQ(differ, g["claims"]["linear_weights_differing"].get<int>());
  EXPECT_GT(differ, 0);
  EXPECT_EQ(largest, ulp) << "largest difference " << largest / ulp << " ulps of the bound";
  EXPECT_EQ(g["native"]["randn"], g["generic"]["randn"]);
  EXPECT_EQ(g["native"]["rand"], g["generic"]["rand"]);
}

TEST(F64Goldens, CoverBothGeneratorsDrawsDropoutAndLinear) {
  const std::vector<std::string> names = F64Goldens();
  EXPECT_GE(names.size(), 10u);
  for (const char* n :
       {"numpy-odd-counts", "torch-qkv-small", "torch-randn-tail", "torch-linear-dropout",
        "torch-qkv-given", "numpy-dv-heads", "torch-qkv-dv-heads", "torch-qkv-given-dv"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  // Issue 26's settings in float64 (tools/make_goldens.py FLOAT64_VARIANTS): RoPE, ALiBi,
  // soft-capping, sinks, grouped K/V heads, a sliding window.
  for (const char* n : {"oracle-rope-split-halves-heads2-causal",
                        "oracle-rope-interleaved-sign-neg-dropout", "oracle-alibi-heads4-causal",
                        "oracle-softcap-c2-causal-heads2", "oracle-sink-per-head-empty-row",
                        "oracle-gqa-linear-h4-kv2-causal", "oracle-mask-sliding-window-w3-heads2"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

// The float64 dump of a NumPy scenario with d_v = 6 != d_k = 8 and 2 heads: V drawn bit for
// bit (d_v wide), the context (4 x 6) as NumPy computes it (golden numpy-dv-heads).
TEST(F64Goldens, DumpOfOwnValueWidthEqualsNumpy) {
  const json golden = test::LoadGolden("f64/numpy-dv-heads.json");
  const json& ex = golden["expected"];
  const Stages st = RunScenario(ParseScenario(golden["scenario"].dump()));
  const json dump = StagesToJson(st);
  EXPECT_EQ(dump["dtype"], "float64");
  EXPECT_EQ(dump["shape"]["d_v"], 6);
  EXPECT_TRUE(
      StackNear("dump V", GoldenStackD(dump["V"], false), GoldenStackD(ex["V"], false), 0, 0));
  const MatrixStackD context = GoldenStackD(dump["context"], false);
  ASSERT_EQ(context[0].cols(), 6);
  EXPECT_TRUE(StackNear("dump context", context, GoldenStackD(ex["context"], false), 1e-13, 1e-12));
}

TEST(NumpyArrayRepr, MatchesNumpyAndTorchFloat64Print) {
  const json cases = test::LoadGolden("print/float64_cases.json");
  ASSERT_GE(cases.size(), 25u);
  for (const auto& c : cases) {
    std::vector<double> values;
    for (uint64_t b : c["bits"].get<std::vector<uint64_t>>()) {
      double d;
      std::memcpy(&d, &b, sizeof d);
      values.push_back(d);
    }
    const auto shape = c["shape"].get<std::vector<int64_t>>();
    EXPECT_EQ(TorchTensorStringF64(values, shape), c["torch"].get<std::string>()) << c["name"];
    if (!c["numpy"].is_null()) {
      EXPECT_EQ(NumpyArrayRepr(values, shape), c["numpy"].get<std::string>()) << c["name"];
    }
  }
  EXPECT_THROW(NumpyArrayRepr(std::vector<double>{1, 2}, std::vector<int64_t>{3}),
               std::invalid_argument);
}

// np.float64 scalars (show's q.var() of numpy scenarios): Python's repr, both notations.
TEST(NumpyFloat64Repr, MatchesNumpyScalarRepr) {
  const json cases = test::LoadGolden("print/float64_scalars.json");
  ASSERT_GE(cases.size(), 30u);
  for (const auto& c : cases) {
    const uint64_t bits = c["bits"].get<uint64_t>();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    EXPECT_EQ(NumpyFloat64Repr(d), c["repr"].get<std::string>());
  }
}

// float32 ndarrays (numpy scenarios in float32): NumPy 1.24's repr, ", dtype=float32)" and all.
TEST(NumpyArrayRepr, MatchesNumpyFloat32Repr) {
  const json cases = test::LoadGolden("print/float32_numpy_cases.json");
  ASSERT_GE(cases.size(), 30u);
  int wrapped = 0;
  for (const auto& c : cases) {
    std::vector<double> values;
    for (uint32_t b : c["bits"].get<std::vector<uint32_t>>()) {
      float f;
      std::memcpy(&f, &b, sizeof f);
      values.push_back(f);
    }
    const std::string want = c["numpy"].get<std::string>();
    wrapped += want.find("\n      dtype=float32)") != std::string::npos;
    EXPECT_EQ(NumpyArrayRepr(values, c["shape"].get<std::vector<int64_t>>(), true), want)
        << c["name"];
  }
  EXPECT_GE(wrapped, 1);  // the dtype on a line of its own is covered
}

// str(ndarray), what print(array) writes (NumPy 1.24, tools/make_match_goldens.py): float64
// and float32, wrapped rows, 3-D and 4-D, scientific, -inf masks and a summarised print.
TEST(NumpyArrayStr, MatchesNumpyPrint) {
  const json cases = test::LoadGolden("print/numpy_str_cases.json");
  ASSERT_GE(cases.size(), 20u);
  int wrapped = 0;
  for (const auto& c : cases) {
    std::vector<double> values;
    for (uint64_t b : c["bits"].get<std::vector<uint64_t>>()) {
      double d;
      std::memcpy(&d, &b, sizeof d);
      values.push_back(d);
    }
    const std::string want = c["str"];
    wrapped += want.find("\n  ") != std::string::npos;
    const ElementAt at = [&](int64_t i) { return values[static_cast<size_t>(i)]; };
    EXPECT_EQ(NumpyArrayStr(at, c["shape"].get<std::vector<int64_t>>(), c["float32"]), want)
        << c["name"];
  }
  EXPECT_GE(wrapped, 1);  // a row wrapped onto a second line is covered
}

TEST(Dtype, ParsedWrittenAndRefused) {
  Scenario s = LoadPreset("raschka-journey");
  EXPECT_EQ(s.dtype, Dtype::kFloat32);
  EXPECT_EQ(WriteScenario(s).find("dtype"), std::string::npos);  // the default is not written
  s.dtype = Dtype::kFloat64;
  const std::string text = WriteScenario(s);
  EXPECT_NE(text.find("\"dtype\": \"float64\""), std::string::npos);
  EXPECT_TRUE(ParseScenario(text) == s);
  std::string bad = text;
  bad.replace(bad.find("float64"), 7, "float8e4");
  try {
    ParseScenario(bad);
    ADD_FAILURE() << "float8e4 accepted";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.field(), "dtype");
  }
}

// Switching dtype alone reruns the engine (not the early return of an unchanged scenario).
// Identity projections: nothing is drawn (torch.rand draws other numbers in float64).
TEST(Dtype, EngineSwitchesBothWays) {
  Scenario s = LoadPreset("raschka-journey");
  s.projections.init = ProjectionInit::kIdentity;
  Engine e;
  const float w32 = e.Run(s).weights[0](1, 0);
  EXPECT_FALSE(e.stages().f64);
  s.dtype = Dtype::kFloat64;
  const Stages& st = e.Run(s);
  ASSERT_TRUE(st.f64);
  EXPECT_EQ(st.weights[0](1, 0), static_cast<float>(st.f64->weights[0](1, 0)));
  EXPECT_NEAR(st.f64->weights[0](1, 0), w32, 1e-6);
  s.dtype = Dtype::kFloat32;
  EXPECT_FALSE(e.Run(s).f64);
  EXPECT_EQ(e.stages().weights[0](1, 0), w32);  // the float32 run again, bit for bit
}

// The NumPy notebook (after the preset's seed 0) in float64: dump, show and code say so.
TEST(Dtype, NumpyMaskedDumpShowAndCodeAreFloat64) {
  const Scenario s = LoadPreset("numpy-masked");
  ASSERT_EQ(s.dtype, Dtype::kFloat64);
  const Stages st = RunScenario(s);
  const json dump = StagesToJson(st);
  EXPECT_EQ(dump["dtype"], "float64");
  const json nb = test::LoadGolden("notebooks/numpy-masked.json")["cells"];
  EXPECT_EQ(dump["Q"][0][0][3].get<double>(), nb["q"][0][3].get<double>());  // all 17 digits
  EXPECT_EQ(dump["stats"]["var_q"].get<double>(), nb["q.var()"].get<double>());
  EXPECT_EQ(dump["stats"]["var_k"].get<double>(), nb["k.var()"].get<double>());
  EXPECT_NEAR(dump["stats"]["var_scores"].get<double>(),
              nb["np.matmul(q, k.T).var()"].get<double>(), 1e-13);
  const auto q = PrintStage(st, "Q");
  ASSERT_TRUE(q);
  EXPECT_EQ(
      q->text.rfind("array([[ 1.76405235,  0.40015721,  0.97873798,  2.2408932 ,  1.86755799,", 0),
      0u);
  const auto mask = PrintStage(st, "mask");
  EXPECT_EQ(mask->text,
            "array([[  0., -inf, -inf, -inf],\n       [  0.,   0., -inf, -inf],\n"
            "       [  0.,   0.,   0., -inf],\n       [  0.,   0.,   0.,   0.]])");
  EXPECT_NE(GeneratePyTorchCode(s).find("in float64 as the app computes it"), std::string::npos);
}

TEST(Dtype, TorchFloat64ShowAndCode) {
  Scenario s = LoadPreset("karpathy-head");
  s.dtype = Dtype::kFloat64;
  const Stages st = RunScenario(s);
  const auto w = PrintStage(st, "weights");
  ASSERT_TRUE(w);
  EXPECT_NE(w->text.find("dtype=torch.float64)"), std::string::npos);
  const std::string code = GeneratePyTorchCode(s);
  EXPECT_NE(code.find("dtype=torch.float64"), std::string::npos);
  EXPECT_EQ(StagesToJson(st)["dtype"], "float64");
  s.dtype = Dtype::kFloat32;
  EXPECT_EQ(GeneratePyTorchCode(s).find("float64"), std::string::npos);
  EXPECT_EQ(StagesToJson(RunScenario(s))["dtype"], "float32");
}

// Figures and maps name float64 in their subtitle (float32 ones say nothing of it); a qkv
// pipeline figure has no X panel.
TEST(Dtype, SubtitlesNameFloat64AndQkvPipelinesHaveNoX) {
  Scenario s = LoadPreset("numpy-masked");
  ASSERT_EQ(s.dtype, Dtype::kFloat64);
  Stages st = RunScenario(s);
  const std::string sub = ExtractStage(st, s, Stage::kWeights, 0, 0).subtitle;
  EXPECT_EQ(sub.substr(sub.size() - 9), ", float64") << sub;
  EXPECT_EQ(ExtractStage(st, s, Stage::kMask, 0, 0).subtitle.find("float64"), std::string::npos);
  EXPECT_EQ(PipelineStages(s).front(), Stage::kQ);
  s.dtype = Dtype::kFloat32;
  st = RunScenario(s);
  for (Stage stage : PipelineStages(s))
    EXPECT_EQ(ExtractStage(st, s, stage, 0, 0).subtitle.find("float"), std::string::npos);
}

// ---- One engine in two number types: float32 and float64 runs agree --------------------------
//
// What can agree: PyTorch and NumPy draw different numbers for float32 and float64 tensors
// (24- against 53-bit uniforms, other normal kernels), so the float32 and float64 runs of a
// scenario that draws have different inputs and their stages are not comparable. So every
// golden scenario's float64 run gives its Q, K and V rounded to float32, and these become the
// given input of a qkv scenario with the same generator, heads, scaling, mask, normalization
// and dropout (no out_proj: its weights are drawn). That scenario draws nothing before the
// dropout, whose mask comes from the same 53-bit uniforms in both types from the same state,
// so its float32 and float64 runs see the same numbers (float64: each float's shortest text,
// within half a float32 ulp) and must agree to float32 rounding, eps = 2^-23:
//   scores, logits: (dh + 4) eps |q_i| |k_j| (times the logit scale) + eps |e|
//   weights (softmax, naive, mean): 2 x the row's largest logit tolerance + 8 eps (the
//     softmax's derivative is at most 2 in the max norm)
//   weights_dropped: the weights' tolerance times 1 / (1 - p) + eps |e|
//   context: sum_j tol_w(i, j) |v_j| + (T + 4) eps sum_j |w_ij| |v_j|
// Skipped, and counted: the "sum" normalization's weights and context (z / sum z has no bounded
// condition number: a row summing near 0 magnifies any rounding), and a scenario whose float32
// run has a non-finite logit or weight where the float64 run is finite (the overflow lessons:
// float32 overflows at 3.4e38 and exp at 88.7), and one whose float64 Q, K or V is not finite
// (a given input must be finite). A broken rule in either type fails here.
struct AgreementCounts {
  int scenarios = 0, compared = 0, skipped_sum = 0, skipped_overflow = 0, skipped_input = 0;
};

// Every cell: same non-finiteness (and sign of an inf), finite cells within tol(m, i, j).
template <typename Tol>
::testing::AssertionResult Agree(const std::string& what, const MatrixStack& got,
                                 const MatrixStackD& want, const Tol& tol) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << what << ": sizes";
  for (size_t m = 0; m < got.size(); ++m)
    for (Eigen::Index i = 0; i < want[m].rows(); ++i)
      for (Eigen::Index j = 0; j < want[m].cols(); ++j) {
        const double g = got[m](i, j), e = want[m](i, j);
        const bool same_kind = std::isnan(g) == std::isnan(e) && std::isinf(g) == std::isinf(e);
        if (!same_kind ||
            (std::isfinite(e) ? std::fabs(g - e) > tol(m, i, j) : std::isinf(e) && g != e))
          return ::testing::AssertionFailure()
                 << what << "[" << m << "](" << i << ", " << j << "): float32 " << g << ", float64 "
                 << e << ", tolerance " << tol(m, i, j);
      }
  return ::testing::AssertionSuccess();
}

// The stages of `s`'s float64 run's Q, K, V as a given qkv scenario in float32 and float64.
void CheckAgreement(const std::string& name, const Scenario& s, AgreementCounts& n) {
  Scenario s64 = s;
  s64.dtype = Dtype::kFloat64;
  s64.scaling.softmax_dtype = SoftmaxDtype::kSame;  // the upcast softmax is low precision's
  const Stages base = RunScenario(s64);
  ++n.scenarios;
  const auto finite = [](const MatrixStack& st) {
    return std::all_of(st.begin(), st.end(), [](const Matrix& m) { return m.allFinite(); });
  };
  if (!finite(base.Q) || !finite(base.K) || !finite(base.V)) {  // a given input is finite
    ++n.skipped_input;
    return;
  }
  Scenario q;
  q.title = s.title;
  q.input.source = InputSource::kQkv;
  q.input.generator = s.input.generator;
  q.input.Q = base.Q, q.input.K = base.K, q.input.V = base.V;
  if (GroupsKv(base.shape)) {     // qkv input has no K/V groups: each K/V head repeated per query
    const Shape& g = base.shape;  // head that reads it, as repeat_interleave does
    for (int64_t bb = 0; bb < g.B; ++bb) {
      Matrix k(g.T, g.d_out), v(g.T, g.d_v);
      for (int64_t h = 0; h < g.H; ++h) {
        k.middleCols(h * g.dh, g.dh) = base.K[bb].middleCols(g.KvHead(h) * g.dh, g.dh);
        v.middleCols(h * g.dh_v, g.dh_v) = base.V[bb].middleCols(g.KvHead(h) * g.dh_v, g.dh_v);
      }
      q.input.K[bb] = k, q.input.V[bb] = v;
    }
  }
  q.projections.heads = base.shape.H;
  q.scaling = s.scaling, q.mask = s.mask, q.normalization = s.normalization;
  q.scaling.softmax_dtype = SoftmaxDtype::kSame;  // q is float32
  // finfo.min is each dtype's own most negative number: -1e9, finite in both, stands for it.
  if (q.mask.fill == MaskFill::kFinfoMin) q.mask.fill = MaskFill::kMinus1e9;
  q.dropout = s.dropout;
  const Stages a = RunScenario(q);
  q.dtype = Dtype::kFloat64;
  const Stages b = RunScenario(q);
  const StagesF64& e = *b.f64;
  const Shape& sh = a.shape;
  const double eps = 1.1920929e-7;
  const double scale = s.scaling.multiplier / (s.scaling.sqrt_dk ? std::sqrt(double(sh.dh)) : 1);
  const auto qk = [&](size_t m, Eigen::Index i, Eigen::Index j) {
    const int64_t bb = int64_t(m) / sh.H, h = int64_t(m) % sh.H;
    return e.Q[bb].row(i).segment(h * sh.dh, sh.dh).norm() *
           e.K[bb].row(j).segment(h * sh.dh, sh.dh).norm() * (sh.dh + 4) * eps;
  };
  // non-finite where float64 is finite: float32's overflow, the lesson of the scenario
  const auto overflows = [](const MatrixStack& f, const MatrixStackD& d) {
    for (size_t m = 0; m < f.size(); ++m)
      for (Eigen::Index k = 0; k < f[m].size(); ++k)
        if (!std::isfinite(f[m].data()[k]) && std::isfinite(d[m].data()[k])) return true;
    return false;
  };
  if (overflows(a.scores, e.scores) || overflows(a.logits, e.logits) ||
      overflows(a.weights, e.weights)) {
    ++n.skipped_overflow;
    return;
  }
  EXPECT_TRUE(Agree(name + " scores", a.scores, e.scores, [&](size_t m, auto i, auto j) {
    return qk(m, i, j) + eps * std::fabs(e.scores[m](i, j));
  }));
  const auto tol_logit = [&](size_t m, Eigen::Index i, Eigen::Index j) {
    return qk(m, i, j) * std::fabs(scale) + eps * std::fabs(e.logits[m](i, j));
  };
  EXPECT_TRUE(Agree(name + " logits", a.logits, e.logits, tol_logit));
  if (s.normalization == Normalization::kSum) {
    ++n.skipped_sum;
    return;
  }
  const auto tol_w = [&](size_t m, Eigen::Index i, Eigen::Index) {
    double row = 0;
    for (Eigen::Index j = 0; j < sh.T; ++j)
      if (a.mask(i, j)) row = std::max(row, tol_logit(m, i, j));
    return 2 * row + 8 * eps;
  };
  EXPECT_TRUE(Agree(name + " weights", a.weights, e.weights, tol_w));
  const double keep = 1 / (1 - s.dropout.p);
  EXPECT_TRUE(Agree(name + " weights_dropped", a.weights_dropped, e.weights_dropped,
                    [&](size_t m, auto i, auto j) {
                      return tol_w(m, i, j) * keep + eps * std::fabs(e.weights_dropped[m](i, j));
                    }));
  const MatrixStackD& used = e.weights_dropped.empty() ? e.weights : e.weights_dropped;
  EXPECT_TRUE(Agree(name + " context", a.context, e.context, [&](size_t bb, auto i, auto c) {
    const int64_t h = c / sh.dh_v;
    const size_t m = bb * sh.H + h;
    double t = 0;
    for (Eigen::Index j = 0; j < sh.T; ++j) {
      const double v = std::fabs(e.V[bb](j, c));
      t += tol_w(m, i, j) * (e.weights_dropped.empty() ? 1 : keep) * v +
           (sh.T + 4) * eps * std::fabs(used[m](i, j)) * v;
    }
    return t;
  }));
  ++n.compared;
}

TEST(OneEngine, Float32AndFloat64AgreeOnEveryGoldenScenario) {
  AgreementCounts n;
  for (const std::string dir : {"scenarios", "f64", "qkv"})
    for (const std::string& name : test::GoldenNames(dir)) {
      const json g = test::LoadGolden(dir + "/" + name + ".json");
      CheckAgreement(dir + "/" + name, ParseScenario(g["scenario"].dump()), n);
    }
  // Most goldens are compared to the end (62 of 92 today); the skips are the overflow and
  // underflow lessons, "sum" and the non-finite inputs, which the goldens deliberately cover.
  EXPECT_GT(n.scenarios, 80);
  EXPECT_GE(n.compared, n.scenarios * 3 / 5)
      << n.skipped_sum << " sum, " << n.skipped_overflow << " overflow, " << n.skipped_input
      << " non-finite input skipped";
  std::printf(
      "[agreement] %d scenarios: %d compared to the context, %d \"sum\" (weights "
      "skipped), %d float32 overflow, %d non-finite Q/K/V (skipped)\n",
      n.scenarios, n.compared, n.skipped_sum, n.skipped_overflow, n.skipped_input);
}

// A temperature drag on a float64 scenario recomputes only the logits onward, in double, and
// gives what a fresh run gives, bit for bit; stages copied before the drag keep their values.
TEST(OneEngine, Float64RecomputesIncrementally) {
  Scenario s = ParseScenario(test::LoadGolden("f64/torch-linear-dropout.json")["scenario"].dump());
  ASSERT_EQ(s.dtype, Dtype::kFloat64);
  Engine engine;
  const Stages before = engine.Run(s);
  const RecomputeCounts c0 = engine.counts();
  EXPECT_EQ(c0.input, 1);
  s.scaling.multiplier *= 3.0;
  const Stages& after = engine.Run(s);
  const RecomputeCounts& c = engine.counts();
  EXPECT_EQ(c.input, c0.input);
  EXPECT_EQ(c.projections, c0.projections);
  EXPECT_EQ(c.scores, c0.scores);
  EXPECT_EQ(c.logits, c0.logits + 1);
  EXPECT_EQ(c.weights, c0.weights + 1);
  EXPECT_EQ(c.context, c0.context + 1);
  const Stages fresh = RunScenario(s);
  ASSERT_TRUE(after.f64 && fresh.f64);
  EXPECT_TRUE(StackNear("logits", after.f64->logits, fresh.f64->logits, 0, 0));
  EXPECT_TRUE(StackNear("weights", after.f64->weights, fresh.f64->weights, 0, 0));
  EXPECT_TRUE(StackNear("dropped", after.f64->weights_dropped, fresh.f64->weights_dropped, 0, 0));
  EXPECT_TRUE(StackNear("context", after.f64->context, fresh.f64->context, 0, 0));
  for (size_t m = 0; m < fresh.weights.size(); ++m)
    EXPECT_EQ(after.weights[m], fresh.weights[m]);         // the float fields: the doubles rounded
  EXPECT_NE(before.f64->logits[0], after.f64->logits[0]);  // the copy kept its own values
  EXPECT_EQ(before.f64->logits[0],
            RunScenario(
                ParseScenario(test::LoadGolden("f64/torch-linear-dropout.json")["scenario"].dump()))
                .f64->logits[0]);
}

}  // namespace
}  // namespace attnlab
