// heatmap_gpu.h: heatmaps on the GPU. A stage matrix (T x T, or T x d_out for the context) is
// uploaded once per change as a float texture (GL_R32F, texel (c, r) = matrix(r, c)); the
// fragment shader of shaders/heatmap.frag colours it through the colormap's 256 x 1 lookup
// texture into an RGBA8 texture of exactly the on-screen size (a framebuffer object), which
// ImGui then draws as an image. So a 2048 x 2048 stage costs one texture upload when it changes
// and one small quad per frame, not four million ImGui rectangles.
//
// Needs a current OpenGL 3.3 core context (glad loaded). No ImGui here.
#pragma once

#include <cstdint>
#include <vector>

#include "attnlab/colormap.h"
#include "attnlab/scenario.h"
#include "attnlab/tensor.h"

namespace attnlab::gui {

/// What a heatmap image shows; the image is redrawn only when this changes.
struct HeatmapLook {
  uint64_t values_version = 0;  ///< bumped by each UploadValues
  uint64_t mask_version = 0;    ///< the renderer's mask version when masked cells are shown
  bool use_mask = false;        ///< hatch the cells the mask forbids
  ValueRange range;
  int scaling = 0;  ///< ColorScaling: 0 linear, 1 per row (UploadRowScale), 2 log10
  uint64_t row_scale_version = 0;  ///< bumped by each UploadRowScale
  int colormap = 0;  ///< index into Colormaps()
  int width = 0, height = 0;
  /// The cells drawn (a zoomed map): columns [view_col0, view_col0 + view_cols) and rows
  /// [view_row0, view_row0 + view_rows); view_cols == 0 draws the whole matrix.
  int view_col0 = 0, view_row0 = 0, view_cols = 0, view_rows = 0;
  bool operator==(const HeatmapLook& o) const {
    return values_version == o.values_version && mask_version == o.mask_version &&
           use_mask == o.use_mask && range.lo == o.range.lo && range.hi == o.range.hi &&
           scaling == o.scaling && row_scale_version == o.row_scale_version &&
           colormap == o.colormap && width == o.width && height == o.height &&
           view_col0 == o.view_col0 && view_row0 == o.view_row0 && view_cols == o.view_cols &&
           view_rows == o.view_rows;
  }
};

/// One heatmap's textures: the values (R32F), the coloured image (RGBA8 through an FBO) and,
/// for heatmaps whose mask is not the run's (the compare view's B), a mask of their own.
class HeatmapTexture {
 public:
  HeatmapTexture() = default;
  HeatmapTexture(const HeatmapTexture&) = delete;
  HeatmapTexture& operator=(const HeatmapTexture&) = delete;
  ~HeatmapTexture();

  /// Uploads a rows x cols matrix (row-major, so the data goes up as it is stored).
  void UploadValues(const Matrix& m);
  int rows() const { return rows_; }
  int cols() const { return cols_; }

  /// Gives this heatmap its own mask (rows x cols of 0/1, 1 allowed): hatched heatmaps read it
  /// instead of the renderer's shared one. An empty matrix goes back to the shared mask.
  void UploadOwnMask(const MaskMatrix& allowed);
  /// Each row's scale for per-row colours (rows floats: the value drawn at the top colour).
  void UploadRowScale(const std::vector<float>& scale);
  uint64_t row_scale_version() const { return row_scale_version_; }
  uint64_t values_version() const { return version_; }
  bool has_values() const { return values_ != 0 && rows_ > 0 && cols_ > 0; }

  /// The coloured image's GL texture name (0 before the first Render).
  unsigned image() const { return main_.color; }
  /// The second image, of the whole matrix at a small size: a zoomed map's minimap (0 before
  /// the first Render with `overview`).
  unsigned overview_image() const { return overview_.color; }
  /// Frees the GL objects (also done by the destructor; call it while the context is alive).
  void Release();

 private:
  friend class HeatmapRenderer;
  /// An RGBA8 texture drawn through its framebuffer, and the look it shows.
  struct Target {
    unsigned fbo = 0, color = 0;
    int w = 0, h = 0;
    HeatmapLook drawn;
    bool valid = false;
  };
  unsigned values_ = 0, own_mask_ = 0, row_scale_ = 0;
  int rows_ = 0, cols_ = 0, mask_rows_ = 0, mask_cols_ = 0;
  uint64_t version_ = 0, own_mask_version_ = 0, row_scale_version_ = 0;
  Target main_, overview_;
};

/// The GL objects every heatmap shares: the shader program, a lookup texture per colormap, the
/// mask texture (stages.mask, T x T) and an empty vertex array.
class HeatmapRenderer {
 public:
  /// Compiles shaders/heatmap.* and builds the lookup textures from Colormaps().
  /// Errors: std::runtime_error with the GLSL compiler's log.
  void Init();
  /// Frees everything (call while the context is alive).
  void Shutdown();

  /// The 256 x 1 RGBA8 lookup texture of Colormaps()[index] (also drawn as colorbars).
  unsigned LutTexture(int index) const { return luts_.at(static_cast<size_t>(index)); }

  /// Uploads the mask (T x T of 0/1) that hatched heatmaps without a mask of their own read.
  void UploadMask(const MaskMatrix& mask);
  uint64_t mask_version() const { return mask_version_; }

  /// Makes hm.image() (or, with `overview`, hm.overview_image()) show `look`, redrawing only
  /// when the look changed. Restores the framebuffer and viewport it found.
  void Render(HeatmapTexture& hm, HeatmapLook look, bool overview = false);

 private:
  unsigned program_ = 0, vao_ = 0, mask_ = 0;
  int mask_rows_ = 0, mask_cols_ = 0;
  uint64_t mask_version_ = 0;
  std::vector<unsigned> luts_;
  int u_values_ = -1, u_lut_ = -1, u_mask_ = -1, u_use_mask_ = -1, u_range_ = -1, u_view_ = -1,
      u_target_height_ = -1, u_row_scale_ = -1, u_scaling_ = -1;
};

}  // namespace attnlab::gui
