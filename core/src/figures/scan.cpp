// scan.cpp: ScanValues (colormap.h) and ScanStage (heatmap_spec.h). GCC/Clang vector
// extensions: 8 floats per step where AVX is on, else 4 (SSE2 on every x86-64, NEON on ARM64);
// the tail runs one value at a time. A matrix is scanned in row blocks on every core
// (parallel.h); minima, maxima and flags do not depend on the order they are merged in.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "attnlab/base/parallel.h"
#include "attnlab/figures/colormap.h"
#include "attnlab/figures/heatmap_spec.h"

namespace attnlab {
namespace {

#ifdef __AVX__
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;
#endif
typedef float Floats __attribute__((vector_size(kLanes * 4)));
typedef int Ints __attribute__((vector_size(kLanes * 4)));

/// ScanValues of n contiguous floats.
ValueScan ScanFloats(const float* d, int64_t n) {
  Floats lo, hi, infinity;
  Ints nan = {}, inf = {}, pinf = {}, neg = {}, abs_mask;
  for (int i = 0; i < kLanes; ++i) {
    lo[i] = infinity[i] = INFINITY;
    hi[i] = -INFINITY;
    abs_mask[i] = 0x7fffffff;  // clears the sign bit: |v|
  }
  const Floats zero = {};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    Floats v, a;
    std::memcpy(&v, d + k, sizeof v);
    Ints bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits &= abs_mask;
    std::memcpy(&a, &bits, sizeof a);
    const Ints is_nan = v != v;
    const Ints is_inf = a == infinity;
    const Ints bad = is_nan | is_inf;
    lo = bad ? lo : (v < lo ? v : lo);
    hi = bad ? hi : (v > hi ? v : hi);
    nan |= is_nan;
    inf |= is_inf;
    pinf |= v == infinity;
    neg |= (v < zero) & ~bad;
  }
  ValueScan s;
  float l = INFINITY, h = -INFINITY;
  for (int i = 0; i < kLanes; ++i) {
    l = std::min(l, lo[i]);
    h = std::max(h, hi[i]);
    s.has_nan |= nan[i] != 0;
    s.has_inf |= inf[i] != 0;
    s.has_pos_inf |= pinf[i] != 0;
    s.has_negative |= neg[i] != 0;
  }
  for (; k < n; ++k) {
    const float v = d[k];
    if (std::isnan(v)) {
      s.has_nan = true;
    } else if (std::isinf(v)) {
      s.has_inf = true;
      s.has_pos_inf |= v > 0;
    } else {
      l = std::min(l, v);
      h = std::max(h, v);
      s.has_negative |= v < 0;
    }
  }
  s.any_finite = l <= h;
  if (s.any_finite) s.lo = l, s.hi = h;
  return s;
}

/// Folds the scan of another part of the same matrix into s (row_max is concatenated).
void Merge(ValueScan& s, const ValueScan& part) {
  if (part.any_finite) {
    s.lo = s.any_finite ? std::min(s.lo, part.lo) : part.lo;
    s.hi = s.any_finite ? std::max(s.hi, part.hi) : part.hi;
    s.any_finite = true;
  }
  s.has_nan |= part.has_nan;
  s.has_inf |= part.has_inf;
  s.has_pos_inf |= part.has_pos_inf;
  s.has_negative |= part.has_negative;
  s.row_max.insert(s.row_max.end(), part.row_max.begin(), part.row_max.end());
  s.min_positive = std::min(s.min_positive, part.min_positive);
}

/// Rows [r0, r0 + rows) of m: their ScanValues, and with `per_row` each row's largest finite
/// value and the smallest finite value > 0.
ValueScan ScanRows(const Matrix& m, int64_t r0, int64_t rows, bool per_row) {
  ValueScan s = ScanFloats(m.data() + r0 * m.cols(), rows * m.cols());
  if (!per_row) return s;
  s.row_max.assign(static_cast<size_t>(rows), -INFINITY);
  if (!s.has_nan && !s.has_inf && m.cols() > 0) {
    // Every value finite: Eigen's vectorised reductions.
    for (int64_t i = 0; i < rows; ++i) {
      const auto row = m.row(r0 + i).array();
      s.row_max[static_cast<size_t>(i)] = row.maxCoeff();
      s.min_positive = std::min(s.min_positive, (row > 0.0f).select(row, INFINITY).minCoeff());
    }
    return s;
  }
  for (int64_t i = 0; i < rows; ++i) {
    float top = -INFINITY;
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      const float v = m(r0 + i, j);
      if (!std::isfinite(v)) continue;
      top = std::max(top, v);
      if (v > 0) s.min_positive = std::min(s.min_positive, v);
    }
    s.row_max[static_cast<size_t>(i)] = top;
  }
  return s;
}

/// The scan of m, row block by row block on every core, merged in row order.
ValueScan ScanMatrix(const Matrix& m, bool per_row) {
  const int64_t rows = m.rows(), block = RowBlock(rows);
  const int64_t blocks = rows == 0 ? 0 : (rows + block - 1) / block;
  std::vector<ValueScan> parts(static_cast<size_t>(blocks));
  ParallelFor(blocks, [&](int64_t b) {
    const int64_t r0 = b * block;
    parts[static_cast<size_t>(b)] = ScanRows(m, r0, std::min(block, rows - r0), per_row);
  });
  ValueScan s;
  if (per_row) s.row_max.reserve(static_cast<size_t>(rows));
  for (const ValueScan& part : parts) Merge(s, part);
  return s;
}

}  // namespace

ValueScan ScanValues(const Matrix& m) { return ScanMatrix(m, false); }

ValueScan ScanStage(Stage stage, const Matrix& m) {
  // The weights (the stages RangeMode applies to) also get each row's largest value.
  return ScanMatrix(m, StageIsWeights(stage));
}

}  // namespace attnlab
