// attention_bench.cpp: the engine's speed, next to the floor it is measured against.
//
//   BM_Pipeline/T/d/threads   one full recompute: randn input (1 x T x d), nn.Linear d -> d for
//                             Q, K, V, causal mask, stable softmax, context (every stage kept)
//   BM_MultiplierChange/T/threads  the temperature slider: only logits, weights and context
//   BM_Microgpt               Karpathy's microgpt.py default run (1000 steps, 20 samples)
//   BM_ExportFigure/T         render a T x T scores heatmap and encode it as PNG
//   BM_Circuits3000/steps     the induction-head lesson's default training run (one thread)
//   BM_DenseFloor/T/d/threads two Eigen GEMMs (Q K^T and W V, T x T x d each) plus one stable
//                             softmax pass over T x T: the work of dense attention, nothing
//                             kept; on n threads the rows are cut into n equal parts; compiled
//                             per instruction-set level (dense_floor.cpp) and run at the CPU's
//                             best (its label): the machine's floor, not the build's
//
// Wall-clock times (UseRealTime: the work runs on several threads).
// threads: 1, or 0 for all (ParallelFor's default: ATTNLAB_THREADS or the hardware threads).
// Goals (issue 25), as ratios within one run at the same thread count, on the default build:
// BM_Pipeline at T = 1024 and 2048 (d = 64) at most 1.0x BM_DenseFloor, BM_MultiplierChange at
// most 0.4x (tools/bench_ratios.sh measures them; docs/performance.md has the last tables).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>

#include "attnlab/base/cpu_level.h"
#include "attnlab/base/parallel.h"
#include "attnlab/figures/export.h"
#include "attnlab/figures/figure.h"
#include "attnlab/lessons/circuits.h"
#include "attnlab/lessons/microgpt.h"
#include "attnlab/lessons/train.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/scenario.h"
#include "attnlab/random/rng.h"

extern "C" {  // dense_floor.cpp, one per instruction-set level
void attnlab_dense_rows_default(const float*, const float*, const float*, int64_t, int64_t, int64_t,
                                int64_t, float*, float*);
void attnlab_dense_rows_avx2(const float*, const float*, const float*, int64_t, int64_t, int64_t,
                             int64_t, float*, float*);
void attnlab_dense_rows_avx512(const float*, const float*, const float*, int64_t, int64_t, int64_t,
                               int64_t, float*, float*);
}

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

// Sets the thread count of a benchmark (its last argument; 0 = the default) for its lifetime.
struct BenchThreads {
  explicit BenchThreads(benchmark::State& state, int arg) {
    SetThreadCount(static_cast<int>(state.range(arg)));
    state.counters["threads"] = ThreadCount();
  }
  ~BenchThreads() { SetThreadCount(0); }
};

