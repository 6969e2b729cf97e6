// widgets.cpp: see widgets.h.
#include "gui/widgets/widgets.h"

#include <imgui.h>
#include <imgui_internal.h>  // IMGUI_TABLE_MAX_COLUMNS
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/base/text.h"

namespace attnlab::gui {

void BeginToolbarItem(bool first, float width) {
  if (first) return;
  ImGui::SameLine(0, ImGui::GetFontSize());
  if (ImGui::GetContentRegionAvail().x < width) ImGui::NewLine();
}

void WrappedParts(const std::vector<std::string>& parts, const ImVec4* color) {
  ImGui::BeginGroup();
  for (size_t k = 0; k < parts.size(); ++k) {
    BeginToolbarItem(k == 0, ImGui::CalcTextSize(parts[k].c_str()).x);
    if (color)
      ImGui::TextColored(*color, "%s", parts[k].c_str());
    else
      ImGui::TextUnformatted(parts[k].c_str());
  }
  ImGui::EndGroup();
}

void TextWrappedAtSpaces(const char* text, const ImVec4* color) {
  const float width = std::max(ImGui::GetContentRegionAvail().x, ImGui::GetFontSize() * 4.0f);
  auto emit = [&](const std::string& line) {
    if (color)
      ImGui::TextColored(*color, "%s", line.c_str());
    else
      ImGui::TextUnformatted(line.c_str());
  };
  std::string line;
  const char* p = text;
  while (true) {
    const char* end = p + std::strcspn(p, " \n");
    const std::string word(p, end);
    const std::string candidate = line.empty() ? word : line + " " + word;
    if (!line.empty() && ImGui::CalcTextSize(candidate.c_str()).x > width) {
      emit(line);
      line = word;
    } else {
      line = candidate;
    }
    if (*end == '\0') break;
    if (*end == '\n') {
      emit(line);
      line.clear();
    }
    p = end + 1;
  }
  emit(line);
}

float LabeledWidth(float field, const char* label) {
  return field + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label, nullptr, true).x;
}

void Tip(const char* text) {
  if (!ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) return;
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28.0f);
  ImGui::TextUnformatted(text);
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

void HelpMarker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  Tip(text);
}

bool SeedInput(const char* label, uint64_t* seed, const char* tip) {
  bool changed = false;
  ImGui::PushID(label);
  const float button = ImGui::GetFrameHeight();
  const float spacing = ImGui::GetStyle().ItemInnerSpacing.x;
  const float new_w = ImGui::CalcTextSize("new").x + ImGui::GetStyle().FramePadding.x * 2;
  ImGui::SetNextItemWidth(
      std::max(60.0f, ImGui::CalcItemWidth() - 2 * (button + spacing) - new_w - spacing));
  changed |= ImGui::InputScalar("##seed", ImGuiDataType_U64, seed);
  Tip(tip);
  ImGui::SameLine(0, spacing);
  if (ImGui::Button("-", ImVec2(button, 0)) && *seed > 0) {
    --*seed;
    changed = true;
  }
  Tip("Previous seed (seed - 1)");
  ImGui::SameLine(0, spacing);
  if (ImGui::Button("+", ImVec2(button, 0))) {
    ++*seed;
    changed = true;
  }
  Tip("Next seed (seed + 1)");
  ImGui::SameLine(0, spacing);
  if (ImGui::Button("new")) {
    static std::mt19937_64 dice{std::random_device{}()};
    *seed = dice() % 100000;
    changed = true;
  }
  Tip("A random new seed (0 to 99999)");
  ImGui::SameLine(0, spacing);
  ImGui::TextUnformatted(label);
  ImGui::PopID();
  return changed;
}

