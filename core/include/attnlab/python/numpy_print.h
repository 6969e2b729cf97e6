// numpy_print.h: float64 arrays as text, exactly as `repr(array)` (what a notebook cell shows)
// writes them in NumPy 1.24 with its default print options: precision 8, floatmode "maxprec",
// suppress False, linewidth 75, threshold 1000, edgeitems 3. Follows numpy/core/arrayprint.py
// (FloatingFormat.fillFormat and __call__, _formatArray, _extendLine): scientific notation when
// the largest magnitude is >= 1e8 or the smallest nonzero one < 1e-4 or their ratio > 1000;
// otherwise each value's shortest round-trip digits up to 8 decimals, padded on both sides to a
// common width ("1.        "); nan and inf padded likewise; "..." summaries above 1000 elements.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

namespace attnlab {

/// repr(a) for a C-contiguous float64 ndarray `a` of `shape` (1 or more dimensions, at least one
/// element) holding `values` in C order: "array([[ 1.76405235,  0.40015721],\n       [...]])".
/// With `float32`, repr of the float32 ndarray of these values (each must be a float32): the
/// shortest float32 digits ("1.7640524"), and "dtype=float32)" after the data, on a line of
/// its own (indented by len("array(")) when it would take the last line past 75 characters,
/// as numpy.core.arrayprint.array_repr does. Checked against NumPy 1.24 in
/// tests/golden/print/float32_numpy_cases.json (tools/make_print_goldens.py).
/// Errors: std::invalid_argument when the product of `shape` is not values.size(), a dimension
/// is < 1, or the shape is empty.
std::string NumpyArrayRepr(std::span<const double> values, std::span<const int64_t> shape,
                           bool float32 = false);

/// Element i (its row-major, C-order index) of an array or tensor being printed. The printers
/// call it only for the elements a print shows (at most 6 per dimension once the tensor has more
/// than 1000 elements), so a caller can print a tensor it holds in pieces (a stack of T x T
/// matrices) without first copying it into one block: `show` of a T = 11000 run would need
/// 20 bytes per element more (measured 5.8 GB instead of 1.5 GB).
using ElementAt = std::function<double(int64_t)>;

/// NumpyArrayRepr of the array whose elements `at` gives (C order, product of `shape` in all).
/// Errors: std::invalid_argument when a dimension is < 1 or the shape is empty.
std::string NumpyArrayRepr(const ElementAt& at, std::span<const int64_t> shape,
                           bool float32 = false);

/// str(a), what print(a) writes, for the array whose elements `at` gives (as NumpyArrayRepr):
/// the same numbers as the repr, with " " between them and no commas, no "array(" and no
/// dtype, the rows after the first indented by one space, the line width 75 whole:
/// "[[ 1.76405235  0.40015721]\n [ 0.97873798  2.2408932 ]]". Follows numpy's array_str
/// (array2string with separator ' ' and prefix ""). Errors as NumpyArrayRepr.
std::string NumpyArrayStr(const ElementAt& at, std::span<const int64_t> shape,
                          bool float32 = false);

/// repr(np.float64(v)), which is Python's repr(float(v)): the shortest digits that read back as
/// v, positional when the decimal exponent is in [-4, 16) ("0.9583443565030865", "8.0",
/// "0.0001"), else scientific with a two-digit exponent at least ("1e-05", "1.5e+16"); "nan",
/// "inf", "-inf". What a notebook cell shows for `q.var()` of a NumPy array.
std::string NumpyFloat64Repr(double v);

}  // namespace attnlab
