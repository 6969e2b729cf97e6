// stage_layout.cpp: see stage_layout.h.
#include "gui/widgets/stage_layout.h"

#include <algorithm>
#include <cmath>

namespace attnlab::gui {
namespace {

/// The boxes packed into rows with cells sized for `decimals`; the rows' own heights (one line
/// of numbers per cell) in `need`, the widest row's width in `widest`.
std::vector<std::vector<PlacedStage>> PackRows(const std::vector<StageBox>& boxes,
                                               const StageMetrics& m, float width, int decimals,
                                               std::vector<float>& need, float& widest) {
  std::vector<std::vector<PlacedStage>> rows;
  need.clear();
  widest = 0;
  for (const StageBox& b : boxes) {
    const int k = b.compact ? 0 : decimals - 2;
    const float cell = b.cell_w[k];
    const float image_w = b.cols * cell;
    const float h = b.top_h[k] + std::max(b.rows * m.cell_h, b.min_image_h);
    PlacedStage p{b.stage, 0, 0, 0, h, cell, true, b.reserved};
    if (!rows.empty()) {  // beside the row's last map
      const PlacedStage& last = rows.back().back();
      p.row_labels = !b.same_rows_as_previous;
      p.x = last.x + last.w + m.gap_x;
      p.w = (p.row_labels ? b.label_w : m.row_label_gap) + image_w + b.right_w;
      if (p.x + p.w <= width) {
        rows.back().push_back(p);
        need.back() = std::max(need.back(), h);
        widest = std::max(widest, p.x + p.w);
        continue;
      }
    }
    p.row_labels = true;  // the first of a new row labels the tokens
    p.x = 0;
    p.w = b.label_w + image_w + b.right_w;
    rows.push_back({p});
    need.push_back(h);
    widest = std::max(widest, p.w);
  }
  return rows;
}

}  // namespace

float StageGridNeed(const std::vector<StageBox>& boxes, const StageMetrics& m, float width,
                    int decimals) {
  if (boxes.empty()) return 0;
  std::vector<float> need;
  float widest = 0;
  const auto rows = PackRows(boxes, m, width, std::clamp(decimals, 2, 4), need, widest);
  float total = m.gap_y * static_cast<float>(rows.size() - 1);
  for (float h : need) total += h;
  return total;
}

float PlotsHeight(float body_h, float maps_need, float unit, bool expanded) {
  if (expanded) return std::floor(body_h * 0.62f);
  const float usual =
      std::min(std::clamp(body_h * 0.31f * unit, 240.0f * unit, 340.0f * unit), body_h * 0.45f);
  if (!(maps_need > 0)) return usual;
  const float least = std::min(120.0f * unit, usual);
  return std::floor(std::clamp(body_h - maps_need, least, usual));
}

bool StartsAtTheResult(float window_w, float window_h, float scale) {
  if (!(scale > 0)) scale = 1;
  const WindowSize design = FirstWindowSize(0, 0, 1);  // 1280 x 800
  return window_w < design.width * scale || window_h < design.height * scale;
}

StageGrid LayOutStageGrid(const std::vector<StageBox>& boxes, const StageMetrics& m, float width,
                          float height) {
  StageGrid grid;
  if (boxes.empty()) return grid;
  std::vector<std::vector<PlacedStage>> rows;
  std::vector<float> need;
  float total = 0;
  for (int decimals : {4, 3, 2}) {
    float widest = 0;
    rows = PackRows(boxes, m, width, decimals, need, widest);
    total = m.gap_y * static_cast<float>(rows.size() - 1);
    for (float h : need) total += h;
    grid.decimals = decimals;
    grid.fits = total <= height && widest <= width;
    if (grid.fits) break;
  }
  // Room left over makes each row taller, up to square cells.
  const float spare = std::max(0.0f, height - total) / static_cast<float>(rows.size());
  float y = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    float square = need[r];
    for (const PlacedStage& p : rows[r]) {
      const StageBox& b = *std::find_if(boxes.begin(), boxes.end(),
                                        [&](const StageBox& x) { return x.stage == p.stage; });
      square = std::max(square, b.top_h[b.compact ? 0 : grid.decimals - 2] + b.rows * p.cell_w);
    }
    const float h = std::min(need[r] + spare, square);
    for (PlacedStage& p : rows[r]) {
      p.y = y;
      p.h = h;
      grid.maps.push_back(p);
    }
    y += h + m.gap_y;
  }
  grid.height = y - m.gap_y;
  return grid;
}

WindowSize FirstWindowSize(int work_w, int work_h, float scale) {
  if (work_w <= 0 || work_h <= 0) return {};
  if (!(scale > 0)) scale = 1;
  const int want_w = static_cast<int>(1280 * scale), want_h = static_cast<int>(800 * scale);
  return {std::max(480, std::min(want_w, work_w)), std::max(480, std::min(want_h, work_h))};
}

}  // namespace attnlab::gui
