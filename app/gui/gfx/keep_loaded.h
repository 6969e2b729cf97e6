// keep_loaded.h: keeps the shared objects that the window's set-up loaded (the OpenGL driver,
// Mesa's swrast_dri.so and its LLVM among them) mapped until the process exits.
//
// Why: glfwTerminate closes libGL, which dlcloses the driver. Mesa keeps some blocks for the
// whole process in the driver's globals (util_cpu_detect's L3-cache mask, 128 bytes); once the
// driver is unmapped, those blocks have no pointer left and no symbol, and LeakSanitizer reports
// them as leaks of "<unknown module>" that no suppression can name (issue 23). Kept mapped, the
// driver's globals are scanned like every other library's and nothing is reported, while a leak
// of ours still is (tools/sanitize.sh checks that a deliberate one fails the step).
#pragma once

namespace attnlab::gui {

/// Marks every shared object loaded now as never to be unloaded (dlopen with RTLD_NOLOAD |
/// RTLD_NODELETE on each, from dl_iterate_phdr): a later dlclose leaves it mapped until exit.
/// Call after the GL context is made current (the driver is loaded then). Costs a few
/// microseconds per library; never fails (an object that cannot be pinned is left as it is).
void KeepLoadedLibrariesMapped();

}  // namespace attnlab::gui
