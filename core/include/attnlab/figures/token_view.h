// token_view.h: attention on the sentence (BertViz's head view, CircuitsVis's token colouring, in
// the project's own drawing): the tokens as text, the queries in a left column and the keys in a
// right one, a line from query i to key j for every allowed pair whose opacity is the attention
// weight weights[b, h, i, j], one colour per head. The window's Tokens view and `attention-lab
// export --stage tokens` both draw TokenViewLayout's geometry (DrawTokenFigure here, ImGui's draw
// list in the window), so the lines on screen and in the file are the same lines.
//
// Masked pairs (mask[i, j] == 0) draw no line; with scaling.sink the sink is a pseudo-token above
// the keys whose line from query i has the sink's share sink[b, h, i] as its opacity; with grouped
// K/V heads (projections.kv_heads) every line carries the key head its query head reads, and the
// legend names which query heads share each key head.
//
// Legend: B batch, H heads (query heads), KV key/value heads, T tokens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/figures/colormap.h"
#include "attnlab/figures/figure.h"
#include "attnlab/model/pipeline.h"

namespace attnlab {

/// The colour of head h's lines (10 distinct hues, repeating beyond 10 heads). Errors: none.
Rgb TokenHeadColor(int64_t h);

/// What is hovered or locked: a query token, a key token (key == T: the sink), or nothing.
struct TokenSelection {
  enum class Side { kNone, kQuery, kKey };
  Side side = Side::kNone;
  int64_t index = 0;
  bool operator==(const TokenSelection& o) const {
    return side == o.side && (side == Side::kNone || index == o.index);
  }
};

/// The choices of a token view, in pixels (y down).
struct TokenViewOptions {
  int64_t head = -1;  ///< the head shown, or -1 for all heads (one colour each)
  int64_t batch = 0;
  TokenSelection selection;
  float label_width = 120;  ///< the text column of each side (the caller measures its tokens)
  float row_height = 22;    ///< one token per row
  float gap = 240;          ///< between the query anchors and the key anchors (the lines' span)
  float margin = 8;         ///< around the whole picture
  float top = 0;            ///< above the first row (a title's height)
};

/// One token on one side: its text, the box of its row and the point its lines start or end.
struct TokenPlace {
  std::string text;  ///< TokenLabels' text (heatmap_spec.h), "sink" for the sink
  int64_t position;  ///< 0..T-1, T for the sink
  float x, y, w, h;  ///< the row's box (the text column)
  float anchor_x;    ///< where the lines meet it (the box's inner edge)
  float anchor_y;    ///< the row's middle
  float share = 0;   ///< the selection's weight on this token (0..1; 0 when nothing selected)
  bool selected = false;
};

/// One line: query `query` to key `key` (T: the sink) of head `head`, which reads key head
/// `kv_head`; `opacity` is weights[batch, head, query, key] (or the sink's share) exactly.
struct TokenLine {
  int64_t query, key, head, kv_head;
  float x0, y0, x1, y1;
  float opacity;
  Rgb color;
  bool dimmed = false;  ///< something else is selected: drawn faint
};

/// The legend: a head's colour, and its key head when K/V heads are grouped.
struct TokenLegend {
  int64_t head, kv_head;
  Rgb color;
  std::string text;  ///< "head 2" or "head 2 (key head 1)"
};

/// The whole picture laid out.
struct TokenViewGeometry {
  std::vector<TokenPlace> queries;  ///< T
  std::vector<TokenPlace> keys;     ///< T, then the sink when the scenario has one
  std::vector<TokenLine> lines;     ///< head by head, then query by query, key by key
  std::vector<TokenLegend> legend;  ///< one per head shown
  std::string groups;  ///< "heads 0, 1 share key head 0; heads 2, 3 share key head 1" or ""
  float width = 0, height = 0;
};

/// The token view of batch options.batch of the run `st` (of `scenario`): queries at
/// x = margin .. margin + label_width, keys gap pixels to the right, row i at
/// y = top + margin + (i + 1) * row_height when there is a sink (its row first on the key side),
/// else + i * row_height. Lines: for each head shown (options.head, or all H), each query i and
/// each key j with mask[i, j] != 0, opacity weights[b, h, i, j]; with a sink one more line per
/// query, opacity sink[b, h, i]. A selected query gives each key the share weights[b, h, i, j]
/// (the mean over the heads shown when all are), a selected key each query its weight on that
/// key; lines not touching the selection are dimmed. Errors: std::invalid_argument naming a head
/// or batch out of range, or a run without weights.
TokenViewGeometry TokenViewLayout(const Stages& st, const Scenario& scenario,
                                  const TokenViewOptions& options);

/// The figure's title: "attention between tokens · head 0 of 2" (all heads: "· 2 heads").
std::string TokenViewTitle(const Stages& st, const TokenViewOptions& options);

/// The token view as a figure (`export --stage tokens`): TokenViewLayout with each side's
/// label width measured by pango, under TokenViewTitle and a subtitle of the rule ("line
/// opacity = attention weight; masked pairs have no line") and the legend, drawn at
/// options.scale by the figure painters (figure.cpp's backends): PNG, SVG (every line a
/// <line> with stroke-opacity the weight) or PDF, carrying `metadata` as FigureFile does.
/// Errors: as TokenViewLayout; FontError; std::runtime_error when cairo fails.
std::string TokenFigureFile(const Stages& st, const Scenario& scenario,
                            const TokenViewOptions& view, const FigureOptions& options,
                            FigureFormat format, const std::string& metadata = "");

}  // namespace attnlab
