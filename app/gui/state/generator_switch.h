// generator_switch.h: switching a scenario between PyTorch's and NumPy's generator (the Input
// panel's "generator" and the script command `generator torch|numpy`).
#pragma once

#include <functional>

#include "attnlab/model/pipeline.h"
#include "attnlab/model/scenario.h"

namespace attnlab::gui {

/// The edit that makes a scenario draw from `to` (input.generator). To "torch" nothing else
/// changes. To "numpy", what NumPy has no counterpart for is replaced by the numbers `shown`
/// (the stages on screen) hold, so the switch keeps them where it can: text input (nn.Embedding)
/// becomes matrix input with the same X and tokens; init "linear" (nn.Linear) becomes init
/// "matrix" with the same W_query, W_key, W_value (its bias and out_proj are dropped); dropout
/// p becomes 0 (nn.Dropout); seeds are cut to np.random.seed's 32 bits; the dtype stays (a
/// bfloat16 / float16 NumPy program stores every stage as the PyTorch one does).
std::function<void(Scenario&)> SwitchGenerator(const Stages& shown, Generator to);

}  // namespace attnlab::gui
