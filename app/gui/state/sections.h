// sections.h: which sections of the controls a scenario needs open.
#pragma once

namespace attnlab {
struct Scenario;
}

namespace attnlab::gui {

/// True when `s` uses a setting beyond chapter 3 of the notebooks (soft-capping, a sink, a
/// softmax dtype, SDPA's scaling of q and k, a mask other than none / causal / custom, a fill or
/// masked-rows rule, positions, a dtype other than float32, a generator other than PyTorch's, or
/// any projection option): the "Modern attention" section then opens, so that what makes the
/// scenario's point shows.
bool NeedsModernAttention(const Scenario& s);

}  // namespace attnlab::gui
