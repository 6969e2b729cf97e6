// heatmap_gpu.h: heatmaps on the GPU. The fragment shader of shaders/heatmap.frag colours a
// float texture (GL_R32F) through the colormap's 256 x 1 lookup texture into an RGBA8 texture
// of exactly the on-screen size (a framebuffer object), which ImGui then draws as an image: one
// small quad per frame, not four million ImGui rectangles.
//
// The float texture holds only the cells the image can show (SampleAxis): the zoomed part of
// the matrix when its cells are larger than a pixel, else the one cell under each pixel's
// centre. So the GPU memory of a heatmap is bounded by its size on screen, not by T (a
// T = 8192 stage is 256 MB; its texture at most the image's pixels), and a change of values,
// zoom or pan uploads at most that many floats. The matrix stays where it is (the engine's
// stages): Render reads it.
//
// Needs a current OpenGL 3.3 core context (glad loaded). No ImGui here.
#pragma once

#include <cstdint>
#include <vector>

#include "attnlab/base/tensor.h"
#include "attnlab/figures/colormap.h"
#include "attnlab/model/scenario.h"

namespace attnlab::gui {

/// What a heatmap image shows; the image is redrawn only when this changes.
struct HeatmapLook {
  uint64_t values_version = 0;  ///< bumped by each UploadValues
  uint64_t mask_version = 0;    ///< the mask's version when masked cells are shown
  bool use_mask = false;        ///< hatch the cells the mask forbids
  ValueRange range;
  int scaling = 0;                 ///< ColorScaling: 0 linear, 1 per row (UploadRowScale), 2 log10
  uint64_t row_scale_version = 0;  ///< bumped by each UploadRowScale
  int colormap = 0;                ///< index into Colormaps()
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

/// The cells a heatmap shows: a float matrix, or the 0/1 bytes of a mask (the mask stage, shown
/// as 0 and 1 without a float copy: 484 MB at T = 11000).
struct CellSource {
  const Matrix* floats = nullptr;
  const MaskMatrix* bytes = nullptr;  ///< used when floats is null
  bool empty() const { return floats ? floats->size() == 0 : !bytes || bytes->size() == 0; }
  int64_t rows() const { return floats ? floats->rows() : bytes ? bytes->rows() : 0; }
  int64_t cols() const { return floats ? floats->cols() : bytes ? bytes->cols() : 0; }
  float at(int64_t r, int64_t c) const { return floats ? (*floats)(r, c) : (*bytes)(r, c); }
};

/// The matrix rows (or columns) one axis of an image shows: `count` cells from `first`, drawn
/// over `pixels` pixels. When the cells are at least a pixel each (count <= pixels) every one
/// is a texel; otherwise texel t is the cell under pixel t's centre,
/// first + floor((t + 0.5) * count / pixels), as a one-cell-per-fragment lookup would read.
struct AxisSample {
  int first = 0, count = 0, pixels = 0;
  int texels() const { return count <= pixels ? count : pixels; }
  int CellAt(int texel) const;
  bool operator==(const AxisSample&) const = default;
};

/// One heatmap's textures: for the image and for the minimap (overview) each, the sampled values
/// (R32F), mask (R8) and row scales, and the coloured image (RGBA8 through an FBO). The matrix
/// itself is not copied: UploadValues records its size and bumps the version, and Render samples
/// the matrix it is given.
class HeatmapTexture {
 public:
  HeatmapTexture() = default;
  HeatmapTexture(const HeatmapTexture&) = delete;
  HeatmapTexture& operator=(const HeatmapTexture&) = delete;
  ~HeatmapTexture();

  /// The matrix (rows x cols) changed: the next Render samples it again.
  void UploadValues(const Matrix& m) { UploadShape(m.rows(), m.cols()); }
  void UploadValues(const MaskMatrix& m) { UploadShape(m.rows(), m.cols()); }
  int rows() const { return rows_; }
  int cols() const { return cols_; }

