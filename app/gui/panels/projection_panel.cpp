// projection_panel.cpp: how W_query, W_key and W_value (d_in x d_out, x @ W) are made, and their
// values. Editing a value switches the init to "matrix" holding the current values, so the
// learner can start from the notebook's torch.rand weights and nudge one number.
#include <array>
#include <cmath>

#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {
namespace {

void Edit(AppState& state, const char* label, std::function<void(Scenario&)> f,
          std::string merge_key = "") {
  Emit(state, EditScenario{label, std::move(f)}, std::move(merge_key));
}

const char* InitTip(ProjectionInit init) {
  switch (init) {
    case ProjectionInit::kIdentity:
      return "W = I: Q = K = V = X, the notebooks' \"simplified self-attention\" without "
             "trainable weights (d_out = d_in).";
    case ProjectionInit::kTorchRand:
      return "W = torch.rand(d_in, d_out): uniform in [0, 1), as nn.Parameter(torch.rand(...)) "
             "in Raschka's SelfAttention_v1.";
    case ProjectionInit::kRandn:
      return "W = torch.randn(d_in, d_out): standard normal.";
    case ProjectionInit::kLinear:
      return "nn.Linear(d_in, d_out, bias) per projection (kaiming-uniform weights), as in "
             "SelfAttention_v2 and Karpathy's Head. Options: bias, out_proj.";
    case ProjectionInit::kMatrix:
      return "Your own W_query, W_key, W_value: edit the cells below.";
  }
  return "";
}

/// The init as the notebooks write it.
const char* InitLabel(ProjectionInit init) {
  switch (init) {
    case ProjectionInit::kIdentity:
      return "identity (no weights)";
    case ProjectionInit::kTorchRand:
      return "torch.rand";
    case ProjectionInit::kRandn:
      return "torch.randn";
    case ProjectionInit::kLinear:
      return "nn.Linear";
    case ProjectionInit::kMatrix:
      return "your own matrices";
  }
  return "";
}

/// The six draw orders, as the notebooks write them.
const std::array<std::array<Projection, 3>, 6> kOrders = {{
    {Projection::kQuery, Projection::kKey, Projection::kValue},
    {Projection::kQuery, Projection::kValue, Projection::kKey},
    {Projection::kKey, Projection::kQuery, Projection::kValue},
    {Projection::kKey, Projection::kValue, Projection::kQuery},
    {Projection::kValue, Projection::kQuery, Projection::kKey},
    {Projection::kValue, Projection::kKey, Projection::kQuery},
}};

std::string OrderName(const std::array<Projection, 3>& o) {
  return std::string(Name(o[0])) + ", " + Name(o[1]) + ", " + Name(o[2]);
}

/// The init combo: identity, torch.rand, randn, nn.Linear or your own matrices.
void DrawInitCombo(AppState& state, const ProjectionSpec& p) {
  const ProjectionInit inits[] = {ProjectionInit::kIdentity, ProjectionInit::kTorchRand,
                                  ProjectionInit::kRandn, ProjectionInit::kLinear,
                                  ProjectionInit::kMatrix};
  if (ImGui::BeginCombo("init", InitLabel(p.init))) {
    for (ProjectionInit init : inits) {
      if (ImGui::Selectable(InitLabel(init), init == p.init) && init != p.init) {
        const std::array<Matrix, 3> W = state.shown_W;
        const int64_t d_out = std::max<int64_t>(ShownShape(state).d_out, 1);
        Edit(state, "init", [init, W, d_out](Scenario& s) {
          s.projections.init = init;
          if (init == ProjectionInit::kMatrix) s.projections.W = W;  // start from what is shown
          if (init != ProjectionInit::kMatrix) s.projections.W = {};
          if (s.projections.d_out <= 0) s.projections.d_out = d_out;
          if (init != ProjectionInit::kLinear) s.projections.bias = s.projections.out_proj = false;
          if (!ProjectionInitDraws(init)) s.projections.per_head = false;  // nothing to draw
        });
      }
      Tip(InitTip(init));
    }
    ImGui::EndCombo();
  }
  Tip(InitTip(p.init));
}

/// Matrix init: W_key and W_value cut or padded with zeros to KV * dh columns, so that a change
/// of d_out, heads or kv_heads keeps the given W in step (GQA: d_in x kv_heads * d_out / heads).
void FitKeyValueColumns(Scenario& s) {
  ProjectionSpec& p = s.projections;
  if (p.init != ProjectionInit::kMatrix || p.heads < 1 || p.W[0].cols() % p.heads != 0) return;
  const int64_t kv = p.kv_heads > 0 && p.heads % p.kv_heads == 0 ? p.kv_heads : p.heads;
  const int64_t cols = kv * (p.W[0].cols() / p.heads);
  for (int w = 1; w < 3; ++w) {
    Matrix& W = p.W[w];
    Matrix r = Matrix::Zero(W.rows(), cols);
    const int64_t c = std::min<int64_t>(W.cols(), cols);
    r.leftCols(c) = W.leftCols(c);
    W = r;
  }
}

/// The K/V heads input (projections.kv_heads), which query heads share which K/V head, and the
/// K/V cache's bytes per token next to multi-head's.
void DrawKvHeads(AppState& state, const ProjectionSpec& p, const Shape& sh) {
  int64_t kv = p.kv_heads > 0 ? p.kv_heads : p.heads;
  const bool can = p.init != ProjectionInit::kIdentity && !p.per_head;
  ImGui::BeginDisabled(!can && kv == p.heads);
  if (IntInput("K/V heads", &kv, 1, 64,
               can ? "projections.kv_heads: grouped-query attention (GQA, Llama 3, Mistral; "
                     "LLMs-from-scratch's GroupedQueryAttention). W_key and W_value project to "
                     "kv_heads * d_k columns only, and each K/V head is shared by heads / "
                     "kv_heads query heads in a row (repeat_interleave). 1 is multi-query "
                     "attention; = heads is plain multi-head attention. Must divide heads."
                   : "Grouped K/V heads need W narrower than X (not identity) and W drawn "
                     "whole (not one module per head)."))
    Edit(
        state, "K/V heads",
        [kv](Scenario& s) {
          s.projections.kv_heads = kv == s.projections.heads ? 0 : kv;
          FitKeyValueColumns(s);
        },
        "projections.kv_heads");
  ImGui::EndDisabled();
  if (!GroupsKv(sh)) return;
  for (int64_t g = 0; g < sh.Kv(); ++g) ImGui::TextDisabled("%s", KvGroupLegend(sh, g).c_str());
  const Dtype dtype = state.scenario.dtype;
  const int64_t bytes = BytesPerValue(dtype);
  const int64_t gqa = KvBytesPerToken(sh, sh.Kv(), bytes), mha = KvBytesPerToken(sh, sh.H, bytes);
  ImGui::TextDisabled("K/V cache: %lld bytes/token (multi-head: %lld, %lldx more)",
                      static_cast<long long>(gqa), static_cast<long long>(mha),
                      static_cast<long long>(mha / std::max<int64_t>(gqa, 1)));
  Tip(("Per token and layer, a decoder caches K and V: kv_heads * d_k values each, of " +
       std::to_string(bytes) + " bytes (" + Name(dtype) +
       "). With one K/V head per query head: heads * d_k each.")
          .c_str());
}

/// How Q, K and V are split into heads (projections.head_split): the right view and transpose,
/// or the classic mistake of bug-view-no-transpose.
void DrawHeadSplit(AppState& state, const ProjectionSpec& p) {
  const bool can = p.heads > 1 && !p.per_head;
  ImGui::BeginDisabled(!can && p.head_split == HeadSplit::kTranspose);
  const char* shown[] = {"view + transpose", "view, no transpose (bug)"};
  if (ImGui::BeginCombo("split heads", shown[static_cast<int>(p.head_split)])) {
    for (const EnumName<HeadSplit>& e : kHeadSplits) {
      const HeadSplit split = e.value;
      if (ImGui::Selectable(shown[static_cast<int>(split)], split == p.head_split))
        Edit(state, "split heads", [split](Scenario& s) { s.projections.head_split = split; });
    }
    ImGui::EndCombo();
  }
  ImGui::EndDisabled();
  Tip(can ? "projections.head_split: how Q, K and V (T x d_out) become heads of T x d_k. "
            "\"transpose\": q.view(B, T, heads, d_k).transpose(1, 2), head h takes columns "
            "h*d_k .. (h+1)*d_k - 1 of every token. \"view_no_transpose\" is the classic "
            "mistake q.view(B, heads, T, d_k) (annotated-transformer #118): the same memory read "
            "as heads blocks of T rows, so head h gets tokens h*T/heads .. cut into pieces of "
            "d_k, and the heads split the sequence instead of the features. The maps then show Q, "
            "K and V as the heads read them."
          : "Splitting heads needs several heads drawn whole (not one module per head).");
}

/// projections.qk_norm: on / off, before or after the rotation, eps and the scale. A weight
/// (numbers in the scenario file) is shown, not edited here. Each edit is one undo step.
void DrawQkNorm(AppState& state, const ProjectionSpec& p) {
  bool on = p.qk_norm.has_value();
  ImGui::BeginDisabled(p.head_split != HeadSplit::kTranspose && !on);
  if (ImGui::Checkbox("normalize q and k", &on))
    Edit(state, "QK-norm", [on](Scenario& s) {
      if (on)
        s.projections.qk_norm = QkNormSpec{};
      else
        s.projections.qk_norm.reset();
    });
  ImGui::EndDisabled();
  Tip("QK-norm: each head's query and key rows divided by their root mean square, "
      "x / sqrt(mean(x^2) + eps), before the scores (nanochat, Gemma 3, OLMo 2). Every score is "
      "then at most d_k times the scale squared in size, whatever the weights.");
  if (!p.qk_norm) return;
  const QkNormSpec& q = *p.qk_norm;
  ImGui::SameLine();
  bool before = !q.after_rope;
  if (ImGui::Checkbox("before the rotation", &before))
    Edit(state, "QK-norm order",
         [before](Scenario& s) { s.projections.qk_norm->after_rope = !before; });
  Tip("Off: the norm after RoPE's rotation, as nanochat writes it. On: before it, as Gemma's "
      "query_norm and key_norm. Without a weight both give the same attention (a rotation "
      "keeps a row's length); with one they differ. Without RoPE there is nothing to order.");
  double scale = q.scale;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6.0f);
  if (ImGui::InputDouble("scale after the norm", &scale, 0.0, 0.0, "%.6g",
                         ImGuiInputTextFlags_EnterReturnsTrue) &&
      std::isfinite(scale))
    Edit(state, "QK-norm scale", [scale](Scenario& s) { s.projections.qk_norm->scale = scale; });
  Tip("q and k each times this after the norm: nanochat's 1.2 (its scores are then 1.44 times "
      "those of unit rows). Type a number and press Enter.");
  double eps = QkNormEps(q, state.scenario.dtype);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6.0f);
  if (ImGui::InputDouble("eps of the norm", &eps, 0.0, 0.0, "%.3g",
                         ImGuiInputTextFlags_EnterReturnsTrue) &&
      std::isfinite(eps) && eps >= 0)
    Edit(state, "QK-norm eps", [eps](Scenario& s) { s.projections.qk_norm->eps = eps; });
  Tip("Added to the mean square before the root. Unset, it is the dtype's machine epsilon, "
      "F.rms_norm's default (nanochat); Gemma writes 1e-6.");
  if (!q.weight.empty())
    ImGui::TextDisabled("with a weight of %d numbers (from the scenario file)",
                        static_cast<int>(q.weight.size()));
}

