// widgets.h: small ImGui helpers the panels share: tooltips, seeds, integers, matrices.
// Each returns true when the learner changed the value this frame; the caller turns that into
// an action (the widgets themselves never touch AppState).
#pragma once

#include <imgui.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnlab/base/tensor.h"

namespace attnlab::gui {

/// A wrapped tooltip on the last item when it is hovered.
void Tip(const char* text);

/// Starts a toolbar item `width` pixels wide, label included (LabeledWidth): on the current line
/// when it fits, else on the next, so toolbars wrap rather than run off a narrow window.
/// `first`: the toolbar's first item (starts where the cursor is).
void BeginToolbarItem(bool first, float width);

/// Text in parts that wrap as wholes, so a number is never cut in two (ImGui's word wrap
/// breaks after a '.'). One group: the caller's Tip covers all of it. `color`: nullptr for
/// the text colour.
void WrappedParts(const std::vector<std::string>& parts, const ImVec4* color = nullptr);

/// Prose wrapped to the available width at spaces and line breaks only, so "1.4754" is never cut
/// after its '.' (ImGui's word wrap breaks after punctuation). A word wider than the width
/// gets a line of its own. `color`: nullptr for the text colour.
void TextWrappedAtSpaces(const char* text, const ImVec4* color = nullptr);

/// The width of a widget with a `field` pixels wide box and a label to its right.
float LabeledWidth(float field, const char* label);

/// A "(?)" marker with a tooltip, on the same line.
void HelpMarker(const char* text);

/// A seed: the number (typed), "-" and "+" steps, and "new" for a random seed.
bool SeedInput(const char* label, uint64_t* seed, const char* tip);

/// An optional seed: "reseed" ticked gives torch.manual_seed(seed) before the draws; unticked,
/// the generator goes on from the previous draws (nullopt), or, when nothing drew before,
/// starts from the default seed: `unseeded` is then UnseededText's words (else nullptr).
bool OptionalSeedInput(const char* label, std::optional<uint64_t>* seed, const char* tip,
                       const char* unseeded = nullptr);

/// An integer with - and + buttons, kept within [lo, hi].
bool IntInput(const char* label, int64_t* value, int64_t lo, int64_t hi, const char* tip);

/// A matrix of drag-or-type cells (double-click or Ctrl+click to type). Rows are labelled by
/// row_label(i), columns by col_label(j). A row label editable by the learner gives
/// edit_row_label (nullptr: fixed labels). Calls on_cell(i, j, value) for each edited cell.
/// Only the visible rows are submitted, so a 2048-row matrix stays fast. A matrix wider than a
/// Dear ImGui table can be (IMGUI_TABLE_MAX_COLUMNS, 64, with the labels' column) shows 32 of
/// its columns at a time, with arrows and a slider above it to pick which.
struct MatrixEditorCallbacks {
  std::function<std::string(int64_t)> row_label;
  std::function<std::string(int64_t)> col_label;
  std::function<void(int64_t, const std::string&)> edit_row_label;  ///< may be empty
  std::function<void(int64_t, int64_t, float)> on_cell;
};
void MatrixEditor(const char* id, const Matrix& m, float height,
                  const MatrixEditorCallbacks& callbacks);

/// Step controls of a stepped view: back (undo a step), step, play / pause and a slider to
/// scrub; `count` steps, `*step` from 0. Returns true when *step or *playing changed.
bool StepControls(const char* id, int64_t* step, int64_t count, bool* playing);

/// The text of one cell of ValuesTable: 4 decimals ("%.4f", torch's print of these values),
/// "nan", "inf", "-inf".
std::string ValuesTableCell(double v);

/// `text` when it has at most `bytes` bytes, else its start cut at the last space before that
/// (or at a whole UTF-8 character) followed by an ellipsis: a title on one line of a menu.
std::string ShortText(const std::string& text, size_t bytes);
/// What ValuesTable prints (dimmed) in a cell its `shown` hides: a masked key.
inline constexpr const char* kValuesTableHidden = "\u00B7";

/// The height ValuesTable takes for `rows` rows of `cols` numbers (and its header) at `width`
/// pixels: one more for the sideways scroll bar when the table is wider.
float ValuesTableHeight(const std::vector<std::string>& row_labels, Eigen::Index rows,
                        Eigen::Index cols, float width);

/// One number of an editable matrix, as a spreadsheet's cell: a single click selects its text
/// and typing replaces it; with Alt held it is a drag instead (sideways changes the value by
/// 0.01 a pixel). Returns true when the value changed (each keystroke or drag step).
bool NumberCell(const char* id, float* v);

/// A read-only table of numbers (ValuesTableCell's text): rows labelled by row_labels, columns
/// by col_labels; cells where `shown` is given and 0 print "\u00B7" (masked). `highlight_row`
/// (-1: none) is drawn in the highlight colour.
void ValuesTable(const char* id, const std::vector<std::string>& row_labels,
                 const std::vector<std::string>& col_labels, const MatrixD& values,
                 const std::function<bool(int64_t, int64_t)>& shown = nullptr,
                 int64_t highlight_row = -1);

/// Text in the colour used for errors, wrapped; control characters escaped and cut
/// (MessageText) so text quoted from a file cannot break it into lines.
void ErrorText(const std::string& text);

/// Text of any length wrapped at the right edge of the content region, as PushTextWrapPos(0)
/// and TextUnformatted, in the current text colour, drawing only the lines inside the clip
/// rectangle. Dear ImGui 1.86 puts every glyph of wrapped text into the window's draw list,
/// visible or not, and aborts past 65,536 vertices (16,384 glyphs: "Too many vertices in
/// ImDrawList using 16-bit indices"): a learner's long paragraph or title. The lines are found
/// once a frame (ImFont::CalcWordWrapPositionA, time linear in the text); a word wider than
/// the width is cut where it reaches the edge.
void LongWrappedText(std::string_view text);

}  // namespace attnlab::gui
