// heatmap_gpu.cpp: see heatmap_gpu.h.
#include "gui/gfx/heatmap_gpu.h"

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

/// Uploads a 0/1 byte matrix into *texture (created on first use) as R8.
void UploadMaskTexture(const MaskMatrix& mask, unsigned* texture, int* rows_now, int* cols_now) {
  const int rows = static_cast<int>(mask.rows()), cols = static_cast<int>(mask.cols());
  if (!*texture) glGenTextures(1, texture);
  glBindTexture(GL_TEXTURE_2D, *texture);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);  // rows of bytes are not 4-aligned; 0/1 reads 0, 1/255
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  if (rows != *rows_now || cols != *cols_now) {
    SetNearestClamp();
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R8, cols, rows, 0, GL_RED, GL_UNSIGNED_BYTE, mask.data());
    *rows_now = rows;
    *cols_now = cols;
  } else if (rows > 0 && cols > 0) {
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, cols, rows, GL_RED, GL_UNSIGNED_BYTE, mask.data());
  }
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
}

void SetRgb(GLint location, Rgb c) {
  glUniform3f(location, c.r / 255.0f, c.g / 255.0f, c.b / 255.0f);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// HeatmapTexture

HeatmapTexture::~HeatmapTexture() { Release(); }

void HeatmapTexture::Release() {
  if (values_) glDeleteTextures(1, &values_);
  for (Target* t : {&main_, &overview_}) {
    if (t->color) glDeleteTextures(1, &t->color);
    if (t->fbo) glDeleteFramebuffers(1, &t->fbo);
    *t = Target();
  }
  if (own_mask_) glDeleteTextures(1, &own_mask_);
  if (row_scale_) glDeleteTextures(1, &row_scale_);
  values_ = own_mask_ = row_scale_ = 0;
  rows_ = cols_ = mask_rows_ = mask_cols_ = 0;
}

void HeatmapTexture::UploadValues(const Matrix& m) {
  const int rows = static_cast<int>(m.rows()), cols = static_cast<int>(m.cols());
  if (!values_) glGenTextures(1, &values_);
  glBindTexture(GL_TEXTURE_2D, values_);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  if (rows != rows_ || cols != cols_) {
    SetNearestClamp();
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, cols, rows, 0, GL_RED, GL_FLOAT, m.data());
    rows_ = rows;
    cols_ = cols;
  } else if (rows > 0 && cols > 0) {
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, cols, rows, GL_RED, GL_FLOAT, m.data());
  }
  ++version_;
}

void HeatmapTexture::UploadRowScale(const std::vector<float>& scale) {
  if (!row_scale_) glGenTextures(1, &row_scale_);
  glBindTexture(GL_TEXTURE_2D, row_scale_);
  SetNearestClamp();
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  const float none = 1.0f;
  glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, std::max<int>(static_cast<int>(scale.size()), 1), 1, 0,
               GL_RED, GL_FLOAT, scale.empty() ? &none : scale.data());
  ++row_scale_version_;
}

void HeatmapTexture::UploadOwnMask(const MaskMatrix& allowed) {
  if (allowed.size() == 0) {
    if (own_mask_) glDeleteTextures(1, &own_mask_);
    own_mask_ = 0;
    mask_rows_ = mask_cols_ = 0;
  } else {
    UploadMaskTexture(allowed, &own_mask_, &mask_rows_, &mask_cols_);
  }
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
  if (mask_) glDeleteTextures(1, &mask_);
  for (GLuint t : luts_) glDeleteTextures(1, &t);
  luts_.clear();
  program_ = vao_ = mask_ = 0;
}

void HeatmapRenderer::UploadMask(const MaskMatrix& mask) {
  UploadMaskTexture(mask, &mask_, &mask_rows_, &mask_cols_);
  ++mask_version_;
}

void HeatmapRenderer::Render(HeatmapTexture& hm, HeatmapLook look, bool overview) {
  if (!hm.has_values() || look.width <= 0 || look.height <= 0) return;
  look.values_version = hm.version_;
  // Its own mask when it has one (versions of the two kinds kept apart by the top bit).
  const bool own = hm.own_mask_ != 0;
  if (look.use_mask) look.mask_version = own ? hm.own_mask_version_ | (1ull << 63) : mask_version_;
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
  glBindTexture(GL_TEXTURE_2D, hm.values_);
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D, LutTexture(look.colormap));
  glActiveTexture(GL_TEXTURE2);
  const unsigned mask = own ? hm.own_mask_ : mask_;
  const bool mask_fits = own ? hm.mask_rows_ == hm.rows_ && hm.mask_cols_ == hm.cols_
                             : mask_ && mask_rows_ == hm.rows_ && mask_cols_ == hm.cols_;
  glBindTexture(GL_TEXTURE_2D, mask_fits ? mask : 0);
  glUniform1i(u_use_mask_, look.use_mask && mask_fits ? 1 : 0);
  glActiveTexture(GL_TEXTURE3);
  glBindTexture(GL_TEXTURE_2D, look.scaling == 1 ? hm.row_scale_ : 0);
  glUniform1i(u_scaling_, look.scaling == 1 && !hm.row_scale_ ? 0 : look.scaling);
  glUniform2f(u_range_, look.range.lo, look.range.hi);
  glUniform4i(u_view_, look.view_col0, look.view_row0, look.view_cols, look.view_rows);
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
