// window_icon.h: the window's identity on the desktop. Its X11 class and instance (WM_CLASS) are
// `attention-lab`, the desktop entry's name and StartupWMClass, so docks and Alt-Tab group the
// window with its launcher; its icon is the desktop entry's (packaging/attention-lab.svg),
// rendered to PNG at build time by rsvg-convert and embedded (cmake/EmbedIcon.cmake).
#pragma once

#include <cstddef>
#include <vector>

struct GLFWwindow;

namespace attnlab::gui {

/// The desktop entry's id: the WM_CLASS class and instance, the Wayland app id.
inline constexpr const char* kDesktopId = "attention-lab";

/// One embedded PNG file: its bytes.
struct EmbeddedPng {
  const unsigned char* data;
  size_t size;
};

/// The icon's PNG renderings, small to large (generated); empty when the build had no
/// rsvg-convert (librsvg2-bin).
const std::vector<EmbeddedPng>& WindowIconPngs();

/// Window hints giving the next glfwCreateWindow the class, instance and app id kDesktopId.
/// Call after glfwInit, before glfwCreateWindow.
void HintDesktopIdentity();

/// Sets the window's icon from WindowIconPngs (decoded by stb_image to RGBA). Does nothing
/// without embedded PNGs or where the platform has no window icons (Wayland); a PNG that does
/// not decode is skipped. Never fails.
void SetWindowIcon(GLFWwindow* window);

}  // namespace attnlab::gui
