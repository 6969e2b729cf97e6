// python_random_test.cpp: PythonRandom against Debian's python3.11 random module, bit for bit
// (golden/python_random.json, made by tools/make_python_random_goldens.py). Tolerance: none;
// every double is compared as its 64-bit pattern, every integer exactly.
#include "attnlab/random/python_random.h"

#include <cstring>
#include <numeric>
#include <stdexcept>

#include "test_util.h"

namespace attnlab {
namespace {

using nlohmann::json;

std::string Bits(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(u));
  return buf;
}

TEST(PythonRandom, EverySeedsDrawsMatchCPythonBitForBit) {
  const json golden = test::LoadGolden("python_random.json");
  const std::vector<double> weights = golden["weights"].get<std::vector<double>>();
  ASSERT_EQ(golden["seeds"].size(), 7u);
  for (const json& s : golden["seeds"]) {
    const std::string seed = s["seed"];
    SCOPED_TRACE("seed " + seed);
    PythonRandom r;
    r.SeedKey(PythonSeedKey(seed));
    for (const json& w : s["words"]) EXPECT_EQ(r.NextWord(), w.get<uint32_t>());
    for (size_t i = 0; i < s["random"]["bits"].size(); ++i) {
      const double x = r.Random();
      EXPECT_EQ(Bits(x), s["random"]["bits"][i].get<std::string>())
          << "random() #" << i << " = " << x << ", Python " << s["random"]["repr"][i];
    }
    for (const json& kb : s["getrandbits"])
      EXPECT_EQ(std::to_string(r.GetRandBits(kb[0].get<int>())), kb[1].get<std::string>())
          << "getrandbits(" << kb[0] << ")";
    for (const json& nb : s["randbelow"])
      EXPECT_EQ(std::to_string(r.RandBelow(nb[0].get<uint64_t>())), nb[1].get<std::string>())
          << "_randbelow(" << nb[0] << ")";
    for (size_t i = 0; i < s["gauss"]["bits"].size(); ++i) {
      const double g = r.Gauss(0, 0.08);
      EXPECT_EQ(Bits(g), s["gauss"]["bits"][i].get<std::string>())
          << "gauss #" << i << " = " << g << ", Python " << s["gauss"]["repr"][i];
    }
    EXPECT_EQ(Bits(r.Random()), s["random_after_gauss"].get<std::string>());
    std::vector<int> items(50);
    std::iota(items.begin(), items.end(), 0);
    r.Shuffle(items);
    EXPECT_EQ(items, s["shuffle50"].get<std::vector<int>>());
    for (const json& c : s["choices"]) EXPECT_EQ(r.ChooseIndex(weights), c.get<int64_t>());
  }
}

TEST(PythonRandom, SeedKeysAreTheMagnitudesWords) {
  EXPECT_EQ(PythonSeedKey(int64_t{0}), (std::vector<uint32_t>{0}));
  EXPECT_EQ(PythonSeedKey(int64_t{-7}), (std::vector<uint32_t>{7}));
  EXPECT_EQ(PythonSeedKey(int64_t{1} << 32), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(PythonSeedKey(INT64_MIN), (std::vector<uint32_t>{0, 0x80000000u}));
  EXPECT_EQ(PythonSeedKey("18446744073709551621"), (std::vector<uint32_t>{5, 0, 1}));  // 2^64+5
  EXPECT_EQ(PythonSeedKey("-0042"), (std::vector<uint32_t>{42}));
  EXPECT_THROW(PythonSeedKey("4x2"), std::invalid_argument);
  EXPECT_THROW(PythonSeedKey("-"), std::invalid_argument);
  EXPECT_THROW(PythonSeedKey(""), std::invalid_argument);
}

TEST(PythonRandom, SeedDropsTheCachedGaussianAndChoicesRefusesBadWeights) {
  PythonRandom a(42), b(42);
  a.Gauss(0, 1);  // caches the sine half
  a.Seed(42);
  EXPECT_EQ(Bits(a.Gauss(0, 1)), Bits(b.Gauss(0, 1)));
  EXPECT_THROW(a.ChooseIndex({}), std::invalid_argument);
  EXPECT_THROW(a.ChooseIndex({0.0, 0.0}), std::invalid_argument);
  EXPECT_THROW(a.ChooseIndex({1.0, INFINITY}), std::invalid_argument);
  EXPECT_THROW(a.RandBelow(0), std::invalid_argument);
}

}  // namespace
}  // namespace attnlab
