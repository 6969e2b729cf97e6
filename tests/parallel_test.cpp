// parallel_test.cpp: the thread pool (parallel.h) and the engine's promise that every stage is
// bit-identical whatever the number of threads: the golden scenarios and randn T = 300 causal
// ones at 1, 2 and 8 threads, compared bit for bit, and `dump` byte for byte with
// ATTNLAB_THREADS=1, 2 and 8.
#include "attnlab/base/parallel.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "attnlab/model/pipeline.h"
#include "test_util.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;

// Restores the default thread count when a test ends, whatever happens in it.
struct ThreadCountGuard {
  ~ThreadCountGuard() { SetThreadCount(0); }
};

TEST(ThreadPool, SetterOverridesAndZeroRestoresTheDefault) {
  ThreadCountGuard guard;
  const int initial = ThreadCount();
  EXPECT_GE(initial, 1);
  SetThreadCount(3);
  EXPECT_EQ(ThreadCount(), 3);
  SetThreadCount(0);
  EXPECT_EQ(ThreadCount(), initial);
}

TEST(ThreadPool, RunsEveryTaskExactlyOnceAtAnyThreadCount) {
  ThreadCountGuard guard;
  for (int threads : {1, 2, 8}) {
    SetThreadCount(threads);
    std::vector<std::atomic<int>> hits(1000);
    ParallelFor(1000, [&](int64_t i) { hits[i].fetch_add(1); });
    for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 1) << "task " << i;
    // A nested call runs inline and still covers its range.
    std::atomic<int64_t> sum{0};
    ParallelFor(8, [&](int64_t) { ParallelFor(10, [&](int64_t j) { sum += j; }); });
    EXPECT_EQ(sum.load(), 8 * 45) << threads << " threads";
  }
}

TEST(ThreadPool, RethrowsATasksExceptionAndStaysUsable) {
  ThreadCountGuard guard;
  SetThreadCount(4);
  EXPECT_THROW(ParallelFor(100,
                           [](int64_t i) {
                             if (i == 37) throw std::runtime_error("task 37");
                           }),
               std::runtime_error);
  std::atomic<int> count{0};
  ParallelFor(50, [&](int64_t) { ++count; });
  EXPECT_EQ(count.load(), 50);
}

// Jobs of a few tasks back to back, from two callers at once (the second runs inline while
// the first holds the pool), and jobs that end before a sleeping worker wakes up: every task
// runs exactly once, and a worker that wakes late never runs a task of a job that has ended
// (its local `hits` would be gone: ASan and the counts would see it).
TEST(ThreadPool, ManySmallJobsBackToBackFromTwoCallers) {
  ThreadCountGuard guard;
  SetThreadCount(4);
  std::atomic<int64_t> wrong{0};
  auto caller = [&wrong](int jobs) {
    for (int j = 0; j < jobs; ++j) {
      const int64_t n = 1 + j % 7;
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      ParallelFor(n, [&](int64_t i) { hits[static_cast<size_t>(i)].fetch_add(1); });
      for (auto& h : hits) wrong += h.load() != 1;
      if (j % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // workers sleep
    }
  };
  std::thread other(caller, 3000);
  caller(3000);
  other.join();
  EXPECT_EQ(wrong.load(), 0);
}

// The window's background run limits its own thread: its tasks stay on it, while other threads
// keep the pool; the limit is per thread and is undone by restoring the previous one.
TEST(ThreadPool, ThreadLimitAppliesToTheCallingThreadOnly) {
  ThreadCountGuard guard;
  SetThreadCount(4);
  std::thread limited([] {
    EXPECT_EQ(LimitThreadsOfThisThread(1), 0);
    std::vector<std::thread::id> ran(64);
    ParallelFor(64, [&](int64_t i) {
      ran[static_cast<size_t>(i)] = std::this_thread::get_id();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    });
    for (const std::thread::id& id : ran) EXPECT_EQ(id, std::this_thread::get_id());
    EXPECT_EQ(LimitThreadsOfThisThread(0), 1);
  });
  limited.join();
  std::mutex m;
  std::set<std::thread::id> ids;
  ParallelFor(64, [&](int64_t) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    std::lock_guard<std::mutex> lock(m);
    ids.insert(std::this_thread::get_id());
  });
  EXPECT_GT(ids.size(), 1u);  // this thread has no limit: the pool's workers help
}

