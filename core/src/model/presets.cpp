// presets.cpp: see presets.h. The JSON texts come from presets_data.cpp, which CMake writes
// from assets/presets/*.json (cmake/EmbedPresets.cmake).
#include "attnlab/model/presets.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace attnlab {

// Defined in the generated presets_data.cpp.
struct EmbeddedPreset {
  const char* id;
  const char* json;
};
extern const EmbeddedPreset kEmbeddedPresets[];
extern const int kEmbeddedPresetCount;

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
    std::sort(out.begin(), out.end(),
              [](const PresetInfo& a, const PresetInfo& b) { return a.id < b.id; });
    return out;
  }();
  return presets;
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
