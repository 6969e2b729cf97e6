// input_panel.cpp: where X (B x T x d_in) comes from: a preset, text through a tokenizer and
// nn.Embedding, an embedding matrix edited cell by cell, or torch.randn.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <iterator>
#include <optional>

#include "attnlab/model/presets.h"
#include "attnlab/model/tokenizer.h"
#include "attnlab/random/numpy_rng.h"
#include "gui/actions/apply.h"
#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/state/generator_switch.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {
namespace {

void Edit(AppState& state, const char* label, std::function<void(Scenario&)> f,
          std::string merge_key = "") {
  Emit(state, EditScenario{label, std::move(f)}, std::move(merge_key));
}

void DrawPresetPicker(AppState& state) {
  std::string preview = "(your own scenario)";
  if (!state.preset_id.empty())
    preview = state.preset_id + (state.scenario == state.preset_scenario ? "" : "  (edited)");
  ImGui::SetNextItemWidth(-FLT_MIN);
  if (ImGui::BeginCombo("##preset", preview.c_str(), ImGuiComboFlags_HeightLarge)) {
    DrawPresetItems(state, false);
    ImGui::EndCombo();
  }
  Tip("Presets: the notebooks' examples, number for number. Loading one is a single undo "
      "step (Ctrl+Z brings your scenario back).");
  if (!state.scenario.title.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    LongWrappedText(state.scenario.title);  // a title of any length
    ImGui::PopStyleColor();
  }
}

/// Switches the input source, carrying over what makes sense (the current X becomes the
/// matrix; the current sizes go to randn).
void DrawSourceChoice(AppState& state) {
  const Scenario& s = state.scenario;
  const InputSource now = s.input.source;
  struct Choice {
    InputSource source;
    const char* label;  // its button
    const char* tip;
  };
  const Choice choices[] = {
      {InputSource::kText, "text",
       "Type a sentence: it is split into tokens, and each token's embedding is a row of "
       "nn.Embedding(vocab, d_in) drawn after torch.manual_seed(seed)."},
      {InputSource::kMatrix, "matrix",
       "Edit the embedding matrix itself, one row per token (switching keeps the current X)."},
      {InputSource::kRandn, "random",
       "X = torch.randn(batch, T, d_in) after torch.manual_seed(seed): random tokens, any size."},
      {InputSource::kQkv, "q, k, v",
       "No X and no projections: q, k, v = randn(batch, T, d_k) drawn directly after the seed, "
       "as the NumPy notebook and Karpathy's scaling cell do."},
  };
  for (const Choice& c : choices) {
    if (&c != choices) ImGui::SameLine();
    if (ImGui::RadioButton(c.label, now == c.source) && now != c.source) {
      SettleRuns(state);  // the shown stages whole: a background run ends first
      const Stages& st = ShownStages(state);
      const MatrixStack X = st.X.empty() ? st.Q : st.X;  // qkv has no X: Q becomes the matrix
      const std::vector<std::string> tokens = st.tokens;
      const int64_t d_in = std::max<int64_t>(st.shape.d_in > 0 ? st.shape.d_in : st.shape.d_out, 1);
      const int64_t d_k = std::max<int64_t>(st.shape.d_out, 1);
      const int64_t T = std::max<int64_t>(st.shape.T, 1), B = std::max<int64_t>(st.shape.B, 1);
      const InputSource to = c.source;
      Edit(state, "input source", [=](Scenario& x) {
        InputSpec& in = x.input;
        if (in.source == InputSource::kQkv || to == InputSource::kQkv) {
          const int64_t heads = x.projections.heads;
          x.projections = ProjectionSpec{};  // qkv has no projections; others start at identity
          if (to == InputSource::kQkv && d_k % heads == 0) x.projections.heads = heads;
          if (to != InputSource::kQkv && d_in % heads == 0) x.projections.heads = heads;
        }
        in.source = to;
        if (to == InputSource::kQkv) {
          in.Q.clear(), in.K.clear(), in.V.clear();
          in.batch = B;
          in.length = T;
          in.d_k = d_k;
          in.d_v = 0;
          if (in.generator == Generator::kNumpy && in.seed > kNumpyMaxSeed) in.seed = 0;
        } else if (to == InputSource::kMatrix) {
          in.values = X;
          in.tokens = tokens;
        } else if (to == InputSource::kText) {
          if (in.text.empty()) in.text = "Your journey starts with one step";
          in.d_in = d_in;
          in.generator = Generator::kTorch;  // nn.Embedding: PyTorch only
        } else {
          in.batch = B;
          in.length = T;
          in.d_in = d_in;
        }
      });
    }
    Tip(c.tip);
  }
}

void DrawTextInput(AppState& state) {
  const InputSpec& in = state.scenario.input;
  std::string text = in.text;
  ImGui::SetNextItemWidth(-FLT_MIN);
  if (ImGui::InputTextWithHint("##text", "type a sentence", &text))
    Edit(
        state, "text", [text](Scenario& s) { s.input.text = text; }, "input.text");
  Tip("The input sentence. Every keystroke reruns attention.");

  int kind = static_cast<int>(in.tokenizer);
  const char* kinds[] = {"words", "words and spaces", "characters"};  // TokenizerKind order
  if (ImGui::Combo("tokenizer", &kind, kinds, 3))
    Edit(state, "tokenizer",
         [kind](Scenario& s) { s.input.tokenizer = static_cast<TokenizerKind>(kind); });
  Tip("words: split on spaces and punctuation, keep the punctuation (the notebooks' "
      "SimpleTokenizer).\nwords and spaces: the spaces are tokens too.\ncharacters: one token "
      "per character.");

  const std::vector<std::string> tokens = Tokenize(in.text, in.tokenizer);
  ImGui::TextDisabled("T = %zu tokens:", tokens.size());
  ImGui::SameLine();
  std::string line;
  for (const std::string& t : tokens)
    line += "[" + (t == " " ? std::string("\xE2\x90\xA3") : t) + "] ";
  LongWrappedText(line);  // a learner's long paragraph or word

  int64_t d_in = in.d_in;
  if (IntInput("d_in", &d_in, 1, 1024,
               "Embedding width: each token becomes a vector of d_in numbers."))
    Edit(
        state, "d_in", [d_in](Scenario& s) { s.input.d_in = d_in; }, "input.d_in");
  uint64_t seed = in.seed;
  if (SeedInput("seed", &seed,
                "torch.manual_seed(seed) right before nn.Embedding(vocab, d_in) is created."))
    Edit(
        state, "embedding seed", [seed](Scenario& s) { s.input.seed = seed; }, "input.seed");
}

void DrawMatrixInput(AppState& state) {
  const InputSpec& in = state.scenario.input;
  if (in.values.empty()) return;
  const int64_t B = static_cast<int64_t>(in.values.size());
  const int64_t b = std::min<int64_t>(state.batch, B - 1);
  const Matrix& X = in.values[b];
  const int64_t T = X.rows(), d_in = X.cols();
  ImGui::Text("T = %lld tokens, d_in = %lld", static_cast<long long>(T),
              static_cast<long long>(d_in));
  if (B > 1) {
    ImGui::SameLine();
    ImGui::TextDisabled("(batch %lld of %lld)", static_cast<long long>(b),
                        static_cast<long long>(B));
  }
  // The cells under a node of their own, closed at first: a new user's screen keeps to the
  // chapter's controls (the heatmaps show X anyway).
  if (!ImGui::TreeNode("edit X, cell by cell")) {
    Tip("Edit the embedding matrix: one row per token, one column per dimension. A single "
        "click on a cell types into it; Alt + drag changes it by dragging.");
    return;
  }
  // Size buttons: a new token is a row of zeros, a new dimension a column of zeros.
  auto resize = [&](const char* label, int64_t dt, int64_t dd) {
    Edit(state, label, [dt, dd](Scenario& s) {
      for (Matrix& m : s.input.values) {
        Matrix r =
            Matrix::Zero(std::max<int64_t>(m.rows() + dt, 1), std::max<int64_t>(m.cols() + dd, 1));
        const int64_t rr = std::min(r.rows(), m.rows()), cc = std::min(r.cols(), m.cols());
        r.topLeftCorner(rr, cc) = m.topLeftCorner(rr, cc);
        m = r;
      }
      if (!s.input.tokens.empty()) {
        const int64_t T = s.input.values[0].rows();
        while (static_cast<int64_t>(s.input.tokens.size()) < T)
          s.input.tokens.push_back("x" + std::to_string(s.input.tokens.size() + 1));
        s.input.tokens.resize(T);
      }
    });
  };
  if (ImGui::SmallButton("+ token")) resize("add token", 1, 0);
  Tip("Add a token: a new row of zeros at the end.");
  ImGui::SameLine();
  if (ImGui::SmallButton("- token") && T > 1) resize("remove token", -1, 0);
  Tip("Remove the last token.");
  ImGui::SameLine();
  if (ImGui::SmallButton("+ dim")) resize("add dimension", 0, 1);
  Tip("Add an embedding dimension: a new column of zeros (d_in + 1).");
  ImGui::SameLine();
  if (ImGui::SmallButton("- dim") && d_in > 1) resize("remove dimension", 0, -1);
  Tip("Remove the last embedding dimension (d_in - 1).");

  MatrixEditorCallbacks cb;
  cb.row_label = [&](int64_t i) {
    return i < static_cast<int64_t>(in.tokens.size()) ? in.tokens[i] : "x" + std::to_string(i + 1);
  };
  cb.col_label = [](int64_t j) { return "d" + std::to_string(j); };
  cb.edit_row_label = [&](int64_t i, const std::string& label) {
    Edit(
        state, "token label",
        [i, label, T](Scenario& s) {
          auto& tokens = s.input.tokens;
          while (static_cast<int64_t>(tokens.size()) < T)
            tokens.push_back("x" + std::to_string(tokens.size() + 1));
          if (i < static_cast<int64_t>(tokens.size())) tokens[i] = label;
        },
        "input.tokens." + std::to_string(i));
  };
  cb.on_cell = [&](int64_t i, int64_t j, float v) {
    Edit(
        state, "embedding cell",
        [b, i, j, v](Scenario& s) {
          if (b < static_cast<int64_t>(s.input.values.size()) && i < s.input.values[b].rows() &&
              j < s.input.values[b].cols())
            s.input.values[b](i, j) = v;
        },
        "input.values." + std::to_string(i) + "." + std::to_string(j));
  };
  MatrixEditor("##X", X, 180.0f, cb);
  ImGui::TreePop();
}

/// The batch and length of drawn input (randn, qkv).
void DrawBatchAndLength(AppState& state, const char* batch_tip) {
  const InputSpec& in = state.scenario.input;
  int64_t batch = in.batch, length = in.length;
  if (IntInput("batch (B)", &batch, 1, 64, batch_tip))
    Edit(
        state, "batch", [batch](Scenario& s) { s.input.batch = batch; }, "input.batch");
  if (IntInput("tokens (T)", &length, 1, 8192, "Sequence length T. The heatmaps are T x T."))
    Edit(
        state, "T", [length](Scenario& s) { s.input.length = length; }, "input.length");
}

void DrawRandnInput(AppState& state) {
  const InputSpec& in = state.scenario.input;
  int64_t d_in = in.d_in;
  DrawBatchAndLength(state, "How many independent sequences (torch.randn(B, T, d_in)).");
  if (IntInput("d_in", &d_in, 1, 1024, "Embedding width of each token."))
    Edit(
        state, "d_in", [d_in](Scenario& s) { s.input.d_in = d_in; }, "input.d_in");
  uint64_t seed = in.seed;
  if (SeedInput("input seed", &seed,
                "torch.manual_seed(seed) right before torch.randn(B, T, d_in)."))
    Edit(
        state, "input seed", [seed](Scenario& s) { s.input.seed = seed; }, "input.seed");
}

/// torch or numpy: whose generator the draws reproduce (randn and qkv inputs).
void DrawGeneratorChoice(AppState& state) {
  const Scenario& s = state.scenario;
  int numpy = s.input.generator == Generator::kNumpy ? 1 : 0;
  const char* names[] = {Name(Generator::kTorch), Name(Generator::kNumpy)};
  if (ImGui::Combo("generator", &numpy, names, 2)) {
    SettleRuns(state);  // SwitchGenerator reads the shown stages: a background run ends first
    Edit(state, "generator",
         SwitchGenerator(ShownStages(state), numpy ? Generator::kNumpy : Generator::kTorch));
  }
  Tip("torch: torch.manual_seed and torch.randn / torch.rand, bit for bit, and a PyTorch "
      "program.\nnumpy: np.random.seed and np.random.randn / np.random.rand (NumPy's legacy "
      "generator), bit for bit, and a NumPy program. NumPy has no nn.Embedding, nn.Linear or "
      "dropout: switching keeps their numbers (text becomes its embedding matrix, nn.Linear its "
      "W matrices, without bias) and turns dropout off.");
}

/// The precision of the whole pipeline (dtype): float32, float64 (torch.float64, or NumPy's
/// double), bfloat16 or float16 (each stage stored in 16 bits); with the last two, the upcast
/// softmax (scaling.softmax_dtype "float32").
void DrawDtypeChoice(AppState& state) {
  int current = static_cast<int>(state.scenario.dtype);
  const char* names[std::size(kDtypes)];
  for (size_t i = 0; i < std::size(kDtypes); ++i) names[i] = kDtypes[i].name;
  if (ImGui::Combo("dtype", &current, names, static_cast<int>(std::size(names))))
    Edit(state, "dtype", [current](Scenario& x) {
      x.dtype = kDtypes[current].value;
      if (!IsLowPrecision(x.dtype)) x.scaling.softmax_dtype = SoftmaxDtype::kSame;
    });
  Tip("float32: PyTorch's default precision (what the notebooks print). float64: every stage in "
      "double, as torch.float64 tensors or NumPy arrays compute it (NumPy's own default). The "
      "maps show the values rounded to float32; dump and show give all the digits.\n"
      "bfloat16 and float16: each stage computed in float32 and stored in 16 bits, as models "
      "run attention on GPUs. bfloat16 keeps float32's range with 3 significant digits; float16 "
      "keeps 3-4 digits but overflows above 65504 to inf. Hover a cell for its rounding error.");
  if (!IsLowPrecision(state.scenario.dtype)) return;
  bool upcast = state.scenario.scaling.softmax_dtype == SoftmaxDtype::kFloat32;
  if (ImGui::Checkbox("softmax in float32", &upcast))
    Edit(state, "softmax in float32", [upcast](Scenario& x) {
      x.scaling.softmax_dtype = upcast ? SoftmaxDtype::kFloat32 : SoftmaxDtype::kSame;
    });
  Tip("The usual fix: torch.softmax(logits, dim=-1, dtype=torch.float32). The weights are "
      "computed and kept in float32, so each row sums to 1 and small weights keep their digits; "
      "the context is computed from them in float32, then stored in the dtype.");
}

void DrawQkvInput(AppState& state) {
  const InputSpec& in = state.scenario.input;
  if (in.QkvGiven()) {
    ImGui::TextWrapped(
        "Q, K and V are given as matrices (B = %lld, T = %lld, d_k = %lld, "
        "d_v = %lld): no embeddings, no projections. Edit them in the scenario "
        "file.",
        static_cast<long long>(in.Q.size()), static_cast<long long>(in.Q[0].rows()),
        static_cast<long long>(in.Q[0].cols()),
        static_cast<long long>(in.V.empty() ? 0 : in.V[0].cols()));
    return;
  }
  int64_t d_k = in.d_k, d_v = in.d_v > 0 ? in.d_v : in.d_k;
  DrawBatchAndLength(state, "How many independent sequences (randn(B, T, d_k)).");
  // d_v follows d_k while they are equal (the notebooks' case); once set apart it stays.
  if (IntInput("d_k", &d_k, 1, 1024, "Width of q and k: the dot products run over d_k."))
    Edit(
        state, "d_k",
        [d_k, same = d_v == in.d_k](Scenario& s) {
          s.input.d_k = d_k;
          if (same) s.input.d_v = 0;
        },
        "input.d_k");
  if (IntInput("d_v", &d_v, 1, 1024,
               "Width of v, and so of the context vectors (each head takes d_v / heads of "
               "them). The scores do not depend on it."))
    Edit(
        state, "d_v", [d_v](Scenario& s) { s.input.d_v = d_v == s.input.d_k ? 0 : d_v; },
        "input.d_v");
  uint64_t seed = in.seed;
  if (SeedInput("seed", &seed, "The seed set right before q, k and v are drawn."))
    Edit(
        state, "qkv seed", [seed](Scenario& s) { s.input.seed = seed; }, "input.seed");
  ImGui::TextDisabled("draw order: %s, %s, %s", Name(in.order[0]), Name(in.order[1]),
                      Name(in.order[2]));
}

}  // namespace

