// numpy_rng_test.cpp: NumpyGenerator against Debian's python3-numpy, bit for bit
// (golden/numpy_rng.json, made by tools/make_numpy_goldens.py). Tolerance: none; every float64
// is compared as its 64-bit pattern.
#include "attnlab/random/numpy_rng.h"

#include <cstring>
#include <stdexcept>

#include "test_util.h"

namespace attnlab {
namespace {

using nlohmann::json;

std::string Hex(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(u));
  return buf;
}

TEST(NumpyGenerator, EverySequenceMatchesNumpyBitForBit) {
  const json golden = test::LoadGolden("numpy_rng.json");
  ASSERT_GE(golden["sequences"].size(), 10u);
  size_t compared = 0;
  for (size_t s = 0; s < golden["sequences"].size(); ++s) {
    NumpyGenerator g;
    for (const json& call : golden["sequences"][s]) {
      const std::string fn = call["fn"];
      if (fn == "seed") {
        g.Seed(call["seed"].get<uint64_t>());
        continue;
      }
      const int64_t n = call["n"];
      const std::vector<double> got = fn == "rand" ? g.Rand(n) : g.Randn(n);
      ASSERT_EQ(got.size(), call["bits"].size());
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(Hex(got[i]), call["bits"][i].get<std::string>())
            << "sequence " << s << ", " << fn << "(" << n << ")[" << i << "] = " << got[i]
            << ", NumPy " << call["repr"][i].get<std::string>();
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 2000u);
}

TEST(NumpyGenerator, FirstDrawsAfterSeedZeroAreTheWellKnownOnes) {
  // np.random.seed(0); np.random.randn(3) -> 1.764052345967664, 0.4001572083672233,
  // 0.9787379841057392 (NumPy's documentation examples print these).
  NumpyGenerator g(0);
  const std::vector<double> v = g.Randn(3);
  EXPECT_EQ(v[0], 1.764052345967664);
  EXPECT_EQ(v[1], 0.4001572083672233);
  EXPECT_EQ(v[2], 0.9787379841057392);
}

TEST(NumpyGenerator, OddCountLeavesTheSecondGaussianCachedAndSeedDropsIt) {
  NumpyGenerator g(42);
  g.Randn(3);
  EXPECT_TRUE(g.has_gauss());
  g.Rand(2);  // uniform draws leave the cached Gaussian alone
  EXPECT_TRUE(g.has_gauss());
  g.Seed(42);
  EXPECT_FALSE(g.has_gauss());
  NumpyGenerator fresh(42);
  EXPECT_EQ(Hex(g.Gauss()), Hex(fresh.Gauss()));
}

TEST(NumpyGenerator, RefusesTheSeedsNumpyRefuses) {
  const json golden = test::LoadGolden("numpy_rng.json");
  for (const json& r : golden["refused_seeds"]) {
    ASSERT_TRUE(r["refused"].get<bool>()) << r.dump();
    const std::string seed = r["seed"];
    if (seed[0] == '-') continue;  // negative seeds are refused by the scenario reader
    EXPECT_THROW(NumpyGenerator(std::stoull(seed)), std::invalid_argument) << seed;
  }
  EXPECT_NO_THROW(NumpyGenerator{kNumpyMaxSeed});
  try {
    NumpyGenerator g(uint64_t{1} << 32);
    FAIL() << "2**32 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("2**32 - 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attnlab