/// The d_out and heads inputs, and the d_k they give.
void DrawSizes(AppState& state, const ProjectionSpec& p, const Shape& sh) {
  const bool identity = p.init == ProjectionInit::kIdentity;
  const bool matrix = p.init == ProjectionInit::kMatrix;
  int64_t d_out = matrix ? sh.d_out : (identity ? sh.d_in : p.d_out);
  ImGui::BeginDisabled(identity);
  if (IntInput("d_out", &d_out, 1, 1024,
               identity ? "identity keeps d_out = d_in."
                        : "Width of q, k and v: W is d_in x d_out. With several heads each "
                          "head gets d_out / heads columns (d_k).")) {
    Edit(
        state, "d_out",
        [d_out](Scenario& s) {
          s.projections.d_out = d_out;
          if (s.projections.init == ProjectionInit::kMatrix)  // keep W's columns in step
            for (Matrix& W : s.projections.W) {
              Matrix r = Matrix::Zero(W.rows(), d_out);
              const int64_t c = std::min<int64_t>(W.cols(), d_out);
              r.leftCols(c) = W.leftCols(c);
              W = r;
            }
          FitKeyValueColumns(s);
        },
        "projections.d_out");
  }
  ImGui::EndDisabled();
  int64_t heads = p.heads;
  if (IntInput("heads", &heads, 1, 64,
               "Number of attention heads H. d_out must be divisible by H; head h uses columns "
               "h*d_k .. (h+1)*d_k - 1 of Q, K and V (d_k = d_out / H)."))
    Edit(
        state, "heads",
        [heads](Scenario& s) {
          s.projections.heads = heads;
          ProjectionSpec& p = s.projections;  // K/V heads that no longer divide: one per head
          if (p.kv_heads > 0 && (p.kv_heads >= heads || heads % p.kv_heads != 0)) p.kv_heads = 0;
          FitKeyValueColumns(s);
        },
        "projections.heads");
  ImGui::TextDisabled("d_k = d_out / heads = %lld", static_cast<long long>(sh.dh));
}

