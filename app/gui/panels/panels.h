// panels.h: one function per panel, one panel per file (panels/<name>_panel.cpp). Each reads
// AppState and emits actions; none changes the scenario itself. window.cpp lays them out.
#pragma once

#include <string>
#include <vector>

#include "gui/state/inference_view.h"

namespace attnlab {
struct Scenario;
}

namespace attnlab::gui {

struct AppState;

// The controls column shows chapter 3's controls (Input, Projections, Attention) and one
// "Modern attention" section for the rest; each panel file draws its part of both.

/// Preset picker; text with tokenizer, an editable embedding matrix, or randn; seeds; sizes.
void DrawInputPanel(AppState& state);
/// The input's modern part: the dtype (and the float32 softmax) and the generator.
void DrawInputModern(AppState& state);
/// W_query, W_key, W_value: how they are made (init, seed, d_out, heads) and their values.
void DrawProjectionPanel(AppState& state);
/// The projections' modern part: draw order, one module per head, bias, output projection,
/// K/V heads, how heads are split.
void DrawProjectionModern(AppState& state);
/// Scaling by 1/sqrt(d_k), the multiplier (1/temperature), the mask (none, causal, custom),
/// normalization, dropout.
void DrawAttentionPanel(AppState& state);
/// Attention's modern part: soft-capping, the sink, today's mask kinds (sliding window,
/// prefix-LM, documents, and / or), masked rows and the mask's fill value.
void DrawAttentionModern(AppState& state);
/// The "Modern attention" section's body: DrawAttentionModern, the positions, DrawInputModern,
/// DrawProjectionModern, each under a small heading.
void DrawModernAttentionPanel(AppState& state);
/// Whether `s` uses anything of the "Modern attention" section (then a preset opens it).
/// The "positions" of the scenario (none, RoPE and its fields, sinusoidal) and RoPE's shift check.
void DrawPositionsPanel(AppState& state);
/// The six heatmaps with head and batch selectors, colorbars, tooltips and export.
void DrawHeatmapsPanel(AppState& state);
/// The height DrawHeatmapsPanel needs to show every stage map whole with 4 decimals (toolbar
/// included) `width` pixels wide; 0 when its maps print no numbers (more than 12 tokens,
/// numbers off) or another layout is on (a focused stage, every head).
float HeatmapsPanelNeed(AppState& state, float width);
/// The chosen query row's weights as bars, and its entropy against the multiplier.
void DrawPeakingPanel(AppState& state);
/// var(q.k) against d, unscaled and scaled, and the histogram of the dot products.
void DrawVariancePanel(AppState& state);
/// File, Edit, Presets, View menus.
void DrawMenuBar(AppState& state);
/// The bug gallery's entries as menu items (the Compare view's "Bug gallery" button and the
/// Presets menu's "Bug gallery" submenu): one loads the bug as B beside its fix as A.
void DrawBugGalleryItems(AppState& state);
/// The presets as selectable items under their group headings, in the registry's reading
/// order (presets.h), each with its title; the bug gallery's presets are left out (they open
/// through DrawBugGalleryItems). `menu`: menu items (the Presets menu) rather than a combo's
/// selectables (the Input section's picker).
void DrawPresetItems(AppState& state, bool menu);
/// The Open, Save As and Export dialogs (ImGui popups with a path field).
void DrawFileDialogs(AppState& state);
/// The error of the current edit, or the last message, and the sizes of what is shown.
void DrawStatusBar(AppState& state);
/// The PyTorch program of what is shown (read-only, monospace), with Copy.
void DrawCodePanel(AppState& state);
/// The averaging trick: v1 loop, v2 tril, v3 masked softmax, v4 a head; allclose against v1.
void DrawTrickPanel(AppState& state);
/// A against B: two heatmaps of a stage, their difference, and the row entropies.
void DrawComparePanel(AppState& state);
/// Edit > Check against my output: paste a notebook's print, see which stage it is (or which
/// mistake explains it), its cells marked where they differ (match.h).
void DrawCheckOutputPanel(AppState& state);
/// The guided tour's card beside the heatmap it is about, and the highlight (its own window).
void DrawTourPanel(AppState& state);
/// The softmax Jacobian of the query row, its norm against the multiplier, and the gradients
/// of "row i should attend to key j" (click a key) through scores, Q and K (grad.h).
void DrawGradientPanel(AppState& state);
/// One line under the compare view's maps: "gradient reaching W_query: ||dL/dW_q||" of A and B
/// for the peaking row and the loss key (compare_panel.cpp calls it; gradient_panel.cpp).
void DrawCompareGradientReadout(AppState& state);
/// Training: a head trained scaled and unscaled in the background, loss curves, attention by step.
void DrawTrainPanel(AppState& state);
/// Decoding with a KV cache, step by step: the step's keys, cache and weights, its context row
/// beside the full computation's (inference_view.h).
void DrawDecodePanel(AppState& state);
/// FlashAttention's forward loop, tile by tile: the tiles, m, l, the rescale and O per row,
/// O / l beside ordinary attention (inference_view.h).
void DrawTiledPanel(AppState& state);
/// One of a view's two settings in its toolbar: an IntInput within [lo, hi].
struct InferenceSetting {
  const char* label;
  SetInference::Field field;
  int64_t value, lo, hi;
  const char* tip;
};

/// A stepped view's toolbar: its two settings, then the step controls (widgets.h StepControls)
/// of `count` steps with `step` shown; each change is emitted as SetInference (step_field for
/// the step, kPlay for play / pause).
void DrawInferenceToolbar(AppState& state, const InferenceSetting (&settings)[2],
                          SetInference::Field step_field, int64_t step, int64_t count);

/// The microgpt view (microgpt_panel.cpp, microgpt_view.h).
void DrawMicrogptPanel(AppState& state);

/// The Tokens view (tokens_panel.cpp): the sentence with a line per query-key pair whose
/// opacity is the weight (core figures/token_view.h); hover or click a token.
void DrawTokensPanel(AppState& state);

}  // namespace attnlab::gui
