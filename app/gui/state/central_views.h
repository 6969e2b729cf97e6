// central_views.h: the central views (the tabs above the centre: Heatmaps, Trick, ...), one row
// each: the one table the tabs, the View menu, the Ctrl+N keys, the scripts' `view NAME`, the
// layout's and save-views' JSON read. Adding a view: its enum value and its row here (the
// static_asserts below fail until both are there), its panel's Draw<Name>Panel in
// shell/window.cpp's kDrawView, and, if it computes, its Refresh<Name> in actions/views.cpp's
// kRefreshView (CONTRIBUTING.md, "Adding a central view").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace attnlab::gui {

/// What the central area shows (the tabs, View menu, Ctrl+1..9).
enum class CentralView {
  kHeatmaps,
  kTrick,
  kCompare,
  kCode,
  kGradients,
  kTraining,
  kDecode,
  kTiled,
  kTokens,
  kMicrogpt,
  kEnd  ///< not a view: the number of views, for the check that each has a row
};

/// One central view's facts.
struct CentralViewRow {
  CentralView view;
  const char* name;  ///< in scripts (`view NAME`), save-views and --layout's JSON
  const char* tab;   ///< the tab's label
  const char* menu;  ///< the View menu's label (the tab's tooltip title)
  const char* tip;   ///< what the view shows, for the tab's and the menu's tooltip
};

/// Every central view, in enum order (which is the tabs' order and the Ctrl+N keys').
inline constexpr CentralViewRow kCentralViews[] = {
    {CentralView::kHeatmaps, "heatmaps", "Heatmaps", "Heatmaps",
     "The six stages as heatmaps, softmax peaking and why 1/\u221Ad_k."},
    {CentralView::kTrick, "trick", "Trick", "Averaging trick, step by step",
     "Karpathy's mathematical trick: a loop, a tril matmul and a masked softmax give the same "
     "averages; a real head does not."},
    {CentralView::kCompare, "compare", "Compare", "Compare A and B",
     "Two settings side by side: scaled vs unscaled, causal vs none, two heads, two "
     "temperatures, or a pinned snapshot; their difference and row entropies."},
    {CentralView::kCode, "code", "Code", "PyTorch code",
     "The PyTorch program that computes what you see, ready to copy."},
    {CentralView::kGradients, "gradients", "Gradients", "Gradients",
     "Why 1/\u221Ad_k helps learning: the softmax's Jacobian dies as a row peaks; the gradients "
     "of \"row i should attend to key j\" through scores, Q and K."},
    {CentralView::kTraining, "training", "Training", "Train a head, scaled vs unscaled",
     "Train this scenario's head with Adam on a small task, with and without 1/\u221Ad_k, and "
     "watch the loss curves and the attention form."},
    {CentralView::kDecode, "decode", "Decode", "Decode with a KV cache",
     "Generate token by token: a prefill, then one query per step against the cached K and V; "
     "each row next to the full computation's."},
    {CentralView::kTiled, "tiled", "Tiled", "FlashAttention's tiles",
     "The online softmax tile by tile: running maximum m, sum l, the rescale exp(m_old \u2212 "
     "m_new); O / l against ordinary attention."},
    {CentralView::kTokens, "tokens", "Tokens", "Attention between tokens",
     "The sentence itself: a line from each query token to each key it may attend to, as "
     "opaque as the weight; hover a token to colour the other side by its weights."},
    {CentralView::kMicrogpt, "microgpt", "microgpt", "Karpathy's microgpt, bit for bit",
     "Train the tiny GPT of microgpt.py on names (or open a saved run), scrub its steps and "
     "watch its four heads learn."},
};
inline constexpr int kCentralViewCount = static_cast<int>(std::size(kCentralViews));

namespace central_views_detail {
constexpr bool RowsInEnumOrder() {
  for (int k = 0; k < kCentralViewCount; ++k)
    if (static_cast<int>(kCentralViews[k].view) != k) return false;
  return true;
}
}  // namespace central_views_detail
static_assert(central_views_detail::RowsInEnumOrder(), "kCentralViews: one row per view, in order");
static_assert(static_cast<int>(CentralView::kEnd) == kCentralViewCount,
              "kCentralViews: a view without a row");

/// The view's row.
inline const CentralViewRow& ViewRow(CentralView v) { return kCentralViews[static_cast<int>(v)]; }

/// The view's shortcut, "Ctrl+1" ... "Ctrl+9" for the first nine, "" for the rest (Ctrl+0 is
/// the zoom's).
inline std::string ViewKeys(CentralView v) {
  const int k = static_cast<int>(v);
  return k < 9 ? "Ctrl+" + std::to_string(k + 1) : "";
}

/// The view named `name` (CentralViewRow::name), or nullopt.
inline std::optional<CentralView> ParseCentralView(std::string_view name) {
  for (const CentralViewRow& row : kCentralViews)
    if (name == row.name) return row.view;
  return std::nullopt;
}

}  // namespace attnlab::gui
