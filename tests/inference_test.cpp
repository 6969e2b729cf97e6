// inference_test.cpp: the KV-cache decode and the online softmax (inference.h) against the
// same loops written out in PyTorch (golden/decode/*.json, made by tools/make_decode_goldens.py
// with Debian's PyTorch), and against the full computation.
//
// Tolerance. Both loops compute the full computation's numbers in another summation order:
// q.k left to right over dh instead of a BLAS/Eigen product, weights.V over the kept keys, and
// (online softmax) the row's sum of exps and its output in blocks, rescaled by exp(m_old -
// m_new) each time the maximum grows. float32 rounding then differs in the last bits:
// |got - want| <= 2e-6 + 1e-5 |want| for float32 (a few ulps of values of order 1; measured
// against PyTorch's loops: contexts 3.2e-7, weights 1.5e-7, an online-softmax l of about 8
// 1.2e-6 = 2 ulps; against the full computation 1.8e-7), 1e-12 + 1e-12 |want| for float64. m (a
// maximum of logits) and the cache's bookkeeping (t, cache_len, evicted, skipped tiles) are
// compared exactly.
//
// float64. The f64-* goldens run the loops with torch's default dtype float64 (the oracle's
// rule for a float64 scenario): the engine's loops equal them to 1e-12 + 1e-12 |want| (summation
// order in the last bit or two, 8.9e-16 measured earlier on raschka-3.6-mha, karpathy-head and
// flash-journey); a difference near 1e-8 would mean one side ran in float32 (a literal such as
// 0.43 rounded to float32 moves by about 1e-8), not the loop.
//
// bfloat16 / float16 (the lowp-* goldens; tools/torch_oracle.py Precision): PyTorch's loops
// store the same float32 values as ours, so the numbers agree to one ulp of the dtype (a float32
// sum in another order may cross a rounding boundary), rtol 2^-7 / 2^-10; the decode and the
// tiles against the full computation within AgreementTolerance (inference.h).
#include "attnlab/lessons/inference.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnlab/figures/inference_views.h"
#include "attnlab/model/bugs.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/presets.h"
#include "attnlab/python/codegen.h"
#include "test_util.h"

namespace attnlab {
namespace {

using nlohmann::json;

constexpr double kAtol32 = 2e-6, kRtol32 = 1e-5, kTol64 = 1e-12;

// bfloat16 / float16 against PyTorch's loops: the same stores of the same float32 values, so
// equal but where a float32 sum in another order lands on the other side of a rounding
// boundary: one unit in the last place of the dtype (2^-7 |x| for bfloat16, 2^-10 for float16;
// the float32 tolerance below it).
double LowUlp(const Scenario& s) { return s.dtype == Dtype::kBfloat16 ? 0x1p-7 : 0x1p-10; }
double Atol(const Scenario& s) { return s.dtype == Dtype::kFloat64 ? kTol64 : kAtol32; }
double Rtol(const Scenario& s) {
  return s.dtype == Dtype::kFloat64 ? kTol64 : IsLowPrecision(s.dtype) ? LowUlp(s) : kRtol32;
}

MatrixD Column(const std::vector<double>& v) {
  MatrixD m(static_cast<Eigen::Index>(v.size()), 1);
  for (size_t i = 0; i < v.size(); ++i) m(static_cast<Eigen::Index>(i), 0) = v[i];
  return m;
}

MatrixD JsonColumn(const json& j) {
  json rows = json::array();
  for (const json& v : j) rows.push_back(json::array({v}));
  return test::JsonMatrixDouble(rows);
}

class DecodeGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(DecodeGolden, DecodeAndTiledEqualPyTorchsLoops) {
  const json g = test::LoadGolden("decode/" + GetParam() + ".json");
  const Scenario s = ParseScenario(g["scenario"].dump());
  const Stages st = RunScenario(s);
  const double atol = Atol(s), rtol = Rtol(s);