bool OptionalSeedInput(const char* label, std::optional<uint64_t>* seed, const char* tip,
                       const char* unseeded) {
  bool changed = false;
  ImGui::PushID(label);
  bool reseed = seed->has_value();
  if (ImGui::Checkbox("##reseed", &reseed)) {
    *seed = reseed ? std::optional<uint64_t>(0) : std::nullopt;
    changed = true;
  }
  Tip("Ticked: torch.manual_seed(seed) right before these draws.\nUnticked: no reseed, the "
      "generator goes on from the previous draws, as a notebook does when it does not reseed.");
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  if (seed->has_value()) {
    uint64_t v = **seed;
    // The checkbox takes its width from the seed box, so the label stays whole.
    ImGui::PushItemWidth(ImGui::CalcItemWidth() - ImGui::GetFrameHeight() -
                         ImGui::GetStyle().ItemInnerSpacing.x);
    const bool edited = SeedInput(label, &v, tip);
    ImGui::PopItemWidth();
    if (edited) {
      *seed = v;
      changed = true;
    }
  } else {
    ImGui::PushTextWrapPos(0.0f);  // wraps at the column's edge: "unseeded: ..." is long
    ImGui::TextDisabled("%s: %s", label, unseeded ? unseeded : "continues the generator");
    ImGui::PopTextWrapPos();
    Tip(tip);
  }
  ImGui::PopID();
  return changed;
}

bool IntInput(const char* label, int64_t* value, int64_t lo, int64_t hi, const char* tip) {
  const int64_t step = 1;
  int64_t v = *value;
  const bool edited = ImGui::InputScalar(label, ImGuiDataType_S64, &v, &step);
  Tip(tip);
  v = std::clamp(v, lo, hi);
  if (edited && v != *value) {
    *value = v;
    return true;
  }
  return false;
}

namespace {

/// The columns a wide matrix shows at once (half a table's limit: a step of the arrows).
constexpr int64_t kColumnWindow = IMGUI_TABLE_MAX_COLUMNS / 2;

/// Above a matrix wider than a table can be: "columns a-b of N" with < and > (a window's width
/// each) and a slider for the first column shown. Returns the first column; it is kept in the
/// window's state storage under `id`, so each editor remembers its own.
int64_t ColumnWindowPicker(const char* id, int64_t cols, int64_t shown) {
  ImGui::PushID(id);
  int* first = ImGui::GetStateStorage()->GetIntRef(ImGui::GetID("##first_column"), 0);
  const int last_first = static_cast<int>(cols - shown);
  *first = std::clamp(*first, 0, last_first);
  const float spacing = ImGui::GetStyle().ItemInnerSpacing.x;
  if (ImGui::ArrowButton("##left", ImGuiDir_Left))
    *first = std::max(0, *first - static_cast<int>(shown));
  Tip("The previous columns");
  ImGui::SameLine(0, spacing);
  if (ImGui::ArrowButton("##right", ImGuiDir_Right))
    *first = std::min(last_first, *first + static_cast<int>(shown));
  Tip("The next columns");
  ImGui::SameLine(0, spacing);
  ImGui::SetNextItemWidth(std::max(80.0f, ImGui::GetContentRegionAvail().x));
  char text[96];
  std::snprintf(text, sizeof text, "columns %d-%d of %lld", *first,
                *first + static_cast<int>(shown) - 1, static_cast<long long>(cols));
  ImGui::SliderInt("##first", first, 0, last_first, text,
                   ImGuiSliderFlags_AlwaysClamp | ImGuiSliderFlags_NoInput);
  Tip("This matrix has more columns than one table shows: the editor shows a window of them. "
      "Drag to move it, or use the arrows.");
  ImGui::PopID();
  return *first;
}

}  // namespace

bool NumberCell(const char* id, float* v) {
  // Which of the two widgets the cell is this frame: a drag that began with Alt stays a drag
  // until it is let go (ImGui's storage remembers it per cell), and a cell being typed in
  // stays a text field even if Alt is pressed.
  const ImGuiID key = ImGui::GetID(id);
  ImGuiStorage* storage = ImGui::GetStateStorage();
  const bool active = ImGui::GetActiveID() == key;
  const bool drag = storage->GetBool(key, false) || (ImGui::GetIO().KeyAlt && !active);
  bool changed = false;
  if (drag) {
    changed = ImGui::DragFloat(id, v, 0.01f, 0.0f, 0.0f, "%.4f");
    storage->SetBool(key, ImGui::IsItemActive());
  } else {
    changed = ImGui::InputFloat(id, v, 0.0f, 0.0f, "%.4f", ImGuiInputTextFlags_AutoSelectAll);
  }
  return changed;
}

