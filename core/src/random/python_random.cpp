// python_random.cpp: CPython's random.Random (see python_random.h).
#include "attnlab/random/python_random.h"

#include <cmath>
#include <numbers>
#include <stdexcept>

namespace attnlab {

std::vector<uint32_t> PythonSeedKey(int64_t value) {
  // |value| without overflow at INT64_MIN: negate in unsigned arithmetic.
  uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  std::vector<uint32_t> key{static_cast<uint32_t>(magnitude)};
  if (magnitude >> 32) key.push_back(static_cast<uint32_t>(magnitude >> 32));
  return key;
}

std::vector<uint32_t> PythonSeedKey(const std::string& decimal) {
  size_t start = (!decimal.empty() && (decimal[0] == '-' || decimal[0] == '+')) ? 1 : 0;
  if (start == decimal.size())
    throw std::invalid_argument("seed '" + decimal + "' is not an integer");
  // The magnitude as 32-bit words (least significant first), multiplied by 10 and added to
  // digit by digit: schoolbook base conversion, fine for the few digits of a seed.
  std::vector<uint32_t> words{0};
  for (size_t i = start; i < decimal.size(); ++i) {
    const char c = decimal[i];
    if (c < '0' || c > '9') throw std::invalid_argument("seed '" + decimal + "' is not an integer");
    uint64_t carry = static_cast<uint64_t>(c - '0');
    for (uint32_t& w : words) {
      const uint64_t t = uint64_t(w) * 10 + carry;
      w = static_cast<uint32_t>(t);
      carry = t >> 32;
    }
    if (carry) words.push_back(static_cast<uint32_t>(carry));
  }
  while (words.size() > 1 && words.back() == 0) words.pop_back();
  return words;
}

void PythonRandom::SeedKey(const std::vector<uint32_t>& key) {
  if (key.empty()) throw std::invalid_argument("PythonRandom::SeedKey needs at least one word");
  mt_.SeedByArray(key.data(), static_cast<int64_t>(key.size()));
  has_gauss_next_ = false;  // Random.seed sets gauss_next = None
}

double PythonRandom::Random() {
  // _random_Random_random_impl (genrand_res53): 27 + 26 bits over 2^53.
  const uint32_t a = mt_() >> 5, b = mt_() >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

uint64_t PythonRandom::GetRandBits(int k) {
  if (k < 0 || k > 64) throw std::invalid_argument("getrandbits: k must be in 0..64");
  if (k == 0) return 0;
  if (k <= 32) return mt_() >> (32 - k);
  // _random_Random_getrandbits_impl: words least significant first; the last keeps k - 32 bits.
  const uint64_t low = mt_();
  const uint64_t high = mt_() >> (64 - k);
  return low | (high << 32);
}

uint64_t PythonRandom::RandBelow(uint64_t n) {
  if (n < 1) throw std::invalid_argument("_randbelow: n must be at least 1");
  const int k = 64 - __builtin_clzll(n);  // n.bit_length()
  uint64_t r = GetRandBits(k);
  while (r >= n) r = GetRandBits(k);
  return r;
}

double PythonRandom::Gauss(double mu, double sigma) {
  double z;
  if (has_gauss_next_) {
    z = gauss_next_;
    has_gauss_next_ = false;
  } else {
    const double x2pi = Random() * (2.0 * std::numbers::pi);  // math.tau
    const double g2rad = std::sqrt(-2.0 * std::log(1.0 - Random()));
    // sin and cos of the same angle, each the C library's own call as Python's math module
    // makes them: the empty asm keeps the compiler from fusing them into one sincos call.
    double x2pi_for_sin = x2pi;
    __asm__("" : "+x"(x2pi_for_sin));
    z = std::cos(x2pi) * g2rad;
    gauss_next_ = std::sin(x2pi_for_sin) * g2rad;
    has_gauss_next_ = true;
  }
  return mu + z * sigma;
}

int64_t PythonRandom::ChooseIndex(const std::vector<double>& weights) {
  const size_t n = weights.size();
  if (n == 0) throw std::invalid_argument("choices: the population is empty");
  std::vector<double> cum(n);  // itertools.accumulate
  double acc = weights[0];
  cum[0] = acc;
  for (size_t i = 1; i < n; ++i) cum[i] = acc = acc + weights[i];
  const double total = cum[n - 1] + 0.0;
  if (total <= 0.0) throw std::invalid_argument("Total of weights must be greater than zero");
  if (!std::isfinite(total)) throw std::invalid_argument("Total of weights must be finite");
  const double x = Random() * total;
  size_t lo = 0, hi = n - 1;  // bisect_right(cum, x, 0, n - 1)
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (x < cum[mid])
      hi = mid;
    else
      lo = mid + 1;
  }
  return static_cast<int64_t>(lo);
}

}  // namespace attnlab