  const json& dec = g["decode"];
  const DecodeRun run =
      RunDecode(s, st, {dec["prefill"].get<int64_t>(), dec["chunk"].get<int64_t>()});
  const json& want_steps = dec["expected"]["steps"];
  ASSERT_EQ(run.steps.size(), want_steps.size());
  for (size_t i = 0; i < run.steps.size(); ++i) {
    const DecodeStep& step = run.steps[i];
    const json& w = want_steps[i];
    const std::string at = "decode step " + std::to_string(i);
    EXPECT_EQ(step.t, w["t"].get<int64_t>()) << at;
    EXPECT_EQ(step.cache_len, w["cache_len"].get<int64_t>()) << at;
    EXPECT_EQ(step.evicted, w["evicted"].get<std::vector<int64_t>>()) << at;
    EXPECT_EQ(step.keys, w["keys"].get<std::vector<int64_t>>()) << at;
    for (int64_t b = 0; b < st.shape.B; ++b)
      for (int64_t h = 0; h < st.shape.H; ++h)
        EXPECT_TRUE(
            test::MatrixNear(at + " weights b" + std::to_string(b) + " h" + std::to_string(h),
                             (step.weights[b * st.shape.H + h]),
                             test::JsonMatrixDouble(w["weights"][b][h]), atol, rtol));
  }
  for (int64_t b = 0; b < st.shape.B; ++b)
    EXPECT_TRUE(test::MatrixNear("decode context b" + std::to_string(b), (run.context[b]),
                                 test::JsonMatrixDouble(dec["expected"]["context"][b]), atol,
                                 rtol));
  EXPECT_EQ(run.unreachable_cells, 0);
  // The agreement with the full computation: PyTorch's loop against PyTorch's ordinary
  // attention, and ours against the engine's (top_left alignment is the bug: they differ).
  const bool aligned = s.mask.align == MaskAlign::kBottomRight;
  for (int64_t b = 0; b < st.shape.B; ++b)
    EXPECT_EQ(static_cast<bool>(
                  test::MatrixNear("torch decode vs full b" + std::to_string(b),
                                   test::JsonMatrixDouble(dec["expected"]["context"][b]),
                                   test::JsonMatrixDouble(g["full_context"][b]), atol, rtol)),
              aligned);
  if (aligned && IsLowPrecision(s.dtype))  // the same stores of the same values: measured 0
    EXPECT_EQ(run.max_abs_diff, 0.0) << "decode against the full computation";
  else if (aligned)
    EXPECT_LE(run.max_abs_diff, atol + rtol * 4) << "decode against the full computation";
  else
    EXPECT_GT(run.max_abs_diff, 0.01) << "top_left alignment must not equal the full computation";