void MatrixEditor(const char* id, const Matrix& m, float height, const MatrixEditorCallbacks& cb) {
  const int64_t rows = m.rows(), cols = m.cols();
  if (rows == 0 || cols == 0) {
    ImGui::TextDisabled("(empty)");
    return;
  }
  // A Dear ImGui table holds at most IMGUI_TABLE_MAX_COLUMNS columns (it asserts beyond): one
  // is the row labels, so a wider matrix shows a window of its columns with a picker above.
  const int64_t shown = cols + 1 <= IMGUI_TABLE_MAX_COLUMNS ? cols : kColumnWindow;
  const int64_t col0 = shown < cols ? ColumnWindowPicker(id, cols, shown) : 0;
  const float cell_w = ImGui::CalcTextSize("-0.0000").x + 8;
  // Row labels give up width (down to "x000") before the table needs a horizontal scrollbar.
  const float pad = ImGui::GetStyle().CellPadding.x * 2 + 1;
  const float label_min = ImGui::CalcTextSize("x000").x;
  const float label_w = cb.edit_row_label
                            ? std::clamp(ImGui::GetContentRegionAvail().x -
                                             static_cast<float>(shown) * (cell_w + pad) - pad,
                                         label_min, ImGui::CalcTextSize("journey__").x)
                            : label_min;
  const ImGuiTableFlags flags = ImGuiTableFlags_ScrollX | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_SizingFixedFit;
  const float row_h = ImGui::GetFrameHeight() + ImGui::GetStyle().CellPadding.y * 2;
  height = std::min(height, row_h * (rows + 1) + ImGui::GetStyle().ScrollbarSize + 4);
  if (!ImGui::BeginTable(id, static_cast<int>(shown + 1), flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, label_w);
  for (int64_t j = col0; j < col0 + shown; ++j)
    ImGui::TableSetupColumn(cb.col_label(j).c_str(), ImGuiTableColumnFlags_WidthFixed, cell_w);
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(rows));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      ImGui::TableNextRow();
      ImGui::PushID(i);
      ImGui::TableSetColumnIndex(0);
      if (cb.edit_row_label) {
        std::string label = cb.row_label(i);
        ImGui::SetNextItemWidth(-FLT_MIN);
        if (ImGui::InputText("##label", &label)) cb.edit_row_label(i, label);
        Tip("The token's label (shown on the heatmaps' axes)");
      } else {
        ImGui::AlignTextToFramePadding();
        ImGui::TextUnformatted(cb.row_label(i).c_str());
      }
      for (int64_t j = col0; j < col0 + shown; ++j) {
        ImGui::TableSetColumnIndex(static_cast<int>(j - col0 + 1));
        ImGui::PushID(static_cast<int>(j));
        float v = m(i, j);
        ImGui::SetNextItemWidth(-FLT_MIN);
        if (NumberCell("##v", &v)) cb.on_cell(i, j, v);
        if (ImGui::IsItemHovered() && !ImGui::IsItemActive())
          ImGui::SetTooltip(
              "row %d (%s), column %s: %.6g\nClick and type a number (Enter or a "
              "click elsewhere ends it); hold Alt and drag to change it by "
              "dragging.",
              i, cb.row_label(i).c_str(), cb.col_label(j).c_str(), m(i, j));
        ImGui::PopID();
      }
      ImGui::PopID();
    }
  }
  ImGui::EndTable();
}

std::string ShortText(const std::string& text, size_t bytes) {
  if (text.size() <= bytes) return text;
  size_t cut = text.rfind(' ', bytes);
  if (cut == std::string::npos || cut < bytes / 2) {
    cut = bytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  }
  std::string out = text.substr(0, cut);
  while (!out.empty() && (out.back() == ' ' || out.back() == ',' || out.back() == ':'))
    out.pop_back();
  return out + "\u2026";
}

