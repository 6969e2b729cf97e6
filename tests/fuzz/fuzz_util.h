// fuzz_util.h: what the fuzz targets share: a scenario from fuzzer bytes, kept small enough
// that one input runs in milliseconds (the point is hostile structure, not size).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "attnlab/model/scenario.h"

namespace attnlab::fuzz {

/// Stops the fuzzer with a message: an invariant the documentation promises does not hold.
[[noreturn]] inline void Violated(const char* what) {
  std::fprintf(stderr, "invariant violated: %s\n", what);
  std::abort();
}

/// The scenario in `text` when it parses, validates and is small (at most 48 tokens, 64
/// dimensions, 1 MiB of stages); nullopt otherwise. ScenarioError is the documented way to
/// refuse input; any other exception escapes and is a finding.
inline std::optional<Scenario> SmallScenario(const std::string& text) {
  Scenario s;
  Shape shape;
  try {
    s = ParseScenario(text);
    shape = ValidateScenario(s);
  } catch (const ScenarioError&) {
    return std::nullopt;
  }
  if (shape.T > 48 || shape.d_in > 64 || shape.d_out > 64 || shape.d_v > 64 || shape.B > 4 ||
      shape.H > 8)
    return std::nullopt;
  if (EstimateStageBytes(shape, s.dropout.p > 0, s.input.source == InputSource::kText) > (1 << 20))
    return std::nullopt;
  return s;
}

}  // namespace attnlab::fuzz
