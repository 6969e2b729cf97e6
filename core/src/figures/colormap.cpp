// colormap.cpp: see colormap.h. Anchor colours are the published palettes: viridis and magma
// (matplotlib's perceptually uniform maps, 10 evenly spaced samples), coolwarm (Moreland's
// diverging map, 9 samples) and ColorBrewer's RdBu (11 classes, blue for negative).
#include "attnlab/figures/colormap.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace attnlab {
namespace {

Colormap Build(const std::string& name, bool diverging, const std::vector<uint32_t>& anchors) {
  Colormap cm;
  cm.name = name;
  cm.diverging = diverging;
  const int n = static_cast<int>(anchors.size());
  for (int i = 0; i < 256; ++i) {
    const double t = i / 255.0 * (n - 1);
    const int k = std::min(static_cast<int>(t), n - 2);
    const double f = t - k;
    auto channel = [&](int shift) {
      const double a = (anchors[k] >> shift) & 0xFF, b = (anchors[k + 1] >> shift) & 0xFF;
      return static_cast<uint8_t>(std::lround(a + (b - a) * f));
    };
    cm.lut[i] = Rgb{channel(16), channel(8), channel(0)};
  }
  return cm;
}

}  // namespace

const std::vector<Colormap>& Colormaps() {
  static const std::vector<Colormap> maps = {
      Build("viridis", false,
            {0x440154, 0x482878, 0x3e4989, 0x31688e, 0x26828e, 0x1f9e89, 0x35b779, 0x6ece58,
             0xb5de2b, 0xfde725}),
      Build("magma", false,
            {0x000004, 0x180f3d, 0x440f76, 0x721f81, 0x9e2f7f, 0xcd4071, 0xf1605d, 0xfd9668,
             0xfeca8d, 0xfcfdbf}),
      Build("gray", false, {0x000000, 0xffffff}),
      Build("coolwarm", true,
            {0x3b4cc0, 0x6282ea, 0x8db0fe, 0xb8d0f9, 0xdddddd, 0xf5c4ad, 0xf49a7b, 0xde604d,
             0xb40426}),
      Build("rdbu", true,
            {0x053061, 0x2166ac, 0x4393c3, 0x92c5de, 0xd1e5f0, 0xf7f7f7, 0xfddbc7, 0xf4a582,
             0xd6604d, 0xb2182b, 0x67001f}),
  };
  return maps;
}

const Colormap& FindColormap(const std::string& name) {
  std::string known;
  for (const Colormap& c : Colormaps()) {
    if (c.name == name) return c;
    known += (known.empty() ? "" : ", ") + c.name;
  }
  throw std::invalid_argument("unknown colormap \"" + name + "\" (known: " + known + ")");
}

const Colormap& DefaultColormap(bool diverging) {
  return FindColormap(diverging ? "coolwarm" : "viridis");
}

Rgb MaskedColorAt(int x, int y) {
  return ((x + y) % kMaskedPeriod + kMaskedPeriod) % kMaskedPeriod < kMaskedStripeWidth
             ? kMaskedStripe
             : kMaskedLight;
}

ValueRange RangeFromExtremes(float lo, float hi, bool any_finite, bool diverging) {
  if (!any_finite) return diverging ? ValueRange{-1, 1} : ValueRange{0, 1};
  if (diverging) {
    const float a = std::max(std::fabs(lo), std::fabs(hi));
    return a > 0 ? ValueRange{-a, a} : ValueRange{-1, 1};
  }
  return hi > lo ? ValueRange{lo, hi} : ValueRange{lo, lo + 1};
}

ValueRange AutoRange(const Matrix& m, bool diverging) {
  const ValueScan e = ScanValues(m);
  return RangeFromExtremes(e.lo, e.hi, e.any_finite, diverging);
}

int LutIndex(float v, const ValueRange& r) {
  if (v == INFINITY) return 255;
  if (v == -INFINITY) return 0;
  const double t = (static_cast<double>(v) - r.lo) / (static_cast<double>(r.hi) - r.lo);
  return static_cast<int>(std::lround(std::clamp(t, 0.0, 1.0) * 255.0));
}

}  // namespace attnlab
