// codegen_circuits.h: the PyTorch program of an induction-head run (lessons/circuits.h).
#pragma once

#include <string>

#include "attnlab/lessons/circuits.h"

namespace attnlab {

/// The PyTorch program (torch 1.13 or later, Python 3) of the run TrainCircuits(options) does:
/// the same modules built in the same order after torch.manual_seed(options.seed), the same
/// batches, the evaluation set from torch.Generator().manual_seed(seed + 1), AdamW, and at every
/// evaluation the line CircuitLine prints. Float32 training agrees with the app's to rounding,
/// which the phase change can amplify into small differences in the later lines.
/// Errors: std::invalid_argument as CheckCircuitOptions.
std::string GenerateCircuitsCode(const CircuitOptions& options);

}  // namespace attnlab
