// parallel.cpp: a persistent pool of worker threads behind ParallelFor (see parallel.h).
#include "attnlab/base/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace attnlab {
namespace {

constexpr int kMaxThreads = 256;

std::atomic<int> g_override{0};  // SetThreadCount; 0 = default

int DefaultThreadCount() {
  static const int count = [] {
    if (const char* env = std::getenv("ATTNLAB_THREADS")) {
      char* end = nullptr;
      const long n = std::strtol(env, &end, 10);
      if (end != env && *end == '\0' && n > 0)
        return static_cast<int>(std::min<long>(n, kMaxThreads));
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : static_cast<int>(std::min<unsigned>(hw, kMaxThreads));
  }();
  return count;
}

thread_local bool t_inside_task = false;  // nested ParallelFor runs inline
thread_local int t_limit = 0;             // LimitThreadsOfThisThread; 0 = none

// Workers wait for a job by spinning for a short while (kSpin), then on a condition variable;
// one job at a time (job_mutex_). Waking a sleeping thread costs tens of microseconds on a
// virtual machine, as much as a whole small job, and the engine runs a few jobs back to back
// (input, projections, heads), so the spin keeps the workers awake between them. The caller
// takes tasks too, so a job with k threads wakes k - 1 workers.
//
// The tasks are dealt to the job's threads in a fixed order (DealtTask), each thread first runs its
// own in increasing order, then helps with what the others have left. So in two calls of the same
// size a task index mostly runs on the same thread: a row block's stages stay in the cache of the
// core that wrote them in the last run. Measured on this project's 2-vCPU machine, rewriting the
// same blocks of three T x T matrices from the other core took twice as long as from the same one
// (each line is first taken back from the other core), and tasks taken first-come moved them.
class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_.store(true);
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  // Returns false (nothing run) when another job holds the pool.
  bool TryRun(int64_t n, const std::function<void(int64_t)>& task, int threads) {
    std::unique_lock<std::mutex> job(job_mutex_, std::try_to_lock);
    if (!job.owns_lock()) return false;
    const int helpers = static_cast<int>(std::min<int64_t>(threads, n)) - 1;
    while (static_cast<int>(workers_.size()) < helpers)
      workers_.emplace_back([this, id = static_cast<int>(workers_.size())] { WorkerLoop(id); });
    {
      std::lock_guard<std::mutex> lock(mutex_);
      task_ = &task;
      n_ = n;
      slots_ = helpers + 1;
      for (int s = 0; s < slots_; ++s) next_[s].value.store(0);
      helpers_.store(helpers);
      error_ = nullptr;
      open_.store(true);
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    Work(0);
    // Every task is taken: close the job and wait only for the workers that joined it (a
    // worker still waking up finds it closed and does not touch it).
    open_.store(false);
    SpinWhile([this] { return joined_.load() != 0; });
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return joined_.load() == 0; });
    task_ = nullptr;
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return true;
  }

 private:
  static constexpr std::chrono::microseconds kSpin{200};

  // Spins while busy() holds, at most kSpin.
  template <typename Busy>
  static void SpinWhile(const Busy& busy) {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (int i = 0; busy(); ++i) {
      if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) return;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
  }

  void WorkerLoop(int id) {
    uint64_t seen = 0;
    for (;;) {
      SpinWhile([&] { return generation_.load() == seen && !stop_.load(); });
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
        if (stop_.load()) return;
        seen = generation_.load();
      }
      joined_.fetch_add(1);
      if (open_.load() && id < helpers_.load()) Work(id + 1);
      if (joined_.fetch_sub(1) == 1) {
        std::lock_guard<std::mutex> lock(mutex_);  // the caller tests joined_ under the mutex
        done_.notify_one();
      }
    }
  }

  // The k-th task dealt to slot s of `slots`: the tasks are dealt in rounds of one per slot,
  // the even rounds in slot order and the odd ones back (0 1 | 1 0 | 0 1 … for two slots), so
  // tasks whose cost grows or shrinks with the index (the causal mask's row blocks) are shared
  // out evenly.
  static int64_t DealtTask(int64_t k, int s, int slots) {
    return k * slots + (k % 2 == 0 ? s : slots - 1 - s);
  }

  // Runs slot `own`'s tasks, then takes the other slots' remaining ones, until none is left (or
  // one has thrown).
  void Work(int own) {
    t_inside_task = true;
    for (int j = 0; j < slots_; ++j) {
      const int s = (own + j) % slots_;
      for (int64_t i; (i = DealtTask(next_[s].value.fetch_add(1), s, slots_)) < n_;) {
        try {
          (*task_)(i);
        } catch (...) {
          std::lock_guard<std::mutex> lock(mutex_);
          if (!error_) error_ = std::current_exception();
          for (int t = 0; t < slots_; ++t) next_[t].value.store(n_);  // skip the rest
        }
      }
    }
    t_inside_task = false;
  }

  std::mutex job_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(int64_t)>* task_ = nullptr;
  int64_t n_ = 0;
  int slots_ = 1;               // the job's threads: the caller and helpers_ workers
  struct alignas(64) Counter {  // one cache line each: a slot's owner takes from it alone
    std::atomic<int64_t> value{0};
  };
  Counter next_[kMaxThreads];  // next_[s]: how many of slot s's tasks are taken
  std::atomic<int> helpers_{0};
  std::atomic<bool> open_{false};  // tasks may still be taken; joined_ counts who takes them
  std::atomic<int> joined_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::exception_ptr error_;
};

Pool& ThePool() {
  static Pool pool;
  return pool;
}

}  // namespace

int ThreadCount() {
  const int n = g_override.load();
  return n > 0 ? n : DefaultThreadCount();
}

void SetThreadCount(int n) { g_override.store(n > 0 ? std::min(n, kMaxThreads) : 0); }

int LimitThreadsOfThisThread(int n) { return std::exchange(t_limit, std::max(n, 0)); }

void ParallelFor(int64_t n, const std::function<void(int64_t)>& task) {
  if (n <= 0) return;
  const int threads = t_limit > 0 ? std::min(ThreadCount(), t_limit) : ThreadCount();
  if (threads > 1 && n > 1 && !t_inside_task && ThePool().TryRun(n, task, threads)) return;
  for (int64_t i = 0; i < n; ++i) task(i);
}

int64_t RowBlock(int64_t T) {
  const int64_t block = (T / 16 + 15) / 16 * 16;
  return std::clamp<int64_t>(block, 32, 128);
}

}  // namespace attnlab