void DrawPresetItems(AppState& state, bool menu) {
  std::optional<PresetGroup> group;
  for (const PresetInfo& p : Presets()) {
    if (p.group == PresetGroup::kBugGallery) continue;  // the gallery opens them beside the fix
    if (p.group != group) {
      if (group) ImGui::Spacing();
      ImGui::TextDisabled("%s", PresetGroupTitle(p.group));
      group = p.group;
    }
    const std::string title = ShortText(p.title, 64);
    const bool chosen = p.id == state.preset_id;
    ImGui::PushID(p.id.c_str());
    const bool clicked = menu ? ImGui::MenuItem(p.id.c_str(), title.c_str(), chosen)
                              : ImGui::Selectable(p.id.c_str(), chosen);
    if (!menu) {  // the title beside the id, in the menu's shortcut colour
      ImGui::SameLine(ImGui::GetFontSize() * 12.0f);
      ImGui::TextDisabled("%s", title.c_str());
    }
    ImGui::PopID();
    if (clicked) Emit(state, LoadPresetAction{p.id});
    if (ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28.0f);
      ImGui::TextUnformatted(p.title.c_str());
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
  }
}

void DrawInputPanel(AppState& state) {
  DrawPresetPicker(state);
  DrawSourceChoice(state);
  switch (state.scenario.input.source) {
    case InputSource::kText:
      DrawTextInput(state);
      break;
    case InputSource::kMatrix:
      DrawMatrixInput(state);
      break;
    case InputSource::kRandn:
      DrawRandnInput(state);
      break;
    case InputSource::kQkv:
      DrawQkvInput(state);
      break;
  }
}

void DrawInputModern(AppState& state) {
  DrawDtypeChoice(state);
  DrawGeneratorChoice(state);
}

}  // namespace attnlab::gui
