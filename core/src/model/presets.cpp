// presets.cpp: see presets.h. The JSON texts come from presets_data.cpp, which CMake writes
// from assets/presets/*.json (cmake/EmbedPresets.cmake).
#include "attnlab/model/presets.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>

namespace attnlab {

// Defined in the generated presets_data.cpp.
struct EmbeddedPreset {
  const char* id;
  const char* json;
};
extern const EmbeddedPreset kEmbeddedPresets[];
extern const int kEmbeddedPresetCount;

namespace {

/// One row of the preset registry: the preset, its group and its key stage.
struct RegistryRow {
  const char* id;
  PresetGroup group;
  const char* key_stage;
};

using G = PresetGroup;

/// The preset registry: every shipped preset once, in reading order (the menu, `attention-lab
/// presets` and docs/presets.md follow it). Raschka's chapter 3 in the order of its sections:
/// 3.3.1 (the scores normalised by their sum, then softmax), 3.4, 3.5.1 in the notebook's
/// cells' order (masking after the softmax [28], the masked scores [29], their softmax [30]),
/// 3.5.2, 3.5.3, 3.6.1, 3.6.2, then the journey sentence the chapter runs through.
constexpr RegistryRow kRegistry[] = {
    {"raschka-3.3-sum", G::kRaschka, ""},
    {"raschka-3.3-simple", G::kRaschka, ""},
    {"raschka-3.4-v2", G::kRaschka, ""},
    {"raschka-3.5-masked-simple", G::kRaschka, ""},
    {"raschka-3.5-masked-scores", G::kRaschka, ""},
    {"raschka-3.5-causal", G::kRaschka, ""},
    {"raschka-3.5-dropout", G::kRaschka, ""},
    {"raschka-3.5-causal-batch", G::kRaschka, ""},
    {"raschka-3.6-wrapper", G::kRaschka, ""},
    {"raschka-3.6-mha", G::kRaschka, ""},
    {"raschka-journey", G::kRaschka, ""},
    {"numpy-masked", G::kNumpy, ""},
    {"dog-attacks-cat", G::kDogCat, ""},
    {"karpathy-a-at-b", G::kKarpathy, ""},
    {"karpathy-trick", G::kKarpathy, ""},
    {"karpathy-head", G::kKarpathy, ""},
    {"scaling-demo", G::kKarpathy, ""},
    {"scaling-demo-scaled", G::kKarpathy, ""},
    {"sinusoidal", G::kModern, "scores"},
    {"rope-shift", G::kModern, "scores"},
    {"alibi", G::kModern, "logits"},
    {"alibi-heads3-paper", G::kModern, "logits"},
    {"alibi-heads3-attention-gym", G::kModern, "logits"},
    {"sliding-window", G::kModern, "mask"},
    {"prefix-lm", G::kModern, "mask"},
    {"packed-documents", G::kModern, "mask"},
    {"softcap", G::kModern, "logits"},
    {"gpt-oss-sink", G::kModern, "sink"},
    {"gqa-8-query-2-kv", G::kModern, ""},
    {"nanochat-attention", G::kModern, "scores"},
    {"flash-journey", G::kInference, ""},
    {"train-scaling", G::kTraining, ""},
    {"bug-softmax-dim", G::kBugGallery, "weights"},
    {"bug-mask-after-softmax", G::kBugGallery, "weights"},
    {"bug-scale-d-model", G::kBugGallery, "logits"},
    {"bug-window-off-by-one", G::kBugGallery, "mask"},
    {"bug-rope-pairs", G::kBugGallery, "scores"},
    {"bug-view-no-transpose", G::kBugGallery, "Q"},
    {"bug-fp16-mask-fill", G::kBugGallery, "weights"},
    {"bug-sink-sigmoid", G::kBugGallery, "weights"},
    {"bug-decode-top-left", G::kBugGallery, "weights"},
    {"bug-causal-dropped", G::kBugGallery, "weights"},
};

}  // namespace

const char* PresetGroupTitle(PresetGroup group) {
  switch (group) {
    case PresetGroup::kRaschka:
      return "Raschka, chapter 3 (sections 3.3 to 3.6, then the journey)";
    case PresetGroup::kNumpy:
      return "The NumPy notebook";
    case PresetGroup::kDogCat:
      return "The dog attacks the wild cat";
    case PresetGroup::kKarpathy:
      return "Self-attention from scratch (Karpathy): a @ b, the trick v1-v4, a head";
    case PresetGroup::kModern:
      return "Modern attention";
    case PresetGroup::kInference:
      return "Inference";
    case PresetGroup::kTraining:
      return "Training";
    case PresetGroup::kBugGallery:
      return "Bug gallery";
  }
  return "";
}

const std::vector<PresetInfo>& Presets() {
  static const std::vector<PresetInfo> presets = [] {
    std::vector<PresetInfo> out;
    for (int i = 0; i < kEmbeddedPresetCount; ++i) {
      PresetInfo p{kEmbeddedPresets[i].id, "", kEmbeddedPresets[i].json};
      const nlohmann::json j = nlohmann::json::parse(p.json, nullptr, false);
      if (j.is_object() && j.contains("title") && j["title"].is_string())
        p.title = j["title"].get<std::string>();
      out.push_back(std::move(p));
    }
    // Registry order: the row's index; a preset without a row after every row.
    auto rank = [](const PresetInfo& p) {
      for (size_t r = 0; r < std::size(kRegistry); ++r)
        if (p.id == kRegistry[r].id) return r;
      return std::size(kRegistry);
    };
    for (PresetInfo& p : out) {
      const size_t r = rank(p);
      if (r < std::size(kRegistry)) {
        p.group = kRegistry[r].group;
        p.key_stage = kRegistry[r].key_stage;
      }
    }
    std::stable_sort(out.begin(), out.end(), [&](const PresetInfo& a, const PresetInfo& b) {
      const size_t ra = rank(a), rb = rank(b);
      return ra != rb ? ra < rb : a.id < b.id;
    });
    return out;
  }();
  return presets;
}

std::string PresetRegistryMismatch() {
  std::string out;
  for (const RegistryRow& row : kRegistry)
    if (!IsPreset(row.id)) out += std::string(out.empty() ? "" : ", ") + row.id + " (no file)";
  for (const PresetInfo& p : Presets()) {
    bool found = false;
    for (const RegistryRow& row : kRegistry) found = found || p.id == row.id;
    if (!found) out += (out.empty() ? "" : ", ") + p.id + " (no registry row)";
  }
  return out;
}

bool IsPreset(const std::string& id) {
  for (const PresetInfo& p : Presets())
    if (p.id == id) return true;
  return false;
}

Scenario LoadPreset(const std::string& id) {
  std::string known;
  for (const PresetInfo& p : Presets()) {
    if (p.id == id) {
      try {
        return ParseScenario(p.json);
      } catch (const ScenarioError& e) {
        throw ScenarioError("preset " + id, e.what());
      }
    }
    known += (known.empty() ? "" : ", ") + p.id;
  }
  throw ScenarioError("preset", "no preset \"" + id + "\" (known: " + known + ")");
}

}  // namespace attnlab
