// torch_sum.h: PyTorch's float32 sum over a row, in its order of additions. Sums of finite
// numbers that overflow (3e38 + 3e38 = inf) or cancel (3e38 - 3e38 = 0) before the end depend on
// that order, and so do the roundings of every other sum: reproducing it makes a row's sum (the
// "sum" normalization's z / sum(z), the naive softmax's exp(z) / sum(exp(z))) PyTorch's to the
// bit, inf and nan included.
#pragma once

#include <cstdint>

namespace attnlab::detail {

/// x.sum(dim=-1) of one contiguous float32 row of n entries, of which the first `len` are
/// x[0..len) and the rest 0 (the masked tail of a causal row), added in the order of ATen 1.13's
/// cascade_sum on a CPU whose kernels use 8-lane float vectors (its AVX2 and default builds,
/// which Debian's torch uses even on AVX-512 machines): lane k of 8 sums the entries
/// k, k + 8, k + 16, ... with 4 interleaved partial sums and a cascade of 4 levels, the
/// entries after the last whole vector are summed left to right, then the 8 lanes are added to
/// that left to right; rows shorter than 8 take the scalar path (4 interleaved sums). The result
/// is added to +0, as the output starts at 0 (so a sum of -0 entries is +0).
/// Units: those of x. Errors: none (inf and nan propagate as in PyTorch).
float TorchRowSum(const float* x, int64_t len, int64_t n);

}  // namespace attnlab::detail
