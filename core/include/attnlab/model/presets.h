// presets.h: the shipped scenarios, one per seed notebook (assets/presets/*.json, embedded in
// the binary at build time so the app and the command line work from any folder).
#pragma once

#include <string>
#include <vector>

#include "attnlab/model/scenario.h"

namespace attnlab {

/// One shipped preset: its id (the file name without .json), its title and its JSON text.
struct PresetInfo {
  std::string id;
  std::string title;
  std::string json;
};

/// All presets, sorted by id.
const std::vector<PresetInfo>& Presets();

/// The preset with this id, parsed. Errors: ScenarioError with field "preset" naming the id and
/// listing the known ones when there is no such preset.
Scenario LoadPreset(const std::string& id);

/// True if `id` names a preset.
bool IsPreset(const std::string& id);

}  // namespace attnlab