  const json& til = g["tiled"];
  const TiledRun tr = RunTiled(s, st, til["block_q"].get<int64_t>(), til["block_k"].get<int64_t>());
  EXPECT_EQ(tr.skipped_tiles, til["expected"]["skipped_tiles"].get<int64_t>());
  const json& tiles = til["expected"]["steps"];
  ASSERT_EQ(tr.steps.size(), tiles.size());
  for (size_t i = 0; i < tr.steps.size(); ++i) {
    const TileStep& t = tr.steps[i];
    const json& w = tiles[i];
    const std::string at = "tile " + std::to_string(i);
    EXPECT_EQ(t.row0, w["rows"][0].get<int64_t>()) << at;
    EXPECT_EQ(t.key0, w["keys"][0].get<int64_t>()) << at;
    EXPECT_EQ(t.skipped, w["skipped"].get<bool>()) << at;
    EXPECT_TRUE(test::MatrixNear(at + " m", Column(t.m), JsonColumn(w["m"]), atol, rtol));
    EXPECT_TRUE(test::MatrixNear(at + " l", Column(t.l), JsonColumn(w["l"]), atol, rtol));
    EXPECT_TRUE(test::MatrixNear(at + " O", (t.O), test::JsonMatrixDouble(w["O"]), atol, rtol));
  }
  for (int64_t b = 0; b < st.shape.B; ++b)
    EXPECT_TRUE(test::MatrixNear("tiled context b" + std::to_string(b), (tr.context[b]),
                                 test::JsonMatrixDouble(til["expected"]["context"][b]), atol,
                                 rtol));
  // bfloat16 / float16: the tiles keep the logits in float32 and store P, the full computation
  // stores its scores, logits and weights: they differ by the dtype's rounding, which
  // AgreementTolerance bounds (PyTorch's loop against PyTorch's full computation too).
  const bool low = IsLowPrecision(s.dtype);
  EXPECT_LE(tr.max_abs_diff, low ? tr.tolerance : atol + rtol * 4)
      << "tiled against the full computation";
  for (int64_t b = 0; b < st.shape.B; ++b)
    EXPECT_TRUE(test::MatrixNear("torch tiled vs full b" + std::to_string(b),
                                 test::JsonMatrixDouble(til["expected"]["context"][b]),
                                 test::JsonMatrixDouble(g["full_context"][b]),
                                 low ? tr.tolerance : atol, low ? 0.0 : rtol));
  // The engine's full computation is the oracle's (its goldens: tests/golden/scenarios/lowp-*).
  for (int64_t b = 0; b < st.shape.B; ++b)
    EXPECT_TRUE(
        test::MatrixNear("engine vs torch full b" + std::to_string(b),
                         st.f64 ? st.f64->context[b] : MatrixD(st.context[b].cast<double>()),
                         test::JsonMatrixDouble(g["full_context"][b]), atol, rtol));
}

INSTANTIATE_TEST_SUITE_P(Goldens, DecodeGolden, ::testing::ValuesIn(test::GoldenNames("decode")),
                         [](const auto& info) { return test::ParamName(info.param); });

Scenario Journey(const std::string& mask_json) {
  json j = json::parse(WriteScenario(LoadPreset("raschka-journey")));
  j["mask"] = json::parse(mask_json);
  return ParseScenario(j.dump());
}

// A decode step with q_len = 1 < kv_len under top_left alignment sees only the first key
// (PyTorch's is_causal): its weights are one-hot on key 0 and its row differs from the full one.
TEST(Decode, TopLeftAlignmentIsTheClassicBug) {
  const Scenario s = Journey(R"({"kind": "causal", "align": "top_left"})");
  const Stages st = RunScenario(s);
  const DecodeRun run = RunDecode(s, st, {2, 0});
  ASSERT_EQ(run.steps.size(), 5u);  // the prefill of 2, then tokens 2, 3, 4, 5
  const DecodeStep& step = run.steps[1];
  EXPECT_EQ(step.keys, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(step.allowed(0, 0), 1);
  EXPECT_EQ(step.allowed(0, 1), 0);
  EXPECT_EQ(step.allowed(0, 2), 0);
  EXPECT_EQ(step.weights[0](0, 0), 1.0);
  EXPECT_GT(step.max_abs_diff, 0.05);
  EXPECT_EQ(run.steps[0].max_abs_diff, 0.0 * run.steps[0].max_abs_diff);  // prefill: q == kv
  const Scenario fixed = Journey(R"({"kind": "causal"})");
  const DecodeRun ok = RunDecode(fixed, RunScenario(fixed), {2, 0});
  EXPECT_LE(ok.max_abs_diff, 1e-6);
}

// The sliding window's cache is a ring buffer of W keys: each decoded token evicts the one
// that left its window, and a chunk keeps W - 1 older keys plus itself while it attends.
TEST(Decode, SlidingWindowEvictsIntoARingBuffer) {
  const Scenario s = Journey(R"({"kind": "sliding_window", "window": 2})");
  const Stages st = RunScenario(s);
  const DecodeRun run = RunDecode(s, st, {4, 3});
  ASSERT_EQ(run.steps.size(), 4u);  // chunks 0-2, 3; tokens 4, 5
  EXPECT_EQ(run.steps[0].keys, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(run.steps[0].evicted, (std::vector<int64_t>{0}));  // W = 2 kept after the chunk
  EXPECT_EQ(run.steps[0].cache_len, 2);
  EXPECT_EQ(run.steps[1].keys, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(run.steps[1].evicted, (std::vector<int64_t>{1}));
  EXPECT_EQ(run.steps[3].keys, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(run.steps[3].cache_len, 2);
  EXPECT_LE(run.max_abs_diff, 1e-6);
}

TEST(Decode, MaskNoneCannotBeDecodedAndSaysSo) {
  const Scenario s = Journey(R"({"kind": "none"})");
  const DecodeRun run = RunDecode(s, RunScenario(s), {3, 0});
  EXPECT_EQ(run.unreachable_cells,
            3 + 2 * 3 + 1 * 3 + 0);  // rows 0-2 miss 3 keys, 3 misses 2, 4 one
  EXPECT_GT(run.max_abs_diff, 0.0);
}

TEST(Tiled, CausalSkipsTheTilesAboveTheDiagonal) {
  const Scenario s = Journey(R"({"kind": "causal"})");
  const TiledRun run = RunTiled(s, RunScenario(s), 2, 2);
  EXPECT_EQ(run.steps.size(), 9u);
  EXPECT_EQ(run.skipped_tiles, 3);  // (0, 1), (0, 2), (1, 2)
  EXPECT_TRUE(run.steps[1].skipped);
  EXPECT_LE(run.max_abs_diff, 1e-6);
}

// A query block's output after its last tile is its columns of the run's context (no out_proj
// here): with the sigmoid sink that is O / l times the gate, which moves every value of the
// bug-sink-sigmoid preset's rows by more than display precision; with the concat sink (the
// bug's fix) O / l itself.
TEST(Tiled, BlockOutputIsTheContextWithTheSigmoidSinksGate) {
  for (const bool fixed : {false, true}) {
    const Scenario bug = LoadPreset("bug-sink-sigmoid");
    const Scenario s = fixed ? BugFix("bug-sink-sigmoid", bug) : bug;
    ASSERT_FALSE(s.projections.out_proj);
    const Stages st = RunScenario(s);
    const TiledRun run = RunTiled(s, st, 2, 2);
    double moved = 0;
    int blocks = 0;
    for (const TileStep& t : run.steps) {
      if (t.key0 + t.keys < st.shape.T) continue;  // not the block's last tile
      ++blocks;
      const MatrixD out = TileBlockOutput(s, run, t, st.shape.H);
      for (int64_t r = 0; r < t.rows; ++r)
        for (int64_t d = 0; d < st.shape.dh_v; ++d) {
          const double want = run.context[t.batch](t.row0 + r, t.head * st.shape.dh_v + d);
          if (std::isnan(want)) {  // the row no key is allowed for: nan in both (gate 0 x 0 / 0)
            EXPECT_TRUE(std::isnan(out(r, d))) << fixed << " " << t.row0 + r << "," << d;
            continue;
          }
          EXPECT_NEAR(out(r, d), want, 1e-6) << fixed << " " << t.row0 + r << "," << d;
          moved = std::max(moved, std::abs(t.O(r, d) / t.l[r] - want));
        }
    }
    EXPECT_EQ(blocks, 2 * 4);  // 2 heads x 4 query blocks of T = 7
    if (fixed)
      EXPECT_LE(moved, 1e-6);  // the concat sink: O / l is the context
    else
      EXPECT_GT(moved, 0.1);  // the gate: the rows the old panel showed were this far off
  }
}

// float64 (numpy-masked: NumPy's float64, causal): both loops run in double and agree with
// the full computation to float64 rounding.
TEST(Inference, Float64RunsInDouble) {
  const Scenario s = LoadPreset("numpy-masked");
  ASSERT_EQ(s.dtype, Dtype::kFloat64);
  const Stages st = RunScenario(s);
  const DecodeRun dec = RunDecode(s, st, {3, 2});
  EXPECT_LE(dec.max_abs_diff, 1e-12);
  EXPECT_NE(dec.context[0](3, 1), static_cast<double>(static_cast<float>(dec.context[0](3, 1))));
  const TiledRun til = RunTiled(s, st, 3, 3);
  EXPECT_LE(til.max_abs_diff, 1e-12);
  EXPECT_EQ(til.skipped_tiles, 1);  // T = 4 in 3 x 3 tiles: rows 0..2 against key 3
}

// Grouped K/V heads (gqa-8-query-2-kv: 8 query heads read 2 K/V heads): the cache holds the
// K/V heads' columns, and each query head attends over the K/V head it shares, so both loops
// still equal the full computation (float32: summation order only, as above).
TEST(Inference, GroupedKvHeadsReadTheirSharedHead) {
  const Scenario s = LoadPreset("gqa-8-query-2-kv");
  const Stages st = RunScenario(s);
  ASSERT_EQ(st.shape.H, 8);
  ASSERT_EQ(st.shape.Kv(), 2);
  const DecodeRun dec = RunDecode(s, st, {2, 0});
  EXPECT_LE(dec.max_abs_diff, 1e-5);
  const TiledRun til = RunTiled(s, st, 2, 2);
  EXPECT_LE(til.max_abs_diff, 1e-5);
}

// RoPE: the cache holds K_rot, each key turned by its absolute position, and each step's
// queries are turned by theirs, so a decode and the tiles equal the full computation; with
// grouped K/V heads (4 query heads, 2 K/V heads) too. Decoding from the unrotated Q and K
// would not: the shift check's point is that only i - j matters, and a step's row i is
// rotated by i, not by its index in the step.
TEST(Inference, RopeDecodesFromTheRotatedCache) {
  for (const Scenario& s :
       {LoadPreset("rope-shift"),
        ParseScenario(
            test::LoadGolden("scenarios/rope-gqa-h4-kv2-causal.json")["scenario"].dump())}) {
    SCOPED_TRACE(s.title);
    ASSERT_EQ(s.positions.kind, PositionKind::kRope);
    const Stages st = RunScenario(s);
    ASSERT_FALSE(st.K_rot.empty());
    const DecodeRun dec = RunDecode(s, st, {2, 0});
    EXPECT_GT(dec.steps.size(), 2u);
    EXPECT_LE(dec.max_abs_diff, 1e-5);
    EXPECT_EQ(dec.unreachable_cells, 0);
    const TiledRun til = RunTiled(s, st, 2, 3);
    EXPECT_LE(til.max_abs_diff, 1e-5);
    // The scores of the last step are q_rot_i . k_rot_j: the full scores' last row.
    const DecodeStep& last = dec.steps.back();
    const int64_t i = st.shape.T - 1;
    for (size_t c = 0; c < last.keys.size(); ++c)
      EXPECT_NEAR(last.scores[0](0, static_cast<Eigen::Index>(c)),
                  st.Head(st.scores, 0, 0)(i, last.keys[c]), 1e-5);
  }
}

TEST(Inference, RefusalsNameTheCulprit) {
  const Scenario s = Journey(R"({"kind": "causal"})");
  const Stages st = RunScenario(s);
  auto message = [](auto f) {
    try {
      f();
    } catch (const InferenceError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] {
              RunDecode(s, st, {7, 0});
            }),
            "--prefill: 7 is outside 0..6 (the scenario has T = 6 tokens)");
  EXPECT_EQ(message([&] { RunTiled(s, st, 0, 2); }), "--block-q: 0 is less than 1 row");
  Scenario mean = s;
  mean.normalization = Normalization::kMean;
  EXPECT_EQ(message([&] { RunTiled(mean, RunScenario(mean), 2, 2); }),
            "normalization: the online softmax computes softmax, not \"mean\" (softmax or "
            "softmax_then_mask)");
  // The generated loops take what the app's loops take: a sink and ALiBi are written out.
  Scenario sink = s;
  sink.scaling.sink = {0.5};
  EXPECT_NE(GenerateDecodeCode(sink, {2, 0}).find("sink_logits = torch.tensor([0.5])"),
            std::string::npos);
  Scenario alibi = s;
  alibi.positions.kind = PositionKind::kAlibi;
  EXPECT_NE(GenerateTiledCode(alibi, 2, 2).find("s = s - alibi_slopes[h] * (torch.arange(i0, i1)"),
            std::string::npos);
}

// Soft-capping, sinks and ALiBi inside both loops: every row equals the full computation's at
// every prefill, chunk and tile size (ALiBi's distances from absolute positions, the sink's
// column in each step's and each tile's softmax), to the tolerance above.
TEST(Inference, LogitModifiersEqualTheFullComputation) {
  for (const char* preset : {"softcap", "gpt-oss-sink", "alibi"})
    for (const Dtype dtype : {Dtype::kFloat32, Dtype::kFloat64}) {
      Scenario s = LoadPreset(preset);
      s.dtype = dtype;
      const Stages st = RunScenario(s);
      const int64_t T = st.shape.T;
      for (const auto& [P, C] : {std::pair<int64_t, int64_t>{0, 0}, {3, 2}, {T - 1, 1}, {T, 0}}) {
        const DecodeRun run = RunDecode(s, st, {P, C});
        EXPECT_LE(run.max_abs_diff, Atol(s) + Rtol(s) * 4) << preset << " P " << P << " C " << C;
      }
      for (const auto& [Br, Bc] : {std::pair<int64_t, int64_t>{1, 1}, {2, 3}, {4, 4}, {T, T}}) {
        const TiledRun run = RunTiled(s, st, Br, Bc);
        EXPECT_LE(run.max_abs_diff, Atol(s) + Rtol(s) * 4)
            << preset << " Br " << Br << " Bc " << Bc;
      }
    }
}

// bfloat16 and float16: a decode stores each step's scores, logits, weights and context in the
// dtype as the full computation stores its stages, so its rows are the full rows: max_abs_diff
// 0 on every case below, at every CPU level (ATTNLAB_CPU_CAPABILITY default, avx2, avx512). It
// could differ only where a float32 sum in another order crossed a rounding boundary. The
// tiles follow FlashAttention-2 (float32 state, P stored before P·V) and stay within
// AgreementTolerance of the full rows (measured: one ulp of the dtype at most, 0.0039 to 0.0078
// in bfloat16, 0.00012 to 0.00049 in float16, against tolerances 10 to 60 times larger). The values
// the runs hold are the dtype's (the tiles' m, l and O are float32 state, their context the
// dtype's).
TEST(Inference, LowPrecisionDecodeEqualsAndTilesWithinTheTolerance) {
  for (const char* preset :
       {"flash-journey", "gpt-oss-sink", "alibi", "softcap", "gqa-8-query-2-kv"})
    for (const Dtype dtype : {Dtype::kBfloat16, Dtype::kFloat16}) {
      Scenario s = LoadPreset(preset);
      s.dtype = dtype;
      SCOPED_TRACE(std::string(preset) + " " + Name(dtype));
      const Stages st = RunScenario(s);
      const int64_t T = st.shape.T;
      for (const auto& [P, C] : {std::pair<int64_t, int64_t>{0, 0}, {3, 2}, {T - 1, 1}, {T, 0}}) {
        const DecodeRun run = RunDecode(s, st, {P, C});
        EXPECT_GT(run.tolerance, 0.0);
        EXPECT_EQ(run.max_abs_diff, 0.0) << "P " << P << " C " << C;
        for (const DecodeStep& step : run.steps)
          for (const MatrixD& w : step.weights)
            for (Eigen::Index i = 0; i < w.size(); ++i)
              ASSERT_EQ(static_cast<float>(w.data()[i]),
                        StoreAs(dtype, static_cast<float>(w.data()[i])));
      }
      for (const auto& [Br, Bc] : {std::pair<int64_t, int64_t>{1, 1}, {2, 3}, {4, 4}, {T, T}}) {
        const TiledRun run = RunTiled(s, st, Br, Bc);
        EXPECT_LE(run.max_abs_diff, run.tolerance) << "Br " << Br << " Bc " << Bc;
        for (const MatrixD& ctx : run.context)
          for (Eigen::Index i = 0; i < ctx.size(); ++i)
            ASSERT_EQ(static_cast<float>(ctx.data()[i]),
                      StoreAs(dtype, static_cast<float>(ctx.data()[i])));
      }
    }
}

// A sink in a sliding-window decode and in tiles: the evicted keys leave the sink's column in
// place; ALiBi's slope times the distance from the query's absolute position, not the cache's.
TEST(Inference, SinkAndAlibiWithASlidingWindow) {
  json j = json::parse(WriteScenario(LoadPreset("alibi")));
  j["mask"] = json::parse(R"({"kind": "sliding_window", "window": 3})");
  j["scaling"] = json::parse(R"({"sink": [0.5, -1.0, 2.0, 0.0], "softcap": 2.0})");
  const Scenario s = ParseScenario(j.dump());
  const Stages st = RunScenario(s);
  const DecodeRun dec = RunDecode(s, st, {4, 2});
  EXPECT_LE(dec.max_abs_diff, Atol(s) + Rtol(s) * 4);
  EXPECT_EQ(dec.steps.back().keys,
            (std::vector<int64_t>{st.shape.T - 3, st.shape.T - 2, st.shape.T - 1}));
  // The sink takes a share: the last step's weights of head 2 (sink 2.0) sum to less than 1.
  EXPECT_LT(dec.steps.back().weights[2].sum(), 0.95);
  EXPECT_LE(RunTiled(s, st, 3, 2).max_abs_diff, Atol(s) + Rtol(s) * 4);
}

// What the sink took of each row: every decode step's share and the tiled run's exp(sink - m)
// / l equal the full computation's (its column of the softmax over T + 1 keys), to the
// tolerance above; without a sink neither run has one.
TEST(Inference, SinkShareEqualsTheFullComputations) {
  for (const Dtype dtype : {Dtype::kFloat32, Dtype::kFloat64}) {
    Scenario s = LoadPreset("gpt-oss-sink");
    s.dtype = dtype;
    const Stages st = RunScenario(s);
    const Shape& sh = st.shape;
    auto full = [&](size_t bh, int64_t i) {
      return dtype == Dtype::kFloat64 ? st.f64->sink[bh](i, 0)
                                      : static_cast<double>(st.sink[bh](i, 0));
    };
    const DecodeRun dec = RunDecode(s, st, {3, 2});
    for (const DecodeStep& step : dec.steps) {
      ASSERT_EQ(step.sink.size(), static_cast<size_t>(sh.B * sh.H));
      for (size_t bh = 0; bh < step.sink.size(); ++bh)
        for (int64_t r = 0; r < step.t - step.first; ++r)
          EXPECT_NEAR(step.sink[bh](r, 0), full(bh, step.first + r),
                      Atol(s) + Rtol(s) * full(bh, step.first + r))
              << "step at " << step.first << " head " << bh;
    }
    const TiledRun tiled = RunTiled(s, st, 2, 3);
    ASSERT_EQ(tiled.sink.size(), static_cast<size_t>(sh.B * sh.H));
    for (size_t bh = 0; bh < tiled.sink.size(); ++bh)
      for (int64_t i = 0; i < sh.T; ++i)
        EXPECT_NEAR(tiled.sink[bh](i, 0), full(bh, i), Atol(s) + Rtol(s) * full(bh, i))
            << bh << " " << i;
    EXPECT_GT(tiled.sink[0](0, 0), 0.7);  // head 0's sink (1.5) against row 0's single key
  }
  const Scenario plain = LoadPreset("flash-journey");
  const Stages st = RunScenario(plain);
  EXPECT_TRUE(RunDecode(plain, st, {2, 0}).steps[0].sink.empty());
  EXPECT_TRUE(RunTiled(plain, st, 2, 2).sink.empty());
}

// The exported views of a step (figures/inference_views.h) hold the step's own numbers: the
// decode step's weights of the head with the sink's share as the last column and the step's
// mask hatched; the tile's m, l, rescale and O per row; an out-of-range step is refused.
TEST(Inference, StepViewsHoldTheStepsNumbers) {
  const Scenario s = LoadPreset("gpt-oss-sink");
  const Stages st = RunScenario(s);
  const DecodeRun dec = RunDecode(s, st, {3, 2});  // steps: tokens 0-1, 2, then 3 .. 7 one each
  ASSERT_EQ(dec.steps.size(), 7u);
  const StageView first = DecodeStepView(st, s, dec, 0, 1, 0);
  ASSERT_EQ(first.values.rows(), 2);
  ASSERT_EQ(first.values.cols(), 3);  // keys 0 and 1, then the sink
  EXPECT_EQ(first.col_labels.back(), "sink");
  EXPECT_EQ(first.masked(0, 1), 1);  // causal: token 0 does not see token 1
  EXPECT_EQ(first.masked(0, 2), 0);  // the sink is never masked
  EXPECT_EQ(first.title, "decode step 1 of 7: weights over the cache");  // as the slider counts
  const DecodeStep& k = dec.steps[1];
  const StageView v = DecodeStepView(st, s, dec, 1, 1, 0);
  ASSERT_EQ(v.values.cols(), 4);
  for (int c = 0; c < 3; ++c)
    EXPECT_EQ(v.values(0, c), static_cast<float>(k.weights[1](0, c))) << c;
  EXPECT_EQ(v.values(0, 3), static_cast<float>(k.sink[1](0, 0)));
  EXPECT_NEAR(v.values.row(0).sum(), 1.0f, 1e-6f);  // the keys and the sink share the row
  try {
    DecodeStepView(st, s, dec, 9, 0, 0);
    ADD_FAILURE() << "step 9 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "step 9 is out of range: the decode has 7 steps (0..6)");
  }
  const TiledRun tiled = RunTiled(s, st, 2, 3);
  const TileStep& t = tiled.steps[2];
  const StageView tile = TileStateView(st, s, tiled, 2);
  ASSERT_EQ(tile.values.rows(), t.rows);
  ASSERT_EQ(tile.col_labels, (std::vector<std::string>{"m", "l", "rescale", "O0", "O1"}));
  for (int64_t r = 0; r < t.rows; ++r) {
    EXPECT_EQ(tile.values(r, 0), static_cast<float>(t.m[r]));
    EXPECT_EQ(tile.values(r, 1), static_cast<float>(t.l[r]));
    EXPECT_EQ(tile.values(r, 2), static_cast<float>(t.rescale[r]));
    EXPECT_EQ(tile.values(r, 4), static_cast<float>(t.O(r, 1)));
  }
}

}  // namespace
}  // namespace attnlab