void ErrorText(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
  ImGui::PushTextWrapPos(0.0f);
  // Escaped and cut: a message quoting a file's text stays one paragraph of plain text.
  ImGui::TextUnformatted(MessageText(text, 8 * kMessageQuoteChars).c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

bool StepControls(const char* id, int64_t* step, int64_t count, bool* playing) {
  ImGui::PushID(id);
  const int64_t before = *step;
  const bool was_playing = *playing;
  ImGui::BeginDisabled(*step <= 0);
  if (ImGui::Button("\u25C0 back")) *step -= 1;
  ImGui::EndDisabled();
  Tip("Undo the last step.");
  ImGui::SameLine();
  ImGui::BeginDisabled(*step + 1 >= count);
  if (ImGui::Button("step \u25B6")) *step += 1;
  ImGui::EndDisabled();
  Tip("Take the next step.");
  ImGui::SameLine();
  if (ImGui::Button(*playing ? "pause" : "play")) {
    if (!*playing && *step + 1 >= count) *step = 0;  // play again from the start
    *playing = !*playing;
  }
  Tip("Take a step every 0.7 s until the last.");
  ImGui::SameLine();
  int shown = static_cast<int>(*step) + 1;
  ImGui::SetNextItemWidth(
      std::max(ImGui::GetFontSize() * 8, ImGui::GetContentRegionAvail().x * 0.4f));
  if (ImGui::SliderInt("##scrub", &shown, 1, static_cast<int>(std::max<int64_t>(count, 1)),
                       "step %d")) {
    *step = shown - 1;
    *playing = false;
  }
  Tip("Scrub through the steps.");
  ImGui::SameLine();
  ImGui::TextDisabled("of %lld", static_cast<long long>(count));
  ImGui::PopID();
  *step = std::clamp<int64_t>(*step, 0, std::max<int64_t>(count - 1, 0));
  return *step != before || *playing != was_playing;
}

std::string ValuesTableCell(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char text[48];
  std::snprintf(text, sizeof text, "%.4f", v);
  return text;
}

namespace {
/// ValuesTable's natural width (labels and every column at "-0.0000") and its row height.
struct ValuesTableMetrics {
  float natural_w, row_h;
};
ValuesTableMetrics MeasureValuesTable(const std::vector<std::string>& row_labels, int cols) {
  const ImGuiStyle& style = ImGui::GetStyle();
  float label_w = 0;
  for (const std::string& l : row_labels)
    label_w = std::max(label_w, ImGui::CalcTextSize(l.c_str()).x);
  const float cell_w = ImGui::CalcTextSize("-0.0000").x + 2 * style.CellPadding.x + 1;
  return {label_w + 2 * style.CellPadding.x + cols * cell_w,
          ImGui::GetTextLineHeight() + 2 * style.CellPadding.y};
}
int TableColumns(Eigen::Index cols) {
  return static_cast<int>(std::min<Eigen::Index>(cols, IMGUI_TABLE_MAX_COLUMNS - 1));
}
}  // namespace

float ValuesTableHeight(const std::vector<std::string>& row_labels, Eigen::Index rows,
                        Eigen::Index cols, float width) {
  const ValuesTableMetrics m = MeasureValuesTable(row_labels, TableColumns(cols));
  const float table_h = (rows + 1) * m.row_h;
  return m.natural_w > width ? table_h + ImGui::GetStyle().ScrollbarSize + 2 : table_h;
}

void ValuesTable(const char* id, const std::vector<std::string>& row_labels,
                 const std::vector<std::string>& col_labels, const MatrixD& values,
                 const std::function<bool(int64_t, int64_t)>& shown, int64_t highlight_row) {
  const int cols = TableColumns(values.cols());
  if (cols <= 0 || values.rows() == 0) return;
  // A table wider than the space left scrolls sideways with its labels frozen, instead of
  // squeezing the last columns until their numbers vanish.
  const ValuesTableMetrics m = MeasureValuesTable(row_labels, cols);
  const float avail_w = ImGui::GetContentRegionAvail().x;
  const bool scroll = m.natural_w > avail_w;
  ImGuiTableFlags flags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoHostExtendX;
  ImVec2 outer(0, 0);
  if (scroll) {
    flags |= ImGuiTableFlags_ScrollX;
    outer = ImVec2(avail_w, ValuesTableHeight(row_labels, values.rows(), cols, avail_w));
  }
  if (!ImGui::BeginTable(id, cols + 1, flags, outer)) return;
  if (scroll) ImGui::TableSetupScrollFreeze(1, 0);
  ImGui::TableSetupColumn("");
  for (int c = 0; c < cols; ++c)
    ImGui::TableSetupColumn(c < static_cast<int>(col_labels.size()) ? col_labels[c].c_str() : "");
  ImGui::TableHeadersRow();
  const ImVec4 lit(1.0f, 0.85f, 0.35f, 1.0f);
  for (Eigen::Index r = 0; r < values.rows(); ++r) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const bool hl = r == highlight_row;
    if (hl) ImGui::PushStyleColor(ImGuiCol_Text, lit);
    ImGui::TextUnformatted(r < static_cast<Eigen::Index>(row_labels.size()) ? row_labels[r].c_str()
                                                                            : "");
    for (int c = 0; c < cols; ++c) {
      ImGui::TableNextColumn();
      if (shown && !shown(r, c)) {
        ImGui::TextDisabled("%s", kValuesTableHidden);
        continue;
      }
      ImGui::TextUnformatted(ValuesTableCell(values(r, c)).c_str());
    }
    if (hl) ImGui::PopStyleColor();
  }
  ImGui::EndTable();
}

void LongWrappedText(std::string_view text) {
  ImFont* font = ImGui::GetFont();
  const float size = ImGui::GetFontSize(), line_h = ImGui::GetTextLineHeight();
  const float width = std::max(ImGui::GetContentRegionAvail().x, size);
  const float scale = size / font->FontSize;
  // Each line as [begin, end) of `text`: paragraphs at '\n', then ImGui's word wrap, which
  // skips the blanks a wrap leaves at the start of the next line (as ImFont::RenderText does).
  std::vector<std::pair<const char*, const char*>> lines;
  const char* p = text.data();
  const char* const end = p + text.size();
  while (true) {
    const char* para_end = static_cast<const char*>(std::memchr(p, '\n', end - p));
    if (!para_end) para_end = end;
    const char* s = p;
    do {
      const char* eol = font->CalcWordWrapPositionA(scale, s, para_end, width);
      if (eol <= s && s < para_end) {  // not even one letter fits: take one code point
        unsigned int c = 0;
        eol = s + std::max(ImTextCharFromUtf8(&c, s, para_end), 1);
      }
      lines.emplace_back(s, eol);
      s = eol;
      while (s < para_end && (*s == ' ' || *s == '\t')) ++s;
    } while (s < para_end);
    if (para_end == end) break;
    p = para_end + 1;
  }
  const ImVec2 pos = ImGui::GetCursorScreenPos();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float clip_top = draw->GetClipRectMin().y, clip_bottom = draw->GetClipRectMax().y;
  const ImU32 color = ImGui::GetColorU32(ImGuiCol_Text);
  const size_t first = clip_top > pos.y ? static_cast<size_t>((clip_top - pos.y) / line_h) : 0;
  for (size_t i = first; i < lines.size(); ++i) {
    const float y = pos.y + line_h * static_cast<float>(i);
    if (y > clip_bottom) break;
    draw->AddText(font, size, ImVec2(pos.x, y), color, lines[i].first, lines[i].second);
  }
  ImGui::Dummy(ImVec2(width, line_h * static_cast<float>(lines.size())));
}

}  // namespace attnlab::gui
