// colormap_test.cpp: the lookup tables shared by the shader and the figures.
#include "attnlab/figures/colormap.h"

#include <gtest/gtest.h>

namespace attnlab {
namespace {

TEST(Colormap, EndsAreThePublishedAnchors) {
  const Colormap& v = FindColormap("viridis");
  EXPECT_EQ(v.lut[0], (Rgb{0x44, 0x01, 0x54}));
  EXPECT_EQ(v.lut[255], (Rgb{0xfd, 0xe7, 0x25}));
  EXPECT_FALSE(v.diverging);
  const Colormap& c = FindColormap("coolwarm");
  EXPECT_TRUE(c.diverging);
  EXPECT_EQ(c.lut[0], (Rgb{0x3b, 0x4c, 0xc0}));    // blue for negative
  EXPECT_EQ(c.lut[255], (Rgb{0xb4, 0x04, 0x26}));  // red for positive
  // The middle of a diverging map (value 0) is a near-neutral grey.
  const Rgb mid = c.lut[128];
  EXPECT_LT(std::abs(int(mid.r) - int(mid.b)), 12);
  EXPECT_EQ(&DefaultColormap(false), &v);
  EXPECT_EQ(&DefaultColormap(true), &c);
}

TEST(Colormap, UnknownNameListsTheKnownOnes) {
  try {
    FindColormap("jet");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown colormap \"jet\" (known: viridis, magma, gray, coolwarm, rdbu)");
  }
}

TEST(Colormap, RangesAndIndices) {
  Matrix m(1, 3);
  m << -2.0f, 0.5f, -INFINITY;
  const ValueRange d = AutoRange(m, true);
  EXPECT_EQ(d.lo, -2.0f);
  EXPECT_EQ(d.hi, 2.0f);
  const ValueRange s = AutoRange(m, false);
  EXPECT_EQ(s.lo, -2.0f);
  EXPECT_EQ(s.hi, 0.5f);
  EXPECT_EQ(LutIndex(0.0f, d), 128);  // zero sits in the middle of a diverging map
  EXPECT_EQ(LutIndex(5.0f, d), 255);  // clamped
  EXPECT_EQ(LutIndex(-INFINITY, d), 0);
  EXPECT_EQ(LutIndex(INFINITY, d), 255);
}

TEST(Colormap, MaskedHatchIsNotAColormapColour) {
  int stripes = 0;
  for (int x = 0; x < kMaskedPeriod; ++x) stripes += MaskedColorAt(x, 0) == kMaskedStripe;
  EXPECT_EQ(stripes, kMaskedStripeWidth);
  EXPECT_EQ(MaskedColorAt(3, 5), MaskedColorAt(5, 3));  // diagonal stripes
  for (const Colormap& c : Colormaps())
    for (const Rgb& rgb : c.lut) EXPECT_FALSE(rgb == kMaskedStripe && c.name != "gray") << c.name;
}

}  // namespace
}  // namespace attnlab
