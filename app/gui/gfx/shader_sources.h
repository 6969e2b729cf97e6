// shader_sources.h: the GLSL of shaders/, embedded at build time by shaders/embed_shaders.cmake.
#pragma once

namespace attnlab::gui {

/// shaders/heatmap.vert: a quad over the whole render target, uv (0, 0) at the top-left cell.
extern const char* const kHeatmapVertexShader;
/// shaders/heatmap.frag: one stage matrix coloured by a colormap lookup texture, masked cells
/// hatched and NaN magenta, exactly as the CPU figure renderer colours them.
extern const char* const kHeatmapFragmentShader;

}  // namespace attnlab::gui
