// window_icon.cpp: see window_icon.h. PNG decoding by stb_image (its implementation is in
// Debian's libstb, so STB_IMAGE_IMPLEMENTATION is not defined here).
#include "gui/gfx/window_icon.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <stb_image.h>

namespace attnlab::gui {

void HintDesktopIdentity() {
  glfwWindowHintString(GLFW_X11_CLASS_NAME, kDesktopId);
  glfwWindowHintString(GLFW_X11_INSTANCE_NAME, kDesktopId);
#ifdef GLFW_WAYLAND_APP_ID  // GLFW 3.4
  glfwWindowHintString(GLFW_WAYLAND_APP_ID, kDesktopId);
#endif
}

void SetWindowIcon(GLFWwindow* window) {
  std::vector<GLFWimage> images;
  std::vector<unsigned char*> pixels;
  for (const EmbeddedPng& png : WindowIconPngs()) {
    int w = 0, h = 0, channels = 0;
    unsigned char* rgba =
        stbi_load_from_memory(png.data, static_cast<int>(png.size), &w, &h, &channels, 4);
    if (!rgba) continue;
    pixels.push_back(rgba);
    images.push_back(GLFWimage{w, h, rgba});
  }
  if (!images.empty()) {
    // Wayland has no client-set icons: GLFW reports that as an error, which is no problem here.
    GLFWerrorfun previous = glfwSetErrorCallback(nullptr);
    glfwSetWindowIcon(window, static_cast<int>(images.size()), images.data());
    glfwSetErrorCallback(previous);
  }
  for (unsigned char* p : pixels) stbi_image_free(p);
}

}  // namespace attnlab::gui
