// presets.h: the shipped scenarios, one per seed notebook (assets/presets/*.json, embedded in
// the binary at build time so the app and the command line work from any folder).
#pragma once

#include <string>
#include <vector>

#include "attnlab/model/scenario.h"

namespace attnlab {

/// The groups of the presets, in reading order: the courses chapter by chapter, then today's
/// attention, then the bug gallery (whose presets the Presets menu shows only in the gallery).
enum class PresetGroup {
  kRaschka,     ///< Raschka's chapter 3 by section (3.3 -> 3.6), then the journey
  kNumpy,       ///< the NumPy notebook
  kDogCat,      ///< "The dog attacks the wild cat"
  kKarpathy,    ///< self-attention from scratch: Karpathy's a @ b, trick v1-v4, head, scaling
  kModern,      ///< positions, today's masks, soft-capping, sinks, grouped K/V heads
  kInference,   ///< the KV cache and FlashAttention's tiles (precision's float16 NaN rows
                ///< are a bug of the gallery, bug-fp16-mask-fill)
  kTraining,    ///< the Training view
  kBugGallery,  ///< the classic mistakes (model/bugs.h)
};

/// The heading of a group as the menu, `attention-lab presets` and docs/presets.md print it.
const char* PresetGroupTitle(PresetGroup group);

/// One shipped preset: its id (the file name without .json), its title and its JSON text, and
/// its row of the preset registry (presets.cpp kRegistry, the one place that orders them):
/// its group and the stage that makes its point.
struct PresetInfo {
  std::string id;
  std::string title;
  std::string json;
  PresetGroup group = PresetGroup::kModern;
  /// The stage the window opens the preset on (stages.h's StageName: "logits", "mask",
  /// "sink", ...), or "" when the point is the whole computation (the notebooks' presets,
  /// whose every map fits the first screen).
  std::string key_stage;
};

/// All presets in reading order: by group (PresetGroup's order), then by the registry's order
/// within the group (the book's sections in order). A preset file without a registry row
/// comes last, in kModern (a test keeps every file in the registry).
const std::vector<PresetInfo>& Presets();

/// Whether every embedded preset has a row in the registry and every row a preset; "" or the
/// ids that do not match.
std::string PresetRegistryMismatch();

/// The preset with this id, parsed. Errors: ScenarioError with field "preset" naming the id and
/// listing the known ones when there is no such preset.
Scenario LoadPreset(const std::string& id);

/// True if `id` names a preset.
bool IsPreset(const std::string& id);

}  // namespace attnlab
