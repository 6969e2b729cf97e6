// control_count.cpp: see control_count.h.
#include "gui/widgets/control_count.h"

#include <imgui.h>
#include <imgui_internal.h>  // ImRect, the type of ItemHoverable's first parameter

#include <unordered_set>

namespace attnlab::gui {
namespace {

/// The ids counted this frame (the wrapper below adds to them).
std::unordered_set<ImGuiID>& CountedControls() {
  static std::unordered_set<ImGuiID> ids;
  return ids;
}

}  // namespace

void BeginControlCount() { CountedControls().clear(); }

int ControlCount() { return static_cast<int>(CountedControls().size()); }

}  // namespace attnlab::gui

// ImGui::ItemHoverable(const ImRect&, ImGuiID), as the linker's --wrap names it: calls from
// ImGui's widgets come here, and go on to ImGui's own function (__real_).
extern "C" bool __real__ZN5ImGui13ItemHoverableERK6ImRectj(const ImRect& bb, ImGuiID id);
extern "C" bool __wrap__ZN5ImGui13ItemHoverableERK6ImRectj(const ImRect& bb, ImGuiID id);
extern "C" bool __wrap__ZN5ImGui13ItemHoverableERK6ImRectj(const ImRect& bb, ImGuiID id) {
  if (id != 0) attnlab::gui::CountedControls().insert(id);
  return __real__ZN5ImGui13ItemHoverableERK6ImRectj(bb, id);
}
