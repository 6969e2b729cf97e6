// mt19937_test.cpp: our Mersenne Twister against the standard library's std::mt19937 (the
// reference generator the C++ standard specifies: its 10000th word from the default seed is
// 4123659995), word for word, through the scalar path and batches of every length around the
// 624-word refill. Run again at every instruction-set level (goldens_at_<level> in CMakeLists).
#include "attnlab/random/mt19937.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace attnlab {
namespace {

TEST(Mt19937, TenThousandthWordOfTheDefaultSeedIsTheStandards) {
  Mt19937 scalar, batch;
  for (int i = 0; i < 9999; ++i) scalar();
  EXPECT_EQ(scalar(), 4123659995u);  // [rand.predef]: std::mt19937's required value
  std::vector<uint32_t> words(10000);
  batch.Words(words.data(), 10000);
  EXPECT_EQ(words.back(), 4123659995u);
}

TEST(Mt19937, WordsAreStdMt19937sInAnyMixOfSingleWordsAndBatches) {
  // Batches that end before, at and after a refill, of one word, of a whole state and of
  // several, mixed with single words, for seeds at both ends of the 32-bit range.
  const int64_t lengths[] = {1,   2,   15,  16,   17,   227,  396,  397,  398,
                             623, 624, 625, 1247, 1248, 1249, 5000, 65536};
  for (uint32_t seed : {0u, 1u, 5489u, 123u, 0x7FFFFFFFu, 0xFFFFFFFFu}) {
    std::mt19937 reference(seed);
    Mt19937 ours(seed);
    int64_t drawn = 0;
    for (int64_t n : lengths) {
      std::vector<uint32_t> batch(static_cast<size_t>(n) + 1, 0xDEADBEEFu);
      ours.Words(batch.data(), n);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(batch[i], static_cast<uint32_t>(reference()))
            << "seed " << seed << ", word " << drawn + i << " (a batch of " << n << ")";
      EXPECT_EQ(batch[n], 0xDEADBEEFu) << "a batch of " << n << " wrote past its end";
      drawn += n;
      const uint32_t single = ours();
      ASSERT_EQ(single, static_cast<uint32_t>(reference()))
          << "seed " << seed << ", word " << drawn;
      ++drawn;
    }
  }
}

TEST(Mt19937, ReseedingAndCopiesRestartTheSameStream) {
  Mt19937 g(42);
  std::vector<uint32_t> first(700), again(700), copied(700);
  g.Words(first.data(), 700);
  Mt19937 copy = g;  // mid-state: the copy continues where g is
  g.Seed(42);
  g.Words(again.data(), 700);
  EXPECT_EQ(first, again);
  std::mt19937 reference(42);
  reference.discard(700);
  copy.Words(copied.data(), 700);
  for (uint32_t w : copied) ASSERT_EQ(w, static_cast<uint32_t>(reference()));
  g.Words(nullptr, 0);  // nothing drawn
  EXPECT_EQ(g(), copied[0]);
}

TEST(Mt19937, DiscardStepsAsStdMt19937sDiscard) {
  // Steps that end before, at and after a refill, from the middle of a state and from its end,
  // then words drawn: the words std::mt19937 gives after the same discards.
  const int64_t steps[] = {0, 1, 226, 227, 623, 624, 625, 1247, 1248, 16384, 65536, -5};
  for (uint32_t seed : {0u, 123u, 0xFFFFFFFFu}) {
    std::mt19937 reference(seed);
    Mt19937 ours(seed);
    for (int64_t n : steps) {
      ours.Discard(n);
      if (n > 0) reference.discard(static_cast<unsigned long long>(n));
      uint32_t words[3];
      ours.Words(words, 3);
      for (uint32_t w : words)
        ASSERT_EQ(w, static_cast<uint32_t>(reference())) << "seed " << seed << ", after " << n;
    }
  }
}

}  // namespace
}  // namespace attnlab