  /// Gives this heatmap its own mask (rows x cols of 0/1, 1 allowed; a copy is kept) instead
  /// of the one Render is given. An empty matrix goes back to that one.
  void UploadOwnMask(const MaskMatrix& allowed);
  /// Each row's scale for per-row colours (rows floats: the value drawn at the top colour).
  void UploadRowScale(const std::vector<float>& scale);
  uint64_t row_scale_version() const { return row_scale_version_; }
  uint64_t values_version() const { return version_; }
  bool has_values() const { return has_values_ && rows_ > 0 && cols_ > 0; }

  /// The coloured image's GL texture name (0 before the first Render).
  unsigned image() const { return main_.color; }
  /// The second image, of the whole matrix at a small size: a zoomed map's minimap (0 before
  /// the first Render with `overview`).
  unsigned overview_image() const { return overview_.color; }
  /// Floats held on the GPU for this heatmap's samples (both targets), for tests and --layout.
  int64_t sampled_texels() const;
  /// Frees the GL objects (also done by the destructor; call it while the context is alive).
  void Release();

 private:
  friend class HeatmapRenderer;
  /// What a target's sampled textures hold.
  struct SampleKey {
    uint64_t values_version = 0, mask_version = 0, row_scale_version = 0;
    bool mask = false, row_scale = false;
    AxisSample rows, cols;
    bool operator==(const SampleKey&) const = default;
  };
  /// The sampled textures and the RGBA8 texture drawn through its framebuffer, and the look it
  /// shows.
  struct Target {
    unsigned values = 0, mask = 0, row_scale = 0;
    int tex_w = 0, tex_h = 0;  ///< the sampled textures' size (texels)
    SampleKey sampled;
    bool has_sample = false;
    unsigned fbo = 0, color = 0;
    int w = 0, h = 0;
    HeatmapLook drawn;
    bool valid = false;
  };
  void ReleaseTarget(Target& t);
  void UploadShape(int64_t rows, int64_t cols);
  int rows_ = 0, cols_ = 0;
  bool has_values_ = false;
  MaskMatrix own_mask_;
  bool has_own_mask_ = false;
  std::vector<float> row_scale_;
  uint64_t version_ = 0, own_mask_version_ = 0, row_scale_version_ = 0;
  Target main_, overview_;
};

/// The GL objects every heatmap shares: the shader program, a lookup texture per colormap and
/// an empty vertex array.
class HeatmapRenderer {
 public:
  /// Compiles shaders/heatmap.* and builds the lookup textures from Colormaps().
  /// Errors: std::runtime_error with the GLSL compiler's log.
  void Init();
  /// Frees everything (call while the context is alive).
  void Shutdown();

  /// The 256 x 1 RGBA8 lookup texture of Colormaps()[index] (also drawn as colorbars).
  unsigned LutTexture(int index) const { return luts_.at(static_cast<size_t>(index)); }

  /// The run's mask (the one Render is given for heatmaps without their own) changed: hatched
  /// images are sampled again.
  void MaskChanged() { ++mask_version_; }
  uint64_t mask_version() const { return mask_version_; }

  /// Makes hm.image() (or, with `overview`, hm.overview_image()) show `look` of `values` (the
  /// matrix last given to hm.UploadValues), redrawing only when the look changed. `allowed`
  /// (1 allowed; nullptr: none) is the mask hatched when hm has none of its own. Restores the
  /// framebuffer and viewport it found.
  void Render(HeatmapTexture& hm, HeatmapLook look, const CellSource& values,
              const MaskMatrix* allowed, bool overview = false);

 private:
  void Sample(HeatmapTexture& hm, HeatmapTexture::Target& target,
              const HeatmapTexture::SampleKey& key, const CellSource& values,
              const MaskMatrix* mask);
  unsigned program_ = 0, vao_ = 0;
  uint64_t mask_version_ = 0;
  std::vector<unsigned> luts_;
  int u_values_ = -1, u_lut_ = -1, u_mask_ = -1, u_use_mask_ = -1, u_range_ = -1, u_view_ = -1,
      u_target_height_ = -1, u_row_scale_ = -1, u_scaling_ = -1;
};

}  // namespace attnlab::gui
