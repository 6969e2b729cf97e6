// screenshot.h: the window's pixels as a PNG (for --screenshot and the GUI tests).
#pragma once

#include <string>

namespace attnlab::gui {

/// Reads the current framebuffer's back buffer (width x height, after rendering, before the
/// swap) and encodes it as PNG bytes, rows top to bottom. Needs a current GL context.
std::string ReadFramebufferPng(int width, int height);

}  // namespace attnlab::gui
