// numpy_rng.cpp: NumPy's legacy global generator (see numpy_rng.h for the algorithm).
#include "attnlab/random/numpy_rng.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace attnlab {

NumpyGenerator::NumpyGenerator(uint64_t seed) { Seed(seed); }

void NumpyGenerator::Seed(uint64_t seed) {
  if (seed > kNumpyMaxSeed)
    throw std::invalid_argument("np.random.seed takes 0 .. 2**32 - 1, got " + std::to_string(seed));
  engine_.Seed(static_cast<uint32_t>(seed));
  has_gauss_ = false;
  gauss_ = 0.0;
}

uint32_t NumpyGenerator::NextWord() { return engine_(); }

double NumpyGenerator::RandomSample() {
  const uint32_t a = NextWord() >> 5;  // 27 high bits
  const uint32_t b = NextWord() >> 6;  // 26 high bits
  return (static_cast<double>(a) * 67108864.0 + static_cast<double>(b)) / 9007199254740992.0;
}

double NumpyGenerator::Gauss() {
  if (has_gauss_) {
    has_gauss_ = false;
    const double cached = gauss_;
    gauss_ = 0.0;
    return cached;
  }
  double u, v, r2;
  do {
    u = 2.0 * RandomSample() - 1.0;
    v = 2.0 * RandomSample() - 1.0;
    r2 = u * u + v * v;
  } while (r2 >= 1.0 || r2 == 0.0);
  const double f = std::sqrt(-2.0 * std::log(r2) / r2);
  gauss_ = f * u;
  has_gauss_ = true;
  return f * v;
}

std::vector<double> NumpyGenerator::Rand(int64_t n) {
  std::vector<double> out(static_cast<size_t>(n > 0 ? n : 0));
  for (double& x : out) x = RandomSample();
  return out;
}

std::vector<double> NumpyGenerator::Randn(int64_t n) {
  std::vector<double> out(static_cast<size_t>(n > 0 ? n : 0));
  for (double& x : out) x = Gauss();
  return out;
}

}  // namespace attnlab