void BM_Pipeline(benchmark::State& state) {
  const BenchThreads threads(state, 2);
  Scenario s = BenchScenario(state.range(0), state.range(1));
  Engine engine;
  engine.Run(s);  // warm: the stages' pages are touched once, as in the window (first-touch
                  // page faults are costly on this virtual machine and not the engine's work)
  for (auto _ : state) {
    s.input.seed ^= 1;  // a new input seed: every stage is recomputed
    benchmark::DoNotOptimize(engine.Run(s).context[0].data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0) * state.range(0));
}
BENCHMARK(BM_Pipeline)
    ->ArgsProduct({{64, 256, 1024, 2048}, {64}, {1, 0}})
    ->ArgNames({"T", "d", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_MultiplierChange(benchmark::State& state) {
  const BenchThreads threads(state, 1);
  Scenario s = BenchScenario(state.range(0), 64);
  Engine engine;
  engine.Run(s);
  for (auto _ : state) {
    s.scaling.multiplier = s.scaling.multiplier == 1.0 ? 1.5 : 1.0;
    benchmark::DoNotOptimize(engine.Run(s).context[0].data());
  }
  state.counters["scores_recomputed"] = engine.counts().scores;
}
BENCHMARK(BM_MultiplierChange)
    ->ArgsProduct({{1024, 2048}, {1, 0}})
    ->ArgNames({"T", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The floor's work at the CPU's best level (dense_floor.cpp): rows [r0, r0 + rows).
using DenseRowsFn = void (*)(const float*, const float*, const float*, int64_t, int64_t, int64_t,
                             int64_t, float*, float*);
DenseRowsFn DenseRowsAt(CpuLevel level) {
  return CopyForLevel(level, ATTNLAB_LEVEL_COPIES(attnlab_dense_rows));
}

void BM_DenseFloor(benchmark::State& state) {
  const BenchThreads threads(state, 2);
  const int64_t T = state.range(0), d = state.range(1);
  TorchGenerator g(0);
  const Matrix Q = MatrixFromFlat(g.Normal(T * d), T, d);
  const Matrix K = MatrixFromFlat(g.Normal(T * d), T, d);
  const Matrix V = MatrixFromFlat(g.Normal(T * d), T, d);
  Matrix S(T, T), C(T, d);
  // One equal part of the rows per thread: the fewest, largest GEMMs (1 thread: the whole).
  const int64_t parts = ThreadCount(), rows = (T + parts - 1) / parts;
  const CpuLevel level = BestCpuLevel();  // the machine's floor, whatever the engine runs at
  const DenseRowsFn dense_rows = DenseRowsAt(level);
  state.SetLabel(Name(level));
  for (auto _ : state) {
    ParallelFor(parts, [&](int64_t p) {
      const int64_t r0 = p * rows;
      if (r0 < T)
        dense_rows(Q.data(), K.data(), V.data(), T, d, r0, std::min(rows, T - r0), S.data(),
                   C.data());
    });
    benchmark::DoNotOptimize(C.data());
  }
  state.SetItemsProcessed(state.iterations() * T * T);
}
BENCHMARK(BM_DenseFloor)
    ->ArgsProduct({{64, 256, 1024, 2048}, {64}, {1, 0}})
    ->ArgNames({"T", "d", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

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
// Issue 31: a scenario file of a megabyte is decided (refused here) in time linear in its size:
// 150000 nested arrays (a stack overflow before the depth pass), a million unclosed brackets (50
// s in nlohmann's parser before it), a megabyte of shallow arrays. Goal: well under a second each.
void BM_RefuseJson(benchmark::State& state) {
  const std::string head = "{\"format\": \"attention-lab/scenario@1\", \"input\": ";
  std::string text;
  switch (state.range(0)) {
    case 0:
      text = head + std::string(150000, '[') + std::string(150000, ']') + "}";
      break;
    case 1:
      text = std::string(1000000, '[');
      break;
    default:
      text = head + "[";
      while (text.size() < (1u << 20)) text += "[[[[[]]]]], ";
      text += "[]]}";
  }
  for (auto _ : state) {
    try {
      ParseScenario(text);
    } catch (const ScenarioError&) {
    }
  }
}
BENCHMARK(BM_RefuseJson)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

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

// microgpt.py's default run (issue 58's goal: at most 5 s on one core; CPython takes ~60 s):
// the shuffle and init, 1000 steps of its scalar graph and 20 samples, on one thread.
void BM_Microgpt(benchmark::State& state) {
  const std::vector<std::u32string> docs = MicrogptDocuments(MicrogptNamesText());
  for (auto _ : state) {
    Microgpt run(docs, MicrogptSettings{});
    int64_t lines = 0;
    RunMicrogpt(run, false, [&](const std::string&) { ++lines; });
    benchmark::DoNotOptimize(lines);
  }
}
BENCHMARK(BM_Microgpt)->Unit(benchmark::kSecond)->Iterations(1);
// The induction-head lesson's default run (circuits.h): 3000 AdamW steps of the two-layer,
// two-head, d_model 32 transformer on batches of 16 x 31 tokens, with its 31 evaluations.
// Goal (issue 59): at most 5 s on one core.
void BM_Circuits3000(benchmark::State& state) {
  CircuitOptions o;
  o.steps = state.range(0);
  for (auto _ : state) {
    const CircuitRun run = TrainCircuits(o);
    benchmark::DoNotOptimize(run.loss.data());
  }
}
BENCHMARK(BM_Circuits3000)->Arg(3000)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace attnlab

BENCHMARK_MAIN();
