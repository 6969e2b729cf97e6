// colormap.h: the colour scales of the heatmaps. One definition feeds both the GUI's shader
// (as a 256 x 1 lookup texture) and the CPU figure renderer, so screen and PNG agree.
//
// Sequential maps (viridis, magma, gray) are for attention weights in [0, 1]; diverging maps
// (coolwarm, rdbu) are centred on zero for signed stages (scores, logits, context). Each map is
// a short list of published anchor colours, interpolated linearly in sRGB into 256 entries.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/base/tensor.h"

namespace attnlab {

/// An 8-bit sRGB colour.
struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};

/// A colour scale: 256 entries, index 0 for the low end of the value range.
struct Colormap {
  std::string name;
  bool diverging = false;  ///< centred on zero: the middle entry is the value 0
  std::array<Rgb, 256> lut;
};

/// Every colormap, in the order the GUI lists them: viridis, magma, gray, coolwarm, rdbu.
const std::vector<Colormap>& Colormaps();

/// The colormap called `name`. Errors: std::invalid_argument listing the known names.
const Colormap& FindColormap(const std::string& name);

/// The default: viridis for sequential data, coolwarm for diverging.
const Colormap& DefaultColormap(bool diverging);

/// Masked cells are not a colormap colour: a light grey with darker diagonal stripes.
inline constexpr Rgb kMaskedLight{224, 224, 224};
inline constexpr Rgb kMaskedStripe{150, 150, 150};
/// Stripe period in pixels and stripe width, for MaskedColorAt.
inline constexpr int kMaskedPeriod = 8, kMaskedStripeWidth = 3;
/// NaN cells (softmax_naive overflow, 0/0): magenta, the colour of "something broke".
inline constexpr Rgb kNanColor{255, 0, 255};

/// The masked pattern's colour at pixel (x, y): stripes along x + y, the same on screen and in
/// figures.
Rgb MaskedColorAt(int x, int y);

/// The value range a heatmap maps onto its colormap.
struct ValueRange {
  float lo = 0.0f, hi = 1.0f;
};

/// One pass over a matrix for what its heatmap needs: the finite extremes (for the colour
/// range) and whether NaN, +-inf or negative finite values occur (legends; weights switching to
/// a diverging map). Vectorised (8 floats a step with AVX, else 4) and split into row blocks on
/// every core (parallel.h): about 1 ms for the 4M cells of a T = 2048 stage.
struct ValueScan {
  float lo = 0.0f, hi = 0.0f;  ///< finite min and max (valid when any_finite)
  bool any_finite = false;
  bool has_nan = false;
  bool has_inf = false;
  bool has_pos_inf = false;   ///< +inf among them (an overflow: the logits' -inf is the mask)
  bool has_negative = false;  ///< a finite value < 0
  /// Filled by ScanStage (heatmap_spec.h) for the weights only, else empty / +inf: each row's
  /// largest finite value (-inf for a row without one), and the smallest finite value > 0.
  std::vector<float> row_max;
  float min_positive = INFINITY;
};
ValueScan ScanValues(const Matrix& m);

/// AutoRange's rule from the finite extremes lo <= hi of some data (any_finite: whether there
/// was a finite value at all). Shared with the window, which finds the extremes faster.
ValueRange RangeFromExtremes(float lo, float hi, bool any_finite, bool diverging);

/// The range of the finite values of m: symmetric [-a, a] with a = max |v| for a diverging map
/// (a = 1 when all are 0), else [min, max] (widened to [min, min + 1] when flat).
ValueRange AutoRange(const Matrix& m, bool diverging);

/// The LUT index of v in range: 0 at lo, 255 at hi, clamped; +inf maps to 255, -inf to 0.
/// NaN is the caller's business (draw kNanColor).
int LutIndex(float v, const ValueRange& range);

}  // namespace attnlab
