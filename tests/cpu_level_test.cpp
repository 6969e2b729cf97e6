// Tests of cpu_level.h: which instruction-set level the kernels run at. The goldens are run at
// every level by the goldens_at_<level> entries of tests/CMakeLists.txt (this binary again,
// ATTNLAB_CPU_CAPABILITY set), whose first check is the one here.
#include "attnlab/base/cpu_level.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace attnlab {
namespace {

TEST(CpuLevel, NamesAreThoseOfTheEnvironmentVariable) {
  EXPECT_STREQ(Name(CpuLevel::kBaseline), "default");
  EXPECT_STREQ(Name(CpuLevel::kAvx2), "avx2");
  EXPECT_STREQ(Name(CpuLevel::kAvx512), "avx512");
  EXPECT_EQ(ParseName<CpuLevel>("avx512"), CpuLevel::kAvx512);
}

TEST(CpuLevel, BaselineIsAlwaysAvailableAndTheBestIsTheHighest) {
  EXPECT_TRUE(CpuLevelAvailable(CpuLevel::kBaseline));
  const CpuLevel best = BestCpuLevel();
  EXPECT_TRUE(CpuLevelAvailable(best));
  for (CpuLevel l : {CpuLevel::kAvx2, CpuLevel::kAvx512}) {
    if (static_cast<int>(l) > static_cast<int>(best)) {
      EXPECT_FALSE(CpuLevelAvailable(l));
    }
  }
  // AVX-512 implies AVX2 here (the AVX-512 kernels are compiled with -mavx2 -mfma too).
  if (CpuLevelAvailable(CpuLevel::kAvx512)) {
    EXPECT_TRUE(CpuLevelAvailable(CpuLevel::kAvx2));
  }
}

// The level ATTNLAB_CPU_CAPABILITY asks for is the one the engine runs at, when the CPU has it.
TEST(CpuLevel, TheRequestedLevelIsActive) {
  const char* env = std::getenv("ATTNLAB_CPU_CAPABILITY");
  const std::string asked = env ? env : "";
  if (asked.empty()) {
    EXPECT_EQ(ActiveCpuLevel(), BestCpuLevel());
    return;
  }
  CpuLevel level = CpuLevel::kBaseline;
  if (asked == "avx2") level = CpuLevel::kAvx2;
  if (asked == "avx512") level = CpuLevel::kAvx512;
  if (!CpuLevelAvailable(level)) GTEST_SKIP() << "this CPU or build lacks " << asked;
  EXPECT_EQ(ActiveCpuLevel(), level);
}

}  // namespace
}  // namespace attnlab