bool Drawn(const ProjectionSpec& p) {
  return p.init != ProjectionInit::kIdentity && p.init != ProjectionInit::kMatrix;
}

/// The seed of drawn weights: torch.manual_seed(123) before torch.rand / nn.Linear.
void DrawSeed(AppState& state, const ProjectionSpec& p) {
  if (!Drawn(p)) return;
  std::optional<uint64_t> seed = p.seed;
  const bool unseeded = FirstUnseededDraw(state.scenario) == UnseededDraw::kProjections;
  if (OptionalSeedInput("W seed", &seed,
                        "torch.manual_seed(seed) before the three projections are drawn "
                        "(the book's torch.manual_seed(123)).",
                        unseeded ? UnseededText(state.scenario.input.generator) : nullptr))
    Edit(
        state, "W seed", [seed](Scenario& s) { s.projections.seed = seed; }, "projections.seed");
}

/// The draw order of drawn weights, one module per head, and nn.Linear's bias and out_proj.
void DrawDrawOptions(AppState& state, const ProjectionSpec& p) {
  if (Drawn(p)) {
    if (ImGui::BeginCombo("draw order", OrderName(p.order).c_str())) {
      for (const auto& o : kOrders)
        if (ImGui::Selectable(OrderName(o).c_str(), o == p.order))
          Edit(state, "draw order", [o](Scenario& s) { s.projections.order = o; });
      ImGui::EndCombo();
    }
    Tip("Which projection is drawn from the generator first. Karpathy's Head draws key, "
        "query, value; the same seed in another order gives other weights.");
    bool per_head = p.per_head;
    if (ImGui::Checkbox("one module per head", &per_head))
      Edit(state, "one module per head", [per_head](Scenario& s) {
        s.projections.per_head = per_head;
        if (per_head) s.projections.head_split = HeadSplit::kTranspose;  // nothing is split
      });
    Tip("projections.per_head: each head draws its own W_query, W_key, W_value (d_in x d_k), "
        "head after head, as Raschka's MultiHeadAttentionWrapper stacks CausalAttention "
        "modules; its dropout mask is drawn head by head too. Off: each W is drawn whole "
        "(d_in x d_out) and split into heads, as MultiHeadAttention does. Same seed, other "
        "weights when there are several heads.");
  }
  if (p.init == ProjectionInit::kLinear) {
    bool bias = p.bias, out_proj = p.out_proj;
    if (ImGui::Checkbox("bias", &bias))
      Edit(state, "bias", [bias](Scenario& s) { s.projections.bias = bias; });
    Tip("nn.Linear(..., bias=True): q = x W + b (qkv_bias in Raschka's code).");
    ImGui::SameLine();
    if (ImGui::Checkbox("output projection", &out_proj))
      Edit(state, "out_proj", [out_proj](Scenario& s) { s.projections.out_proj = out_proj; });
    Tip("nn.Linear(d_out, d_out) applied to the context (MultiHeadAttention's out_proj), drawn "
        "after the three projections.");
    if (p.out_proj) {  // out_proj's own bias (projections.out_proj.bias)
      ImGui::SameLine();
      bool out_bias = p.out_proj_bias;
      if (ImGui::Checkbox("out_proj bias", &out_bias))
        Edit(state, "out_proj bias",
             [out_bias](Scenario& s) { s.projections.out_proj_bias = out_bias; });
      Tip("Off: nn.Linear(d_out, d_out, bias=False), as nanoGPT, nanochat, LLMs-from-scratch's "
          "GQA and Gemma's o_proj write it. The generator then draws the weight only, as "
          "PyTorch does, so a dropout mask drawn after it is another one.");
    }
  }
}

