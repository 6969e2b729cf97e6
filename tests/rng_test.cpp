// rng_test.cpp: TorchGenerator against real PyTorch, bit for bit (golden/rng.json, made by
// tools/make_goldens.py with Debian's torch), and against the spec's test-vector table
// (the known values of PyTorch 1.13). Tolerance: none; float32 values are compared as bits.
#include "attnlab/random/rng.h"

#include <cstring>
#include <string>

#include "attnlab/base/parallel.h"
#include "test_util.h"

namespace attnlab {
namespace {

using nlohmann::json;

std::vector<uint32_t> Bits(const std::vector<float>& v) {
  std::vector<uint32_t> out(v.size());
  std::memcpy(out.data(), v.data(), v.size() * sizeof(float));
  return out;
}

// Runs one call of a golden case; floats come back as their bit patterns.
std::vector<int64_t> RunCall(TorchGenerator& g, const json& c) {
  const std::string op = c["op"];
  std::vector<uint32_t> b;
  if (op == "rand")
    b = Bits(g.Uniform(c["n"]));
  else if (op == "uniform")
    b = Bits(g.Uniform(c["n"], c["low"], c["high"]));
  else if (op == "randn")
    b = Bits(g.Normal(c["n"]));
  else if (op == "normal")
    b = Bits(g.Normal(c["n"], c["mean"], c["std"]));
  else if (op == "bernoulli")
    b = Bits(g.Bernoulli(c["n"], c["p"]));
  else if (op == "embedding")
    b = Bits(g.Embedding(c["num"], c["dim"]));
  else if (op == "linear") {
    auto lin = g.Linear(c["in"], c["out"], c["bias"]);
    b = Bits(lin.weight);
    auto bb = Bits(lin.bias);
    b.insert(b.end(), bb.begin(), bb.end());
  } else if (op == "dropout") {
    std::vector<float> x = g.Uniform(c["n"]);
    g.Dropout(x.data(), static_cast<int64_t>(x.size()), c["p"]);
    b = Bits(x);
  } else if (op == "randint") {
    return g.Randint(c["low"], c["high"], c["n"]);
  } else {
    ADD_FAILURE() << "unknown op " << op;
  }
  return std::vector<int64_t>(b.begin(), b.end());
}

uint64_t SeedOf(const json& j) {
  return j.is_number_unsigned() ? j.get<uint64_t>() : static_cast<uint64_t>(j.get<int64_t>());
}

// Every call of a golden file made with `kernel`'s build of PyTorch; returns how many values.
int CheckGoldenCalls(const std::string& file, NormalKernel kernel) {
  const json golden = test::LoadGolden(file);
  int checked_values = 0;
  for (const json& c : golden["cases"]) {
    TorchGenerator g(SeedOf(c["seed"]), kernel);
    for (size_t i = 0; i < c["calls"].size(); ++i) {
      const std::vector<int64_t> got = RunCall(g, c["calls"][i]);
      const std::vector<int64_t> want = c["expected"][i].get<std::vector<int64_t>>();
      EXPECT_EQ(got.size(), want.size()) << file << " " << c["calls"][i].dump();
      if (got.size() != want.size()) return checked_values;
      for (size_t k = 0; k < got.size(); ++k) {
        EXPECT_EQ(got[k], want[k]) << file << ": seed " << c["seed"] << ", call " << i << " "
                                   << c["calls"][i].dump() << ", element " << k;
        if (got[k] != want[k]) return checked_values;
      }
      checked_values += static_cast<int>(got.size());
    }
  }
  return checked_values;
}

TEST(TorchGenerator, MatchesPyTorchBitForBit) {
  // rng.json was made on a CPU with AVX2 and FMA: PyTorch ran its AVX2 kernels.
  EXPECT_GT(CheckGoldenCalls("rng.json", NormalKernel::kAvx2), 100000);  // rand/randn 1..40, ...
}

TEST(TorchGenerator, GenericKernelsMatchPyTorchWithoutAvx2) {
  // rng_generic.json: the same calls under ATEN_CPU_CAPABILITY=default, PyTorch's generic
  // kernels, which a CPU without AVX2 runs: other normals from 16 values on, and uniform_ (so
  // nn.Linear) without the fused multiply-add.
  EXPECT_GT(CheckGoldenCalls("rng_generic.json", NormalKernel::kScalar), 50000);
  const json generic = test::LoadGolden("rng_generic.json");
  const json avx2 = test::LoadGolden("rng.json");
  int differing_calls = 0;  // the two files do differ, so each test above checks something
  for (size_t c = 0; c < generic["cases"].size(); ++c)
    for (const json& a : avx2["cases"])
      if (a["seed"] == generic["cases"][c]["seed"] && a["calls"] == generic["cases"][c]["calls"])
        differing_calls += a["expected"] != generic["cases"][c]["expected"];
  EXPECT_GT(differing_calls, 100);
}

// Draws of 65536 to a million values (rng_large.json, tools/make_rng_large_goldens.py with
// Debian's torch): from 65536 values on, the uniforms are drawn and the Box-Muller blocks
// transformed part by part on every thread, so each draw is checked at 1, 2 and 8 threads
// against the hash of all PyTorch's values, and the words after it against one thread's.
TEST(TorchGenerator, LargeDrawsMatchPyTorchAtAnyThreadCount) {
  const json golden = test::LoadGolden("rng_large.json");
  ASSERT_EQ(golden["cases"].size(), 4u);
  std::vector<uint32_t> next_words;  // each case's word after its draw, on one thread
  for (const int threads : {1, 2, 8}) {
    SetThreadCount(threads);
    for (size_t i = 0; i < golden["cases"].size(); ++i) {
      const json& c = golden["cases"][i];
      TorchGenerator g(c["seed"].get<uint64_t>(), NormalKernel::kAvx2);
      const std::vector<uint32_t> bits = Bits(g.Normal(c["n"].get<int64_t>()));
      const uint32_t next = g.NextWord();
      if (threads == 1)
        next_words.push_back(next);
      else
        EXPECT_EQ(next, next_words[i])
            << "the word after seed " << c["seed"] << "'s draw, " << threads << " threads";
      const std::vector<int64_t> positions = c["positions"];
      for (size_t k = 0; k < positions.size(); ++k)
        ASSERT_EQ(bits[static_cast<size_t>(positions[k])], c["bits"][k].get<uint32_t>())
            << "seed " << c["seed"] << ", n " << c["n"] << ", element " << positions[k] << ", "
            << threads << " threads";
      uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a over the bit patterns, as the script
      for (const uint32_t w : bits) h = (h ^ w) * 0x100000001B3ull;
      EXPECT_EQ(std::to_string(h), c["fnv1a64"].get<std::string>())
          << "seed " << c["seed"] << ", n " << c["n"] << ", " << threads << " threads";
    }
  }
  SetThreadCount(0);
}

TEST(TorchGenerator, RawWordsOfSeeds0And123) {
  TorchGenerator g0(0), g123(123);
  EXPECT_EQ(g0.NextWord(), 2357136044u);
  EXPECT_EQ(g0.NextWord(), 2546248239u);
  EXPECT_EQ(g123.NextWord(), 2991312382u);
  EXPECT_EQ(g123.NextWord(), 3062119789u);
}

TEST(TorchGenerator, ScalarPathCacheCarriesOverAcrossCalls) {
  TorchGenerator g(0);
  const std::vector<float> a = g.Normal(3);
  const std::vector<float> b = g.Normal(1);  // the cached sine half of the second pair
  EXPECT_NEAR(a[0], 1.54099607f, 5e-9);
  EXPECT_NEAR(a[2], -2.17878938f, 5e-9);
  EXPECT_NEAR(b[0], 0.56843126f, 5e-9);
  g.ManualSeed(0);  // manual_seed clears the cache
  EXPECT_EQ(g.Normal(1)[0], a[0]);
}

TEST(TorchGenerator, NoAvx2KernelMatchesSpecTable) {
  // §11, the "no-AVX2 build" column: randn(16) and randn(17) at seed 123.
  TorchGenerator g(123, NormalKernel::kScalar);
  const std::vector<float> v = g.Normal(16);
  EXPECT_NEAR(v[0], 0.33737016f, 5e-9);
  EXPECT_NEAR(v[8], 0.76710707f, 5e-9);
  EXPECT_NEAR(v[15], 0.26919866f, 5e-9);
  g.ManualSeed(123);
  const std::vector<float> w = g.Normal(17);
  EXPECT_NEAR(w[1], -1.02047253f, 5e-9);
  EXPECT_NEAR(w[16], -0.78485334f, 5e-9);
}

TEST(TorchGenerator, RandintAfterSeed42MatchesKarpathyNotebook) {
  // karpathy-mathematical-trick: torch.manual_seed(42); torch.randint(0, 10, (3, 2)).
  TorchGenerator g(42);
  EXPECT_EQ(g.Randint(0, 10, 6), (std::vector<int64_t>{2, 7, 6, 4, 6, 5}));
}

TEST(TorchGenerator, DropoutKeepsScaleAndEdgeCases) {
  TorchGenerator g(0);
  std::vector<float> x(8, 1.0f);
  g.Dropout(x.data(), 8, 0.1);  // §11: 0, 1.11111116, 1.11111116, 0, then five kept
  EXPECT_EQ(x, (std::vector<float>{0, 1.11111116f, 1.11111116f, 0, 1.11111116f, 1.11111116f,
                                   1.11111116f, 1.11111116f}));
  std::vector<float> y = {1.0f, 2.0f};
  TorchGenerator h(5);
  h.Dropout(y.data(), 2, 0.0);  // p == 0: unchanged, and nothing drawn
  EXPECT_EQ(y, (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(h.NextWord(), TorchGenerator(5).NextWord());
  EXPECT_THROW(h.Dropout(y.data(), 2, 1.5), std::invalid_argument);
  EXPECT_THROW(h.Randint(3, 3, 1), std::invalid_argument);
}

}  // namespace
}  // namespace attnlab
