// attention_bench.cpp: the engine's speed, next to the floor it is measured against.
//
//   BM_Pipeline/T/d        one full recompute: randn input (1 x T x d), nn.Linear d -> d for
//                          Q, K, V, causal mask, stable softmax, context (every stage kept)
//   BM_MultiplierChange/T  the temperature slider: only logits, weights and context redone
//   BM_ExportFigure/T      render a T x T scores heatmap and encode it as PNG
//   BM_DenseFloor/T/d      two Eigen GEMMs (Q K^T and W V, T x T x d each) plus one stable
//                          softmax pass over T x T: the work of dense attention, nothing kept
//
// Goal (README): BM_Pipeline at T = 1024, d = 64 within 1.5x of BM_DenseFloor/1024/64. With a
// causal mask the engine normalises only the lower triangle and multiplies W V as a triangular
// product, so it can beat the dense floor.
#include <benchmark/benchmark.h>

#include "attnlab/export.h"
#include "attnlab/figure.h"
#include "attnlab/pipeline.h"
#include "attnlab/rng.h"
#include "attnlab/train.h"

namespace attnlab {
namespace {

Scenario BenchScenario(int64_t T, int64_t d) {
  Scenario s;
  s.input.source = InputSource::kRandn;
  s.input.length = T;
  s.input.d_in = d;
  s.input.seed = 0;
  s.projections.init = ProjectionInit::kLinear;
  s.projections.d_out = d;
  s.projections.seed = 1;
  s.mask.kind = MaskKind::kCausal;
  return s;
}

void BM_Pipeline(benchmark::State& state) {
  Scenario s = BenchScenario(state.range(0), state.range(1));
  Engine engine;
  for (auto _ : state) {
    s.input.seed ^= 1;  // a new input seed: every stage is recomputed
    benchmark::DoNotOptimize(engine.Run(s).context[0].data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0) * state.range(0));
}
BENCHMARK(BM_Pipeline)->ArgsProduct({{64, 256, 1024, 2048}, {64}})->Unit(benchmark::kMillisecond);

void BM_MultiplierChange(benchmark::State& state) {
  Scenario s = BenchScenario(state.range(0), 64);
  Engine engine;
  engine.Run(s);
  for (auto _ : state) {
    s.scaling.multiplier = s.scaling.multiplier == 1.0 ? 1.5 : 1.0;
    benchmark::DoNotOptimize(engine.Run(s).context[0].data());
  }
  state.counters["scores_recomputed"] = engine.counts().scores;
}
BENCHMARK(BM_MultiplierChange)->Arg(2048)->Unit(benchmark::kMillisecond);

void BM_DenseFloor(benchmark::State& state) {
  const int64_t T = state.range(0), d = state.range(1);
  TorchGenerator g(0);
  const Matrix Q = MatrixFromFlat(g.Normal(T * d), T, d);
  const Matrix K = MatrixFromFlat(g.Normal(T * d), T, d);
  const Matrix V = MatrixFromFlat(g.Normal(T * d), T, d);
  Matrix S(T, T), C(T, d);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  for (auto _ : state) {
    S.noalias() = Q * K.transpose();
    for (int64_t i = 0; i < T; ++i) {
      auto row = S.row(i).array();
      const float mx = row.maxCoeff();
      row = ((row - mx) * scale).exp();
      row *= 1.0f / row.sum();
    }
    C.noalias() = S * V;
    benchmark::DoNotOptimize(C.data());
  }
  state.SetItemsProcessed(state.iterations() * T * T);
}
BENCHMARK(BM_DenseFloor)->ArgsProduct({{64, 256, 1024, 2048}, {64}})->Unit(benchmark::kMillisecond);

// Exporting a T x T heatmap: render the figure, then encode the PNG (issue: T = 2048 < 2 s).
void BM_ExportFigure(benchmark::State& state) {
  const Scenario s = BenchScenario(state.range(0), 64);
  const Stages st = RunScenario(s);
  const StageView view = ExtractStage(st, s, Stage::kScores, 0, 0);
  for (auto _ : state) {
    const std::string png = EncodePng(RenderFigure(view, {}));
    benchmark::DoNotOptimize(png.data());
  }
}
BENCHMARK(BM_ExportFigure)->Arg(64)->Arg(2048)->Unit(benchmark::kMillisecond);

// Training one head (issue 15): 500 Adam steps of T = 16, d = 64 (d_in = d_k), batch 16,
// previous-token, scaled; goal well under 1 s on one core so the window's experiment feels live.
void BM_TrainHead(benchmark::State& state) {
  const Scenario s = BenchScenario(16, 64);
  TrainOptions o;
  o.steps = state.range(0);
  for (auto _ : state) {
    const TrainRun run = TrainAttentionHead(s, o);
    benchmark::DoNotOptimize(run.loss.data());
  }
}
BENCHMARK(BM_TrainHead)->Arg(500)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace attnlab

BENCHMARK_MAIN();
