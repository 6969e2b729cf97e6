// json_matrix.h (internal to the core): the one float32 -> JSON writer, shared by the scenario
// writer (scenario.cpp) and the stages dump (stages_json.cpp), so a saved scenario reads as
// the presets do ("0.43", not 0.4300000071525574) and reads back bit for bit.
#pragma once

#include <nlohmann/json.hpp>

#include "attnlab/base/tensor.h"

namespace attnlab::detail {

/// v as a JSON value: the double that ShortestFloat(v) (text.h) denotes, which nlohmann's dump
/// writes as that same shortest text and which rounds back to exactly v in float32; the
/// strings "nan", "inf", "-inf" for non-finite values (the spec's convention for stages).
nlohmann::json FloatJson(float v);

/// A rows x cols matrix as an array of rows of FloatJson values.
nlohmann::json MatrixJson(const Matrix& m);

}  // namespace attnlab::detail
