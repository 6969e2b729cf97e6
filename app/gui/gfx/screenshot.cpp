// screenshot.cpp: see screenshot.h. PNG encoding by stb_image_write (its implementation is in
// Debian's libstb, so STB_IMAGE_WRITE_IMPLEMENTATION is not defined here).
#include "gui/gfx/screenshot.h"

#include <stb_image_write.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "gui/gfx/gl.h"

namespace attnlab::gui {

std::string ReadFramebufferPng(int width, int height) {
  std::vector<uint8_t> pixels(static_cast<size_t>(width) * height * 3);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, pixels.data());
  // GL's rows go bottom to top; PNG's top to bottom.
  const size_t stride = static_cast<size_t>(width) * 3;
  std::vector<uint8_t> flipped(pixels.size());
  for (int y = 0; y < height; ++y)
    std::memcpy(&flipped[y * stride], &pixels[(height - 1 - y) * stride], stride);
  std::string png;
  stbi_write_png_to_func(
      [](void* context, void* data, int size) {
        static_cast<std::string*>(context)->append(static_cast<const char*>(data), size);
      },
      &png, width, height, 3, flipped.data(), static_cast<int>(stride));
  return png;
}

}  // namespace attnlab::gui