/// The W editors: a tab per matrix; editing a cell switches init to "matrix".
void DrawWeightEditors(AppState& state) {
  const std::array<Matrix, 3>& shown_W = state.shown_W;  // readable during a background run
  // Closed at first, as X's cells: the heatmaps show Q, K and V, the products.
  if (!ImGui::TreeNode("edit W_query, W_key, W_value")) {
    Tip("The three matrices cell by cell. Editing one switches init to your own matrices "
        "(without bias and output projection).");
    return;
  }
  if (!ImGui::BeginTabBar("##W")) {
    ImGui::TreePop();
    return;
  }
  const char* names[3] = {"W_query", "W_key", "W_value"};
  for (int w = 0; w < 3; ++w) {
    if (!ImGui::BeginTabItem(names[w])) continue;
    MatrixEditorCallbacks cb;
    cb.row_label = [](int64_t i) { return "in" + std::to_string(i); };
    cb.col_label = [](int64_t j) { return "d" + std::to_string(j); };
    cb.on_cell = [&, w](int64_t i, int64_t j, float v) {
      const std::array<Matrix, 3> W = shown_W;
      Edit(
          state, "W cell",
          [W, w, i, j, v](Scenario& s) {
            if (s.projections.init != ProjectionInit::kMatrix) {
              s.projections.init = ProjectionInit::kMatrix;
              s.projections.W = W;
              s.projections.bias = s.projections.out_proj = false;
              s.projections.per_head = false;
            }
            Matrix& m = s.projections.W[w];
            if (i < m.rows() && j < m.cols()) m(i, j) = v;
          },
          "projections.W." + std::to_string(w) + "." + std::to_string(i) + "." + std::to_string(j));
    };
    MatrixEditor("##Wm", shown_W[w], 150.0f, cb);
    ImGui::EndTabItem();
  }
  ImGui::EndTabBar();
  ImGui::TreePop();
}

}  // namespace

void DrawProjectionModern(AppState& state) {
  const ProjectionSpec& p = state.scenario.projections;
  if (state.scenario.input.source == InputSource::kQkv) return;  // no projections
  DrawDrawOptions(state, p);
  DrawKvHeads(state, p, ShownShape(state));
  DrawHeadSplit(state, p);
  DrawQkNorm(state, p);
}

void DrawProjectionPanel(AppState& state) {
  const ProjectionSpec& p = state.scenario.projections;
  if (state.scenario.input.source == InputSource::kQkv) {
    ImGui::TextWrapped(
        "No projections: Q, K and V come directly from the input (source "
        "\"qkv\"), without X or W.");
    int64_t heads = p.heads;
    if (IntInput("heads", &heads, 1, 64,
                 "Number of attention heads H. d_k must be divisible by H; head h uses columns "
                 "h*d_k/H .. (h+1)*d_k/H - 1 of Q, K and V."))
      Edit(
          state, "heads", [heads](Scenario& s) { s.projections.heads = heads; },
          "projections.heads");
    return;
  }
  DrawInitCombo(state, p);
  DrawSeed(state, p);
  DrawSizes(state, p, ShownShape(state));
  DrawWeightEditors(state);
}

}  // namespace attnlab::gui