// The tasks are dealt to the threads in a fixed order, in rounds of one each, every other round
// backwards (two threads: 0 1 | 1 0 | 0 1 | 1 0), and each thread runs its own first: with
// tasks of equal length, the caller runs 0, 3, 4 and 7, one worker 1, 2, 5 and 6, in every call
// (first-come order would give the worker task 2 or 3 by chance). A worker more than a task late
// would lose tasks to the caller, so the tasks are long (25 ms) against a thread's wake-up on a
// busy machine.
TEST(ThreadPool, DealsTheTasksToTheSameThreadsInEveryCall) {
  ThreadCountGuard guard;
  SetThreadCount(2);
  std::thread::id first_worker;
  for (int call = 0; call < 2; ++call) {
    std::vector<std::thread::id> ran(8);
    ParallelFor(8, [&](int64_t i) {
      ran[static_cast<size_t>(i)] = std::this_thread::get_id();
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    });
    const std::thread::id caller = std::this_thread::get_id(), worker = ran[1];
    EXPECT_NE(worker, caller) << "call " << call;
    if (call == 0) first_worker = worker;
    EXPECT_EQ(worker, first_worker) << "call " << call << ": another worker than the first call's";
    for (int i : {0, 3, 4, 7}) EXPECT_EQ(ran[static_cast<size_t>(i)], caller) << "task " << i;
    for (int i : {1, 2, 5, 6}) EXPECT_EQ(ran[static_cast<size_t>(i)], worker) << "task " << i;
  }
}

TEST(ThreadPool, RowBlockDependsOnTOnly) {
  EXPECT_EQ(RowBlock(8), 32);
  EXPECT_EQ(RowBlock(300), 32);
  EXPECT_EQ(RowBlock(1024), 64);
  EXPECT_EQ(RowBlock(2048), 128);
  EXPECT_EQ(RowBlock(8192), 128);
}

// Bit for bit (memcmp: nan payloads and the sign of zero included).
::testing::AssertionResult SameBits(const std::string& what, const MatrixStack& a,
                                    const MatrixStack& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << what << ": stack sizes differ";
  for (size_t m = 0; m < a.size(); ++m) {
    if (a[m].rows() != b[m].rows() || a[m].cols() != b[m].cols())
      return ::testing::AssertionFailure() << what << "[" << m << "]: shapes differ";
    if (std::memcmp(a[m].data(), b[m].data(), sizeof(float) * a[m].size()) != 0)
      return ::testing::AssertionFailure() << what << "[" << m << "]: bits differ";
  }
  return ::testing::AssertionSuccess();
}

void ExpectSameStages(const Stages& a, const Stages& b, const std::string& label) {
  EXPECT_TRUE(SameBits(label + " X", a.X, b.X));
  for (int w = 0; w < 3; ++w) EXPECT_TRUE(SameBits(label + " W", {a.W[w]}, {b.W[w]}));
  EXPECT_TRUE(SameBits(label + " Q", a.Q, b.Q));
  EXPECT_TRUE(SameBits(label + " K", a.K, b.K));
  EXPECT_TRUE(SameBits(label + " V", a.V, b.V));
  EXPECT_TRUE(SameBits(label + " scores", a.scores, b.scores));
  EXPECT_TRUE(SameBits(label + " logits", a.logits, b.logits));
  EXPECT_TRUE(SameBits(label + " weights", a.weights, b.weights));
  EXPECT_TRUE(SameBits(label + " weights_dropped", a.weights_dropped, b.weights_dropped));
  EXPECT_TRUE(SameBits(label + " context", a.context, b.context));
  EXPECT_EQ(std::memcmp(&a.var_K, &b.var_K, sizeof a.var_K), 0) << label << " var_K";
}

// randn 2 x 300 x 32, nn.Linear with bias and out_proj, 2 heads, causal: many row blocks.
Scenario Randn300(double dropout) {
  Scenario s;
  s.input.source = InputSource::kRandn;
  s.input.batch = 2;
  s.input.length = 300;
  s.input.d_in = 32;
  s.input.seed = 123;
  s.projections.init = ProjectionInit::kLinear;
  s.projections.d_out = 32;
  s.projections.heads = 2;
  s.projections.bias = true;
  s.projections.out_proj = true;
  s.projections.seed = 7;
  s.mask.kind = MaskKind::kCausal;
  s.dropout.p = dropout;
  s.dropout.seed = 3;
  return s;
}

std::vector<std::pair<std::string, Scenario>> AllScenarios() {
  std::vector<std::pair<std::string, Scenario>> out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(std::string(ATTNLAB_GOLDEN_DIR) + "/scenarios"))
    files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    const nlohmann::json golden = test::LoadGolden("scenarios/" + f.filename().string());
    out.emplace_back(f.stem().string(), ParseScenario(golden["scenario"].dump()));
  }
  out.emplace_back("randn-300-causal", Randn300(0.0));
  out.emplace_back("randn-300-causal-dropout", Randn300(0.2));
  return out;
}

