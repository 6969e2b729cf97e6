// actions.cpp: see actions.h (Emit; the actions are applied in actions/apply.cpp).
#include "gui/state/actions.h"

#include <utility>

#include "gui/state/app_state.h"

namespace attnlab::gui {

void Emit(AppState& state, Action action, std::string merge_key) {
  state.pending.push_back(PendingAction{std::move(action), std::move(merge_key)});
}

}  // namespace attnlab::gui
