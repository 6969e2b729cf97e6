// gl.h: the one place the app includes OpenGL, through the glad 2 loader generated at build
// time (glad --api gl:core=3.3). GLFW is included after it without its own GL header.
#pragma once

#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
