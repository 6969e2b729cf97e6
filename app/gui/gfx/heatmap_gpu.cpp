// heatmap_gpu.cpp: see heatmap_gpu.h.
#include "gui/gfx/heatmap_gpu.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "gui/gfx/gl.h"
#include "gui/gfx/shader_sources.h"

namespace attnlab::gui {
namespace {

GLuint CompileShader(GLenum kind, const char* source, const char* name) {
  const GLuint shader = glCreateShader(kind);
  glShaderSource(shader, 1, &source, nullptr);
  glCompileShader(shader);
  GLint ok = 0;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[2048] = {};
    glGetShaderInfoLog(shader, sizeof log, nullptr, log);
    glDeleteShader(shader);
    throw std::runtime_error(std::string("shader ") + name + " does not compile: " + log);
  }
  return shader;
}

// Nearest sampling, clamped: every texel is one matrix cell or one colormap entry.
void SetNearestClamp() {
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
}

/// Defines a texture of w x h texels, or refills it when *w_now x *h_now is already its size
/// (no size given: defined anew); `format` GL_R32F (floats) or GL_R8 (bytes).
void FillTexture(unsigned* texture, int w, int h, int* w_now, int* h_now, GLint format,
                 const void* data) {
  const bool bytes = format == GL_R8;
  if (!*texture) glGenTextures(1, texture);
  glBindTexture(GL_TEXTURE_2D, *texture);
  glPixelStorei(GL_UNPACK_ALIGNMENT, bytes ? 1 : 4);  // rows of bytes are not 4-aligned
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  const GLenum type = bytes ? GL_UNSIGNED_BYTE : GL_FLOAT;
  if (w_now == nullptr || w != *w_now || h != *h_now) {
    SetNearestClamp();
    glTexImage2D(GL_TEXTURE_2D, 0, format, w, h, 0, GL_RED, type, data);
  } else {
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, GL_RED, type, data);
  }
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
}