TEST(ParallelEngine, EveryStageIsBitIdenticalAt1And2And8Threads) {
  ThreadCountGuard guard;
  const auto scenarios = AllScenarios();
  ASSERT_GT(scenarios.size(), 40u);
  for (const auto& [name, scenario] : scenarios) {
    SetThreadCount(1);
    const Stages one = RunScenario(scenario);
    for (int threads : {2, 8}) {
      SetThreadCount(threads);
      ExpectSameStages(one, RunScenario(scenario), name + " at " + std::to_string(threads));
    }
  }
}

// Each thread makes a block's scores in a buffer of its own that it reuses in every run and
// clears after reading (ScoresScratch, pipeline.cpp): a thread that ran other scenarios before
// (other inputs, another T, softmax over dim=-2) gives the bits of a thread that ran none.
TEST(ParallelEngine, ScoresDoNotDependOnWhatTheThreadRanBefore) {
  ThreadCountGuard guard;
  SetThreadCount(1);  // every block on the calling thread, with that thread's buffer
  Scenario s = Randn300(0.0);
  Stages first;
  std::thread([&] { first = RunScenario(s); }).join();  // a thread that ran nothing before
  Scenario other = s;
  other.input.seed = 5;
  RunScenario(other);
  other.input.length = 200;
  RunScenario(other);
  other.input.length = 300;
  other.normalization = Normalization::kSoftmaxDimQuery;
  RunScenario(other);
  ExpectSameStages(first, RunScenario(s), "after other scenarios on this thread");
  SetThreadCount(2);
  ExpectSameStages(first, RunScenario(s), "on two threads after them");
}

// The partial recomputes (temperature, normalization, dropout) on 8 threads land on the same
// bits as a fresh run on one thread.
TEST(ParallelEngine, PartialRecomputesMatchAFreshSingleThreadRun) {
  ThreadCountGuard guard;
  Scenario s = Randn300(0.0);
  SetThreadCount(8);
  Engine engine;
  engine.Run(s);
  auto check = [&](const std::string& label) {
    const Stages& got = engine.Run(s);
    SetThreadCount(1);
    const Stages fresh = RunScenario(s);
    SetThreadCount(8);
    ExpectSameStages(got, fresh, label);
  };
  s.scaling.multiplier = 1e30;  // overflowing logits: nan rows, filled masked cells
  s.normalization = Normalization::kSoftmaxNaive;
  check("naive overflow");
  s.scaling.multiplier = 0.5;
  check("temperature 0.5 after nan rows");
  s.normalization = Normalization::kSoftmax;
  check("softmax");
  s.dropout.p = 0.3;
  check("dropout 0.3");
  s.dropout.seed = 11;
  check("dropout seed 11");
  EXPECT_EQ(engine.counts().scores, 1);
}

// The engine packs K and V for its products once per run (kernels.h pack_right) and keeps V's
// packing while V stays: after a new V (projections seed, input, heads, a float64 run and
// back), and the temperature drags that reuse it, every stage is a fresh run's, bit for bit.
TEST(ParallelEngine, AChangedKOrVIsPackedAgain) {
  ThreadCountGuard guard;
  SetThreadCount(2);
  Scenario s = Randn300(0.0);
  Engine engine;
  engine.Run(s);
  using Change = void (*)(Scenario&);
  const std::pair<const char*, Change> steps[] = {
      {"new projections", [](Scenario& x) { x.projections.seed = 8; }},
      {"temperature after new projections", [](Scenario& x) { x.scaling.multiplier = 0.7; }},
      {"new input", [](Scenario& x) { x.input.seed = 124; }},
      {"temperature after a new input", [](Scenario& x) { x.scaling.multiplier = 1.3; }},
      {"four heads", [](Scenario& x) { x.projections.heads = 4; }},
      {"float64", [](Scenario& x) { x.dtype = Dtype::kFloat64; }},
      {"float64 temperature", [](Scenario& x) { x.scaling.multiplier = 0.9; }},
      {"float32 again", [](Scenario& x) { x.dtype = Dtype::kFloat32; }},
      {"float32 temperature", [](Scenario& x) { x.scaling.multiplier = 1.0; }}};
  for (const auto& [label, change] : steps) {
    change(s);
    const Stages& got = engine.Run(s);
    ExpectSameStages(got, RunScenario(s), label);
  }
}

}  // namespace
}  // namespace attnlab
