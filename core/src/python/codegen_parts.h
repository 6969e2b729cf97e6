// codegen_parts.h: pieces of the scenario program (codegen.cpp) that the loop programs
// (codegen_loops.cpp) write too, so that each rule is written by one function. Internal to
// attnlab_python.
#pragma once

#include <string>

#include "attnlab/model/scenario.h"

namespace attnlab::codegen_parts {

/// A Python float literal: the shortest text that reads back as the same double ("0.5",
/// "float('inf')"). Errors: none.
std::string PythonFloat(double v);

/// Python lines (PyTorch, or NumPy when `numpy`) that leave `allowed_full`, the T x T booleans
/// of the cells the scenario's mask allows (AllowedCells: query i may see key j), built as the
/// scenario program builds its mask (positions i, j and the mask's expression); T from `sh`.
/// Errors: none.
std::string AllowedCellsLines(const Scenario& s, const Shape& sh, bool numpy);

/// `layer(x)` as the scenario program applies an nn.Linear: `layer(x)`, or with `low`
/// (bfloat16 / float16) `linear(layer, x)`, the program's function that stores x @ W and then
/// + bias in the dtype (two operations, as the engine). Errors: none.
std::string LinearCall(bool low, const std::string& layer, const std::string& x);

}  // namespace attnlab::codegen_parts
