// heatmaps_panel.cpp: the six stages as heatmaps, side by side in pipeline order, with tokens
// on both axes, a colorbar with ticks, masked cells hatched and NaN magenta, the hovered query
// row highlighted in every heatmap, and a tooltip that says how the hovered number was made.
//
// Each heatmap is one float texture coloured by shaders/heatmap.frag (gfx/heatmap_gpu.h);
// labels, colorbars and highlights are ImGui draw-list calls.
//
// [SECTION] Uploads: only the stages the engine recomputed
// [SECTION] Toolbar: head, batch, colours, values, export
// [SECTION] Tooltip: how the hovered number was made
// [SECTION] One heatmap: labels, image, colorbar, highlights, painting
// [SECTION] The panel
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <future>
#include <vector>

#include "gui/app_state.h"
#include "gui/export.h"
#include "gui/panels/panels.h"
#include "gui/plot.h"
#include "gui/stage_info.h"
#include "gui/stage_scan.h"
#include "gui/widgets.h"

namespace attnlab::gui {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Uploads: only the stages the engine recomputed

/// Uploads the dirty stages and the mask; derives each one's colour range and flags. The scans
/// run on a helper thread while this thread (the GL one) uploads: at T = 2048 each takes about
/// a millisecond, as does each upload.
void UploadDirty(AppState& state) {
  if (!state.renderer || !state.engine.has_result()) return;
  if (state.mask_dirty) {
    state.renderer->UploadMask(ShownStages(state).mask);
    state.mask_dirty = false;
  }
  std::vector<std::pair<int, const Matrix*>> jobs;
  Eigen::Index cells = 0;
  for (int i = 0; i < kStageCount; ++i) {
    HeatmapSlot& slot = state.heatmaps[i];
    if (!slot.dirty) continue;
    slot.dirty = false;
    const Matrix* m = StageMatrix(state, StageAt(i));
    if (!m || m->size() == 0) {
      slot.gpu.Release();
      continue;
    }
    jobs.emplace_back(i, m);
    cells += m->size();
  }
  if (jobs.empty()) return;
  auto scan_all = [jobs] {
    std::vector<StageScan> scans;
    for (const auto& [i, m] : jobs) scans.push_back(ScanStage(*m));
    return scans;
  };
  std::future<std::vector<StageScan>> pending;
  std::vector<StageScan> scans;
  const bool helper = cells > (1 << 20);
  if (helper) pending = std::async(std::launch::async, scan_all);
  for (const auto& [i, m] : jobs) state.heatmaps[i].gpu.UploadValues(*m);
  scans = helper ? pending.get() : scan_all();

  for (size_t k = 0; k < jobs.size(); ++k) {
    const int i = jobs[k].first;
    const Stage stage = StageAt(i);
    const StageScan& scan = scans[k];
    HeatmapSlot& slot = state.heatmaps[i];
    // NaN and inf arise after normalization (naive overflow, a zero sum); negative weights
    // ("sum") switch the weights to a diverging map, as ExtractStage does.
    slot.has_nan = scan.has_nan;
    slot.has_inf = scan.has_inf && stage != Stage::kLogits;  // logits: -inf is the mask
    slot.diverging =
        stage == Stage::kWeights || stage == Stage::kWeightsDropped
            ? scan.has_negative
            : stage == Stage::kScores || stage == Stage::kLogits || stage == Stage::kContext;
    slot.range = StageRangeFromScan(stage, scan, slot.diverging);
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Toolbar: head, batch, colours, values, export

void DrawToolbar(AppState& state) {
  const Shape& sh = ShownStages(state).shape;
  const float w = ImGui::GetFontSize() * 5.5f;
  auto selector = [&](const char* label, int64_t value, int64_t count, const char* tip,
                      auto make_action) {
    ImGui::SetNextItemWidth(w);
    ImGui::BeginDisabled(count <= 1);
    int v = static_cast<int>(value);
    char fmt[32];
    std::snprintf(fmt, sizeof fmt, "%%d of %lld", static_cast<long long>(count));
    if (ImGui::SliderInt(label, &v, 0, std::max<int>(static_cast<int>(count) - 1, 0), fmt))
      Emit(state, make_action(v));
    ImGui::EndDisabled();
    Tip(tip);
    ImGui::SameLine(0, ImGui::GetFontSize());
  };
  selector("head", state.head, sh.H,
           "Which head's scores, logits and weights to show (each head attends with its own "
           "d_k = d_out / heads columns of Q, K and V).",
           [](int v) { return Action{SelectHead{v}}; });
  selector("batch", state.batch, sh.B, "Which sequence of the batch to show.",
           [](int v) { return Action{SelectBatch{v}}; });

  auto colormap_combo = [&](const char* label, bool diverging, const char* tip) {
    const int current = diverging ? state.view.diverging_colormap : state.view.sequential_colormap;
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6.0f);
    if (ImGui::BeginCombo(label, Colormaps()[current].name.c_str())) {
      for (int i = 0; i < static_cast<int>(Colormaps().size()); ++i) {
        if (Colormaps()[i].diverging != diverging) continue;
        if (ImGui::Selectable(Colormaps()[i].name.c_str(), i == current))
          Emit(state, SetColormap{diverging, i});
      }
      ImGui::EndCombo();
    }
    Tip(tip);
    ImGui::SameLine(0, ImGui::GetFontSize());
  };
  colormap_combo("weights colours", false,
                 "Colour scale for the mask and the weights (values >= 0): sequential.");
  colormap_combo("signed colours", true,
                 "Colour scale for scores, logits and context (signed): diverging, white at 0.");

  const char* modes[] = {"auto", "on", "off"};
  int mode = static_cast<int>(state.view.values);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 4.0f);
  if (ImGui::Combo("numbers", &mode, modes, 3)) state.view.values = static_cast<ValuesMode>(mode);
  Tip("Print each cell's value: auto does it when the grid is at most 12 x 12 and the "
      "numbers fit.");
  ImGui::SameLine(0, ImGui::GetFontSize());
  if (ImGui::Button("Export...")) ImGui::OpenPopup("export_menu");
  Tip("Save a heatmap (or all of them) as a PNG figure, the same file `attention-lab export` "
      "writes. Ctrl+E exports the heatmap under the mouse.");
  if (ImGui::BeginPopup("export_menu")) {
    for (int i = 0; i < kStageCount; ++i) {
      const std::string label = std::string(StageName(StageAt(i))) + "...";
      if (ImGui::MenuItem(label.c_str(), nullptr, false, state.heatmaps[i].gpu.has_values())) {
        state.dialog.kind = DialogKind::kExport;
        state.dialog.stage = i;
        state.dialog.just_opened = true;
        state.dialog.path = DefaultExportName(state, StageAt(i));
      }
    }
    ImGui::Separator();
    if (ImGui::MenuItem("All heatmaps...")) {
      state.dialog.kind = DialogKind::kExportAll;
      state.dialog.just_opened = true;
      state.dialog.path = "attention-figures";
    }
    ImGui::EndPopup();
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Tooltip: how the hovered number was made

std::string Num(double v) {
  char buf[32];
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

void DrawCellTooltip(const AppState& state, Stage stage, int64_t i, int64_t j) {
  const Stages& st = ShownStages(state);
  const Scenario& s = state.shown;
  const Matrix* m = StageMatrix(state, stage);
  if (!m || i >= m->rows() || j >= m->cols()) return;
  const float v = (*m)(i, j);
  const std::string qi = RowLabel(state, i);
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30.0f);
  if (stage == Stage::kContext) {
    ImGui::Text("context[%lld, d%lld]  (query \"%s\")", static_cast<long long>(i),
                static_cast<long long>(j), qi.c_str());
  } else {
    ImGui::Text("query %lld \"%s\"  \xE2\x86\x92  key %lld \"%s\"", static_cast<long long>(i),
                qi.c_str(), static_cast<long long>(j), RowLabel(state, j).c_str());
  }
  ImGui::Separator();

  const bool allowed = st.mask.rows() > i && st.mask.cols() > j ? st.mask(i, j) != 0 : true;
  const Matrix& scores = st.Head(st.scores, state.batch, state.head);
  const Matrix& logits = st.Head(st.logits, state.batch, state.head);
  const int64_t h0 = state.head * st.shape.dh, h1 = h0 + st.shape.dh - 1;
  auto score_line = [&] {
    ImGui::Text("score = q_%lld \xC2\xB7 k_%lld = %s", static_cast<long long>(i),
                static_cast<long long>(j), Num(scores(i, j)).c_str());
    ImGui::TextDisabled("dot product over d_k = %lld dims (columns %lld..%lld of Q and K)",
                        static_cast<long long>(st.shape.dh), static_cast<long long>(h0),
                        static_cast<long long>(h1));
  };
  auto logit_line = [&] {
    if (!allowed) {
      ImGui::Text("logit = -inf (masked)");
      return;
    }
    std::string how = "logit = " + Num(scores(i, j));
    if (s.scaling.multiplier != 1.0) how += " \xC3\x97 " + Num(s.scaling.multiplier);
    if (s.scaling.sqrt_dk) how += " / \u221A" + std::to_string(st.shape.dh);
    if (s.scaling.multiplier == 1.0 && !s.scaling.sqrt_dk) how += " (no scaling)";
    how += " = " + Num(logits(i, j));
    ImGui::TextUnformatted(how.c_str());
  };
  // The row's normaliser, recomputed from the logits row only to explain the number.
  auto weight_line = [&] {
    if (!allowed) {
      ImGui::Text("weight = 0 (masked: exp(-inf) = 0)");
      return;
    }
    const auto row = logits.row(i);
    double mx = -INFINITY, sum_exp = 0, sum_exp_raw = 0, sum = 0;
    int64_t n = 0;
    for (int64_t k = 0; k < row.size(); ++k)
      if (st.mask.rows() <= i || st.mask(i, k)) {
        mx = std::max(mx, static_cast<double>(row(k)));
        sum += row(k);
        ++n;
      }
    for (int64_t k = 0; k < row.size(); ++k)
      if (st.mask.rows() <= i || st.mask(i, k)) {
        sum_exp += std::exp(static_cast<double>(row(k)) - mx);
        sum_exp_raw += std::exp(static_cast<double>(static_cast<float>(row(k))));
      }
    const double z = logits(i, j);
    const double w = st.Head(st.weights, state.batch, state.head)(i, j);
    switch (s.normalization) {
      case Normalization::kSoftmax:
        ImGui::Text("weight = exp(z - max) / \xCE\xA3 = exp(%s - %s) / %s = %s", Num(z).c_str(),
                    Num(mx).c_str(), Num(sum_exp).c_str(), Num(w).c_str());
        ImGui::TextDisabled(
            "max = the row's largest logit; \xCE\xA3 = sum of exp(z - max) over the "
            "%lld allowed keys",
            static_cast<long long>(n));
        break;
      case Normalization::kSoftmaxNaive:
        ImGui::Text("weight = exp(z) / \xCE\xA3 exp(z) = exp(%s) / %s = %s", Num(z).c_str(),
                    Num(sum_exp_raw).c_str(), Num(w).c_str());
        ImGui::TextDisabled("float32 exp overflows to inf above 88.7, and inf / inf = nan");
        break;
      case Normalization::kSum:
        ImGui::Text("weight = z / \xCE\xA3 z = %s / %s = %s", Num(z).c_str(), Num(sum).c_str(),
                    Num(w).c_str());
        break;
      case Normalization::kMean:
        ImGui::Text("weight = 1 / n = 1 / %lld = %s", static_cast<long long>(n), Num(w).c_str());
        break;
    }
  };

  switch (stage) {
    case Stage::kScores:
      score_line();
      break;
    case Stage::kMask:
      if (allowed)
        ImGui::TextUnformatted("allowed: the query may attend to this key");
      else
        ImGui::TextUnformatted(s.mask.kind == MaskKind::kCausal
                                   ? "masked: this key comes after the query (the future)"
                                   : "masked: the logit becomes -inf, the weight 0");
      if (s.mask.kind == MaskKind::kCustom) ImGui::TextDisabled("click to toggle, drag to paint");
      break;
    case Stage::kLogits:
      score_line();
      logit_line();
      break;
    case Stage::kWeights:
      score_line();
      logit_line();
      weight_line();
      break;
    case Stage::kWeightsDropped: {
      const double w = st.Head(st.weights, state.batch, state.head)(i, j);
      weight_line();
      if (v == 0 && w != 0)
        ImGui::Text("dropped: zeroed by dropout (p = %.2g)", s.dropout.p);
      else
        ImGui::Text("kept: %s / (1 - %.2g) = %s", Num(w).c_str(), s.dropout.p, Num(v).c_str());
      break;
    }
    case Stage::kContext: {
      const int64_t h = st.shape.dh > 0 ? j / st.shape.dh : 0;
      ImGui::Text("= \xCE\xA3_k weight[%lld, k] \xC2\xB7 v_k[d%lld]  (head %lld)",
                  static_cast<long long>(i), static_cast<long long>(j), static_cast<long long>(h));
      if (s.projections.out_proj) ImGui::TextDisabled("then out_proj mixes the dimensions");
      break;
    }
  }
  ImGui::Separator();
  ImGui::Text("value: %s", Num(v).c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] One heatmap: labels, image, colorbar, highlights, painting

struct LabelFont {
  ImFont* font;
  float size;
  ImVec2 Measure(const std::string& s) const {
    return font->CalcTextSizeA(size, FLT_MAX, 0.0f, s.c_str());
  }
};

/// A label cut to max_w pixels with an ellipsis.
std::string Fit(const LabelFont& f, std::string s, float max_w) {
  if (f.Measure(s).x <= max_w) return s;
  while (!s.empty() && f.Measure(s + "\xE2\x80\xA6").x > max_w) {
    s.pop_back();
    while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) s.pop_back();
  }
  return s + "\xE2\x80\xA6";
}

ImU32 ToU32(Rgb c) { return IM_COL32(c.r, c.g, c.b, 255); }

/// The hatch swatch of masked cells, for legends.
void AddMaskedSwatch(ImDrawList* dl, ImVec2 a, ImVec2 b) {
  dl->AddRectFilled(a, b, ToU32(kMaskedLight));
  dl->PushClipRect(a, b, true);
  for (float x = a.x - (b.y - a.y); x < b.x; x += kMaskedPeriod)
    dl->AddLine(ImVec2(x, b.y), ImVec2(x + (b.y - a.y), a.y), ToU32(kMaskedStripe), 2.0f);
  dl->PopClipRect();
}

std::string CellText(float v) {
  char buf[16];
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const float a = std::fabs(v);
  std::snprintf(buf, sizeof buf, a < 10 ? "%.2f" : (a < 100 ? "%.1f" : "%.0f"), v);
  return buf;
}

void DrawHeatmap(AppState& state, Stage stage, ImVec2 origin, ImVec2 size) {
  HeatmapSlot& slot = state.heatmaps[StageIndex(stage)];
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const LabelFont small{state.fonts.small ? state.fonts.small : ImGui::GetFont(),
                        state.fonts.small ? state.fonts.small->FontSize : ImGui::GetFontSize()};
  const float line = ImGui::GetTextLineHeight();
  const ImU32 text_color = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 dim_color = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const Shape& sh = ShownStages(state).shape;

  // -- heading
  std::string heading = StageHeading(state, stage);
  if (StageIsPerHead(stage) && sh.H > 1) heading += "  [head " + std::to_string(state.head) + "]";
  ImGui::SetCursorScreenPos(origin);
  ImGui::TextUnformatted(heading.c_str());
  Tip(StageHelp(stage));
  const Matrix* m = StageMatrix(state, stage);
  if (!m || !slot.gpu.has_values()) {
    ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + line * 2));
    ImGui::TextDisabled(stage == Stage::kWeightsDropped ? "Dropout is off. Set p > 0 in the\n"
                                                          "attention controls to see it."
                                                        : "(nothing to show)");
    slot.image_min = slot.image_max = ImVec2(0, 0);
    return;
  }
  const int rows = static_cast<int>(m->rows()), cols = static_cast<int>(m->cols());

  // -- layout: row labels | image | colorbar; column labels above the image
  // Label widths from up to ~256 labels spread over the whole range (T may be 2048), measured
  // again only when the tokens change (a new input run).
  const int input_runs = state.engine.counts().input;
  if (slot.labels_input_run != input_runs || slot.labels_rows != rows || slot.labels_cols != cols) {
    slot.row_label_w = slot.col_label_w = 0;
    for (int i = 0; i < rows; i += std::max(1, rows / 256))
      slot.row_label_w = std::max(slot.row_label_w, small.Measure(RowLabel(state, i)).x);
    for (int j = 0; j < cols; j += std::max(1, cols / 256))
      slot.col_label_w = std::max(slot.col_label_w, small.Measure(ColumnLabel(state, stage, j)).x);
    slot.labels_input_run = input_runs;
    slot.labels_rows = rows;
    slot.labels_cols = cols;
  }
  const float row_label_w = std::clamp(slot.row_label_w, small.size, small.size * 6.0f) + 10;
  const float col_label_w = slot.col_label_w;
  const float bar_w = 12, bar_gap = 6;
  const float tick_w = small.Measure("-0.000").x + 4;
  const float right_w = bar_gap + bar_w + 4 + tick_w;
  const float top = origin.y + line + 4;
  const float avail_w = size.x - row_label_w - right_w;
  // Column labels: horizontal when they fit the cells, else rotated (and then taller).
  const float first_guess_cw = avail_w / cols;
  const bool rotate = col_label_w + 4 > first_guess_cw;
  const float col_label_h = rotate ? std::min(col_label_w, small.size * 5.0f) + 8 : small.size + 4;
  const float avail_h = size.y - (top - origin.y) - col_label_h - 2;
  if (avail_w < 20 || avail_h < 20) return;
  // Square cells when they fit; otherwise cells up to 3:1, and a very tall or wide matrix (the
  // context, T x d_out) still gets at least 60% of the room along its short side.
  float cw = avail_w / cols, ch = avail_h / rows;
  const float c = std::min(cw, ch);
  cw = std::min(cw, std::max(3 * c, 0.6f * avail_w / cols));
  ch = std::min(ch, std::max(3 * c, 0.6f * avail_h / rows));
  const int img_w = std::max(1, static_cast<int>(std::floor(cw * cols)));
  const int img_h = std::max(1, static_cast<int>(std::floor(ch * rows)));
  cw = static_cast<float>(img_w) / cols;
  ch = static_cast<float>(img_h) / rows;
  const ImVec2 p0(std::floor(origin.x + row_label_w), std::floor(top + col_label_h));
  const ImVec2 p1(p0.x + img_w, p0.y + img_h);
  slot.image_min = p0;
  slot.image_max = p1;

  // -- the image, coloured on the GPU at exactly this size
  HeatmapLook look;
  look.use_mask = StageHatchesMask(stage);
  look.range = slot.range;
  look.colormap = StageColormap(state, stage);
  look.width = img_w;
  look.height = img_h;
  if (state.renderer) state.renderer->Render(slot.gpu, look);
  // The FBO's first row is the image's bottom: flip v.
  dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(slot.gpu.image())), p0, p1,
               ImVec2(0, 1), ImVec2(1, 0));
  dl->AddRect(ImVec2(p0.x - 1, p0.y - 1), ImVec2(p1.x + 1, p1.y + 1), IM_COL32(110, 110, 120, 255));

  // -- cell values
  const bool auto_values = rows <= 12 && cols <= 12;
  const bool want_values = state.view.values == ValuesMode::kOn ||
                           (state.view.values == ValuesMode::kAuto && auto_values);
  if (want_values && stage != Stage::kMask && ch >= small.size &&
      cw >= small.Measure("-0.00").x + 2 && rows * cols <= 4096) {
    const Colormap& cm = Colormaps()[look.colormap];
    const MaskMatrix& mask = ShownStages(state).mask;
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        const float v = (*m)(i, j);
        const bool masked =
            look.use_mask && mask.rows() == rows && mask.cols() == cols && !mask(i, j);
        if (masked) continue;
        const std::string t = CellText(v);
        const ImVec2 ts = small.Measure(t);
        if (ts.x > cw - 2) continue;
        Rgb bg = std::isnan(v) ? kNanColor : cm.lut[LutIndex(v, slot.range)];
        const float lum = 0.299f * bg.r + 0.587f * bg.g + 0.114f * bg.b;
        dl->AddText(
            small.font, small.size,
            ImVec2(p0.x + cw * (j + 0.5f) - ts.x * 0.5f, p0.y + ch * (i + 0.5f) - ts.y * 0.5f),
            lum > 140 ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255), t.c_str());
      }
  }

  // -- row labels (queries), thinned so they never overlap; the peaking row is marked
  const int row_step = std::max(1, static_cast<int>(std::ceil(small.size / ch)));
  for (int i = 0; i < rows; i += row_step) {
    const std::string t = Fit(small, RowLabel(state, i), row_label_w - 9);
    const ImVec2 ts = small.Measure(t);
    const bool selected = i == state.row;
    dl->AddText(small.font, small.size,
                ImVec2(p0.x - 6 - ts.x, p0.y + ch * (i + 0.5f) - ts.y * 0.5f),
                selected ? text_color : dim_color, t.c_str());
  }
  if (state.row < rows) {  // a small triangle at the peaking panel's row
    const float y = p0.y + ch * (state.row + 0.5f);
    dl->AddTriangleFilled(ImVec2(p0.x - 5, y - 3), ImVec2(p0.x - 5, y + 3), ImVec2(p0.x - 1, y),
                          IM_COL32(255, 200, 60, 255));
  }
  // -- column labels (keys, or dimensions for the context)
  const float col_slot = rotate ? small.size * 1.3f : col_label_w + 6;
  const int col_step = std::max(1, static_cast<int>(std::ceil(col_slot / cw)));
  for (int j = 0; j < cols; j += col_step) {
    const float x = p0.x + cw * (j + 0.5f);
    if (rotate) {
      const std::string t = Fit(small, ColumnLabel(state, stage, j), col_label_h - 5);
      AddUpwardText(dl, small.font, small.size, ImVec2(x, p0.y - 4), dim_color, t.c_str());
    } else {
      const std::string t = ColumnLabel(state, stage, j);
      const ImVec2 ts = small.Measure(t);
      dl->AddText(small.font, small.size, ImVec2(x - ts.x * 0.5f, p0.y - ts.y - 3), dim_color,
                  t.c_str());
    }
  }

  // -- colorbar with ticks (the mask gets a two-entry legend instead), legends under it
  const bool legend_masked = stage != Stage::kMask && look.use_mask && state.any_masked;
  const int legends = legend_masked + slot.has_nan + slot.has_inf;
  const float legend_h = legends * (small.size + 2) + (legends ? 4 : 0);
  const float bx = p1.x + bar_gap;
  const float bar_h =
      std::max(std::min<float>(img_h, avail_h - legend_h), std::min(60.0f, avail_h - legend_h));
  const ImVec2 b0(bx, p0.y), b1(bx + bar_w, p0.y + bar_h);
  if (stage == Stage::kMask) {
    const Colormap& cm = Colormaps()[look.colormap];
    const float sw = bar_w;
    dl->AddRectFilled(b0, ImVec2(b0.x + sw, b0.y + sw), ToU32(cm.lut[255]));
    dl->AddText(small.font, small.size, ImVec2(b0.x + sw + 3, b0.y - 1), dim_color, "1 allowed");
    AddMaskedSwatch(dl, ImVec2(b0.x, b0.y + sw + 6), ImVec2(b0.x + sw, b0.y + 2 * sw + 6));
    dl->AddText(small.font, small.size, ImVec2(b0.x + sw + 3, b0.y + sw + 5), dim_color,
                "0 masked");
  } else {
    const ImTextureID lut = state.renderer ? reinterpret_cast<ImTextureID>(static_cast<intptr_t>(
                                                 state.renderer->LutTexture(look.colormap)))
                                           : nullptr;
    // The 256 x 1 lookup texture stood upright: u = 1 (high values) at the top.
    dl->AddImageQuad(lut, b0, ImVec2(b1.x, b0.y), b1, ImVec2(b0.x, b1.y), ImVec2(1, 0.5f),
                     ImVec2(1, 0.5f), ImVec2(0, 0.5f), ImVec2(0, 0.5f));
    dl->AddRect(b0, b1, IM_COL32(110, 110, 120, 255));
    const ValueRange r = slot.range;
    const int target = std::clamp(static_cast<int>(bar_h / (small.size * 2.2f)), 2, 6);
    for (double t : NiceTicks(r.lo, r.hi, target)) {
      const float y = b1.y - static_cast<float>((t - r.lo) / (r.hi - r.lo)) * bar_h;
      if (y < b0.y - 0.5f || y > b1.y + 0.5f) continue;
      dl->AddLine(ImVec2(b1.x, y), ImVec2(b1.x + 3, y), dim_color);
      const std::string s = ShortNumber(t);
      dl->AddText(small.font, small.size, ImVec2(b1.x + 5, y - small.size * 0.5f), dim_color,
                  s.c_str());
    }
  }
  // Legend entries under the bar: masked hatch, NaN, inf.
  float ly = b1.y + 6;
  auto legend = [&](auto swatch, const char* text) {
    swatch(ImVec2(bx, ly), ImVec2(bx + bar_w, ly + small.size - 2));
    dl->AddText(small.font, small.size, ImVec2(bx + bar_w + 4, ly - 1), dim_color, text);
    ly += small.size + 2;
  };
  const MaskMatrix& mask = ShownStages(state).mask;
  if (legend_masked) legend([&](ImVec2 a, ImVec2 b) { AddMaskedSwatch(dl, a, b); }, "masked");
  if (slot.has_nan)
    legend([&](ImVec2 a, ImVec2 b) { dl->AddRectFilled(a, b, ToU32(kNanColor)); }, "NaN");
  if (slot.has_inf)
    legend([&](ImVec2 a, ImVec2 b) { dl->AddRectFilled(a, b, IM_COL32(255, 255, 255, 255)); },
           "\xC2\xB1inf");

  // -- interaction: hover, tooltip, row selection, custom-mask painting, context menu
  ImGui::SetCursorScreenPos(p0);
  ImGui::PushID(StageIndex(stage));
  ImGui::InvisibleButton("##cells", ImVec2(static_cast<float>(img_w), static_cast<float>(img_h)),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  const bool square = rows == sh.T && cols == sh.T && stage != Stage::kContext;
  const bool painting_allowed =
      square && state.scenario.mask.kind == MaskKind::kCustom && state.error.empty();
  if (ImGui::IsItemHovered() || (state.paint.active && ImGui::IsMouseHoveringRect(p0, p1))) {
    const ImVec2 mp = ImGui::GetIO().MousePos;
    const int j = std::clamp(static_cast<int>((mp.x - p0.x) / cw), 0, cols - 1);
    const int i = std::clamp(static_cast<int>((mp.y - p0.y) / ch), 0, rows - 1);
    state.hover_next = HoverCell{true, stage, i, j};
    if (painting_allowed && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
      state.paint.active = true;
      state.paint.value = !(mask.rows() > i && mask(i, j));
      Emit(state, SetMaskCell{i, j, state.paint.value}, "mask.paint");
    } else if (state.paint.active && painting_allowed &&
               ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
      const bool now = mask.rows() > i && mask(i, j);
      if (now != state.paint.value) Emit(state, SetMaskCell{i, j, state.paint.value}, "mask.paint");
    } else if (!painting_allowed && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
      Emit(state, SelectRow{i});
    }
    if (!ImGui::IsPopupOpen("heatmap_menu")) DrawCellTooltip(state, stage, i, j);
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Right)) ImGui::OpenPopup("heatmap_menu");
  }
  if (ImGui::BeginPopup("heatmap_menu")) {
    if (ImGui::MenuItem("Export this heatmap as PNG...")) {
      state.dialog = DialogState{DialogKind::kExport, true, DefaultExportName(state, stage),
                                 StageIndex(stage)};
    }
    if (ImGui::MenuItem("Export all heatmaps...")) {
      state.dialog =
          DialogState{DialogKind::kExportAll, true, "attention-figures", StageIndex(stage)};
    }
    ImGui::EndPopup();
  }
  ImGui::PopID();

  // -- highlights from the last frame's hover: the query row everywhere, the key column and
  //    the cell on the T x T maps
  const HoverCell& hv = state.hover;
  if (hv.active && hv.row >= 0 && hv.row < rows) {
    const float y0 = p0.y + ch * hv.row, y1 = y0 + ch;
    dl->AddRect(ImVec2(p0.x - 2, y0 - 1), ImVec2(p1.x + 2, y1 + 1), IM_COL32(0, 0, 0, 200), 0, 0,
                3.0f);
    dl->AddRect(ImVec2(p0.x - 2, y0 - 1), ImVec2(p1.x + 2, y1 + 1), IM_COL32(255, 255, 255, 255), 0,
                0, 1.5f);
    const bool same_kind = (hv.stage == Stage::kContext) == (stage == Stage::kContext);
    if (same_kind && hv.col >= 0 && hv.col < cols) {
      const float x0 = p0.x + cw * hv.col, x1 = x0 + cw;
      dl->AddRect(ImVec2(x0 - 1, p0.y - 1), ImVec2(x1 + 1, p1.y + 1), IM_COL32(255, 255, 255, 110),
                  0, 0, 1.0f);
      dl->AddRect(ImVec2(x0 - 1, y0 - 1), ImVec2(x1 + 1, y1 + 1), IM_COL32(255, 200, 60, 255), 0, 0,
                  2.0f);
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] The panel

void DrawHeatmapsPanel(AppState& state) {
  UploadDirty(state);
  DrawToolbar(state);
  ImGui::NewLine();
  if (!state.engine.has_result()) {
    ErrorText("Nothing to show yet: " + state.error);
    return;
  }
  if (!state.error.empty()) {
    // Loud, above the maps: the edit did not run, and what is shown is the last one that did.
    ImGui::PushStyleColor(ImGuiCol_ChildBg, ImVec4(0.45f, 0.12f, 0.12f, 1.0f));
    const float h =
        ImGui::GetTextLineHeightWithSpacing() * 2 + ImGui::GetStyle().WindowPadding.y * 2;
    ImGui::BeginChild("error", ImVec2(0, h), false, ImGuiWindowFlags_NoScrollbar);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::Text("This edit cannot run: %s", state.error.c_str());
    ImGui::TextDisabled(
        "The heatmaps show the last settings that ran. Fix the setting, or undo (Ctrl+Z).");
    ImGui::PopTextWrapPos();
    ImGui::EndChild();
    ImGui::PopStyleColor();
  }
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float gap_x = ImGui::GetFontSize(), gap_y = 4;
  const ImVec2 cell((avail.x - 2 * gap_x) / 3, (avail.y - gap_y) / 2);
  for (int k = 0; k < kStageCount; ++k) {
    const int col = k % 3, row = k / 3;
    DrawHeatmap(state, StageAt(k),
                ImVec2(origin.x + col * (cell.x + gap_x), origin.y + row * (cell.y + gap_y)), cell);
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + avail.y));
  ImGui::Dummy(ImVec2(0, 0));
}

}  // namespace attnlab::gui
