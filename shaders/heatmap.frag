// heatmap.frag: colours one stage matrix the way the CPU figure renderer does (core/colormap.h),
// so the screen and an exported PNG agree:
//   NaN                  -> magenta (kNanColor), masked or not (DrawnHatched, heatmap_spec.h)
//   masked cell          -> stripes along x + y (kMaskedLight / kMaskedStripe, period, width)
//   finite or +-inf v    -> lut[round(clamp((v - lo) / (hi - lo), 0, 1) * 255)]  (LutIndex)
//   per row (scaling 1)  -> v / row_scale[row] over [0, 1]; log (2) -> log10(v) over the range
//                           in decades (ScalePosition, heatmap_spec.h)
// Each fragment reads exactly one cell with texelFetch (no filtering). The textures hold only
// the cells the image shows (heatmap_gpu.h, AxisSample), so u_view spans all of them.
#version 330 core
in vec2 v_uv;
out vec4 frag_color;

uniform sampler2D u_values;  // R32F, texel (c, r) = the c-th sampled column of the r-th sampled row
uniform sampler2D u_lut;     // 256 x 1 RGBA8: the colormap
uniform sampler2D u_mask;    // R8 of 0/1 bytes, sampled alike: reads 1/255 allowed, 0 masked
uniform int u_use_mask;
uniform sampler2D u_row_scale;  // R32F, sampled rows x 1: each row's largest weight (u_scaling 1)
uniform int u_scaling;          // 0 linear, 1 per row, 2 log10
uniform vec2 u_range;        // lo, hi of the colorbar
uniform ivec4 u_view;        // the texels drawn: first col, first row, cols, rows
uniform int u_target_height; // pixel rows of the target, to count y from the top like figures
uniform vec3 u_masked_light;
uniform vec3 u_masked_stripe;
uniform vec3 u_nan_color;
uniform int u_masked_period;
uniform int u_masked_stripe_width;

void main() {
  ivec2 cell = u_view.xy + clamp(ivec2(floor(v_uv * vec2(u_view.zw))), ivec2(0), u_view.zw - 1);
  float v = texelFetch(u_values, cell, 0).r;
  if (isnan(v)) {
    frag_color = vec4(u_nan_color, 1.0);
    return;
  }
  if (u_use_mask != 0 && texelFetch(u_mask, cell, 0).r < 0.5 / 255.0) {
    // MaskedColorAt(x, y): pixel coordinates from the heatmap's top-left corner.
    int x = int(gl_FragCoord.x);
    int y = u_target_height - 1 - int(gl_FragCoord.y);
    bool stripe = ((x + y) % u_masked_period) < u_masked_stripe_width;
    frag_color = vec4(stripe ? u_masked_stripe : u_masked_light, 1.0);
    return;
  }
  // +inf and -inf clamp to the ends, as LutIndex does.
  float t;
  if (u_scaling == 1) {
    float top = texelFetch(u_row_scale, ivec2(cell.y, 0), 0).r;
    t = isinf(v) && v > 0.0 ? 1.0 : (top > 0.0 && !isinf(top) ? v / top : 0.0);
  } else if (u_scaling == 2) {
    t = v > 0.0 ? (log(v) / log(10.0) - u_range.x) / (u_range.y - u_range.x) : 0.0;
  } else {
    t = (v - u_range.x) / (u_range.y - u_range.x);
  }
  t = clamp(t, 0.0, 1.0);
  int index = int(floor(t * 255.0 + 0.5));
  frag_color = vec4(texelFetch(u_lut, ivec2(index, 0), 0).rgb, 1.0);
}