void SetRgb(GLint location, Rgb c) {
  glUniform3f(location, c.r / 255.0f, c.g / 255.0f, c.b / 255.0f);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// HeatmapTexture

int AxisSample::CellAt(int texel) const {
  if (count <= pixels) return first + texel;
  const int64_t offset = ((2 * int64_t{texel} + 1) * count) / (2 * int64_t{pixels});
  return first + static_cast<int>(std::min<int64_t>(offset, count - 1));
}

HeatmapTexture::~HeatmapTexture() { Release(); }

void HeatmapTexture::ReleaseTarget(Target& t) {
  for (unsigned* tex : {&t.values, &t.mask, &t.row_scale, &t.color})
    if (*tex) glDeleteTextures(1, tex);
  if (t.fbo) glDeleteFramebuffers(1, &t.fbo);
  t = Target();
}

void HeatmapTexture::Release() {
  ReleaseTarget(main_);
  ReleaseTarget(overview_);
  rows_ = cols_ = 0;
  has_values_ = false;
  own_mask_ = MaskMatrix();
  has_own_mask_ = false;
  row_scale_.clear();
}

int64_t HeatmapTexture::sampled_texels() const {
  return int64_t{main_.tex_w} * main_.tex_h + int64_t{overview_.tex_w} * overview_.tex_h;
}

void HeatmapTexture::UploadShape(int64_t rows, int64_t cols) {
  rows_ = static_cast<int>(rows);
  cols_ = static_cast<int>(cols);
  has_values_ = rows > 0 && cols > 0;
  ++version_;
}

void HeatmapTexture::UploadRowScale(const std::vector<float>& scale) {
  row_scale_ = scale;
  ++row_scale_version_;
}

void HeatmapTexture::UploadOwnMask(const MaskMatrix& allowed) {
  own_mask_ = allowed;
  has_own_mask_ = allowed.size() > 0;
  ++own_mask_version_;
}

// ---------------------------------------------------------------------------------------------
// HeatmapRenderer

void HeatmapRenderer::Init() {
  const GLuint vs = CompileShader(GL_VERTEX_SHADER, kHeatmapVertexShader, "heatmap.vert");
  const GLuint fs = CompileShader(GL_FRAGMENT_SHADER, kHeatmapFragmentShader, "heatmap.frag");
  program_ = glCreateProgram();
  glAttachShader(program_, vs);
  glAttachShader(program_, fs);
  glLinkProgram(program_);
  glDeleteShader(vs);
  glDeleteShader(fs);
  GLint ok = 0;
  glGetProgramiv(program_, GL_LINK_STATUS, &ok);
  if (!ok) {
    char log[2048] = {};
    glGetProgramInfoLog(program_, sizeof log, nullptr, log);
    throw std::runtime_error(std::string("heatmap shaders do not link: ") + log);
  }
  u_values_ = glGetUniformLocation(program_, "u_values");
  u_lut_ = glGetUniformLocation(program_, "u_lut");
  u_mask_ = glGetUniformLocation(program_, "u_mask");
  u_use_mask_ = glGetUniformLocation(program_, "u_use_mask");
  u_range_ = glGetUniformLocation(program_, "u_range");
  u_view_ = glGetUniformLocation(program_, "u_view");
  u_target_height_ = glGetUniformLocation(program_, "u_target_height");
  u_row_scale_ = glGetUniformLocation(program_, "u_row_scale");
  u_scaling_ = glGetUniformLocation(program_, "u_scaling");
  // The constants of colormap.h, set once.
  glUseProgram(program_);
  glUniform1i(u_values_, 0);
  glUniform1i(u_lut_, 1);
  glUniform1i(u_mask_, 2);
  glUniform1i(u_row_scale_, 3);
  SetRgb(glGetUniformLocation(program_, "u_masked_light"), kMaskedLight);
  SetRgb(glGetUniformLocation(program_, "u_masked_stripe"), kMaskedStripe);
  SetRgb(glGetUniformLocation(program_, "u_nan_color"), kNanColor);
  glUniform1i(glGetUniformLocation(program_, "u_masked_period"), kMaskedPeriod);
  glUniform1i(glGetUniformLocation(program_, "u_masked_stripe_width"), kMaskedStripeWidth);
  glUseProgram(0);

  glGenVertexArrays(1, &vao_);

  // One RGBA8 256 x 1 texture per colormap, from the same LUT the figure renderer uses.
  for (const Colormap& cm : Colormaps()) {
    std::vector<uint8_t> rgba(256 * 4);
    for (int i = 0; i < 256; ++i) {
      rgba[i * 4 + 0] = cm.lut[i].r;
      rgba[i * 4 + 1] = cm.lut[i].g;
      rgba[i * 4 + 2] = cm.lut[i].b;
      rgba[i * 4 + 3] = 255;
    }
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    SetNearestClamp();
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, 256, 1, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
    luts_.push_back(tex);
  }
  glBindTexture(GL_TEXTURE_2D, 0);
}

void HeatmapRenderer::Shutdown() {
  if (program_) glDeleteProgram(program_);
  if (vao_) glDeleteVertexArrays(1, &vao_);
  for (GLuint t : luts_) glDeleteTextures(1, &t);
  luts_.clear();
  program_ = vao_ = 0;
}

void HeatmapRenderer::Sample(HeatmapTexture& hm, HeatmapTexture::Target& target,
                             const HeatmapTexture::SampleKey& key, const CellSource& values,
                             const MaskMatrix* mask) {
  const int w = key.cols.texels(), h = key.rows.texels();
  std::vector<int> cols(static_cast<size_t>(w));
  for (int t = 0; t < w; ++t) cols[t] = key.cols.CellAt(t);
  std::vector<float> cells(static_cast<size_t>(w) * h);
  for (int r = 0; r < h; ++r) {
    const int64_t row = key.rows.CellAt(r);
    float* dst = cells.data() + static_cast<size_t>(r) * w;
    if (values.floats) {
      const float* src = values.floats->data() + row * values.cols();
      for (int c = 0; c < w; ++c) dst[c] = src[cols[c]];
    } else {
      const uint8_t* src = values.bytes->data() + row * values.cols();
      for (int c = 0; c < w; ++c) dst[c] = src[cols[c]];
    }
  }
  FillTexture(&target.values, w, h, &target.tex_w, &target.tex_h, GL_R32F, cells.data());
  if (key.mask) {
    std::vector<uint8_t> allowed(static_cast<size_t>(w) * h);
    for (int r = 0; r < h; ++r) {
      const uint8_t* src = mask->data() + static_cast<int64_t>(key.rows.CellAt(r)) * mask->cols();
      for (int c = 0; c < w; ++c) allowed[static_cast<size_t>(r) * w + c] = src[cols[c]];
    }
    FillTexture(&target.mask, w, h, nullptr, nullptr, GL_R8, allowed.data());
  }
  if (key.row_scale) {
    std::vector<float> scale(static_cast<size_t>(h));
    for (int r = 0; r < h; ++r) scale[r] = hm.row_scale_[static_cast<size_t>(key.rows.CellAt(r))];
    FillTexture(&target.row_scale, h, 1, nullptr, nullptr, GL_R32F, scale.data());
  }
  target.tex_w = w;
  target.tex_h = h;
  target.sampled = key;
  target.has_sample = true;
}

void HeatmapRenderer::Render(HeatmapTexture& hm, HeatmapLook look, const CellSource& values,
                             const MaskMatrix* allowed, bool overview) {
  if (!hm.has_values() || look.width <= 0 || look.height <= 0 || values.rows() != hm.rows_ ||
      values.cols() != hm.cols_)
    return;
  look.values_version = hm.version_;
  // Its own mask when it has one (versions of the two kinds kept apart by the top bit).
  const MaskMatrix* mask = hm.has_own_mask_ ? &hm.own_mask_ : allowed;
  const bool mask_fits = mask && mask->rows() == hm.rows_ && mask->cols() == hm.cols_;
  look.use_mask = look.use_mask && mask_fits;
  if (look.use_mask)
    look.mask_version = hm.has_own_mask_ ? hm.own_mask_version_ | (1ull << 63) : mask_version_;
  // Per-row colours need a scale for every row.
  if (look.scaling == 1 && hm.row_scale_.size() != static_cast<size_t>(hm.rows_)) look.scaling = 0;
  // The cells drawn: the view when it lies inside the matrix, else all of them.
  const bool view_fits = look.view_cols > 0 && look.view_rows > 0 && look.view_col0 >= 0 &&
                         look.view_row0 >= 0 && look.view_col0 + look.view_cols <= hm.cols_ &&
                         look.view_row0 + look.view_rows <= hm.rows_;
  if (!view_fits) {
    look.view_col0 = look.view_row0 = 0;
    look.view_cols = hm.cols_;
    look.view_rows = hm.rows_;
  }
  HeatmapTexture::Target& target = overview ? hm.overview_ : hm.main_;
  if (target.valid && target.drawn == look) return;

  HeatmapTexture::SampleKey key;
  key.values_version = look.values_version;
  key.mask = look.use_mask;
  key.mask_version = look.use_mask ? look.mask_version : 0;
  key.row_scale = look.scaling == 1;
  key.row_scale_version = key.row_scale ? hm.row_scale_version_ : 0;
  key.rows = AxisSample{look.view_row0, look.view_rows, look.height};
  key.cols = AxisSample{look.view_col0, look.view_cols, look.width};
  if (!target.has_sample || !(target.sampled == key)) Sample(hm, target, key, values, mask);

  // (Re)create the image texture and its framebuffer at the on-screen size.
  if (!target.color || target.w != look.width || target.h != look.height) {
    if (!target.color) glGenTextures(1, &target.color);
    glBindTexture(GL_TEXTURE_2D, target.color);
    SetNearestClamp();
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, look.width, look.height, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                 nullptr);
    if (!target.fbo) glGenFramebuffers(1, &target.fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, target.fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, target.color, 0);
    target.w = look.width;
    target.h = look.height;
  }

  GLint old_fbo = 0, old_viewport[4] = {};
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &old_fbo);
  glGetIntegerv(GL_VIEWPORT, old_viewport);
  const GLboolean scissor = glIsEnabled(GL_SCISSOR_TEST), blend = glIsEnabled(GL_BLEND);

  glBindFramebuffer(GL_FRAMEBUFFER, target.fbo);
  glViewport(0, 0, look.width, look.height);
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_BLEND);
  glUseProgram(program_);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, target.values);
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D, LutTexture(look.colormap));
  glActiveTexture(GL_TEXTURE2);
  glBindTexture(GL_TEXTURE_2D, look.use_mask ? target.mask : 0);
  glUniform1i(u_use_mask_, look.use_mask ? 1 : 0);
  glActiveTexture(GL_TEXTURE3);
  glBindTexture(GL_TEXTURE_2D, look.scaling == 1 ? target.row_scale : 0);
  glUniform1i(u_scaling_, look.scaling);
  glUniform2f(u_range_, look.range.lo, look.range.hi);
  // The sampled textures hold exactly the cells drawn.
  glUniform4i(u_view_, 0, 0, target.tex_w, target.tex_h);
  glUniform1i(u_target_height_, look.height);
  glBindVertexArray(vao_);
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);

  // Leave the state as found (ImGui's renderer sets its own, but be a good neighbour).
  glBindVertexArray(0);
  glUseProgram(0);
  glActiveTexture(GL_TEXTURE3);
  glBindTexture(GL_TEXTURE_2D, 0);
  glActiveTexture(GL_TEXTURE2);
  glBindTexture(GL_TEXTURE_2D, 0);
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D, 0);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, 0);
  glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(old_fbo));
  glViewport(old_viewport[0], old_viewport[1], old_viewport[2], old_viewport[3]);
  if (scissor) glEnable(GL_SCISSOR_TEST);
  if (blend) glEnable(GL_BLEND);

  target.drawn = look;
  target.valid = true;
}

}  // namespace attnlab::gui
