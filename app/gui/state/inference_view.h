// inference_view.h: the Decode and Tiled views' state (core lessons/inference.h run on the
// scenario on screen), the action that sets them (SetInference: the panels' controls and the
// script's decode / decode-step / tiled / tiled-step commands), and their refresh. The runs are
// made again only when the shown run or a setting changed; the step shown (scrubbed, stepped,
// played) only picks which of the run's steps is drawn.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attnlab/lessons/inference.h"

namespace attnlab::gui {

struct AppState;

/// The two views' settings and their runs.
struct InferenceViewState {
  int64_t prefill = 2, chunk = 0;          ///< the decode's P and C (DecodeOptions)
  int64_t block_q = 2, block_k = 2;        ///< the tiles' Br and Bc
  int64_t decode_step = 0, tile_step = 0;  ///< the step shown, from 0
  bool playing = false;                    ///< the shown view's step advances by itself
  double advanced_at = 0;                  ///< when play last advanced (steady clock, s)
  // -- derived (RefreshInference)
  std::string made_for;  ///< version and settings the runs were made for
  std::optional<DecodeRun> decode;
  std::optional<TiledRun> tiled;
  std::string decode_error, tiled_error;  ///< why there is no run ("" when there is)
};

/// Sets one of the views' settings (value clamped to what the run allows when it is drawn).
struct SetInference {
  enum class Field { kPrefill, kChunk, kDecodeStep, kBlockQ, kBlockK, kTileStep, kPlay };
  Field field = Field::kDecodeStep;
  int64_t value = 0;  ///< kPlay: 1 play, 0 pause
};
bool Do(AppState& state, const SetInference& a);  ///< inference_view.cpp; found by ADL

/// The decode and tiled runs again when the shown run or a setting changed; while playing, the
/// shown view's step advances every kPlaySeconds (and play stops at the last step).
void RefreshInference(AppState& state);
inline constexpr double kPlaySeconds = 0.7;
/// The largest B * H * T * T the views run (each keeps every step's weights as doubles, on the
/// UI thread): 2^22 cells; beyond, they say so and point to the command line.
inline constexpr double kMaxInferenceCells = 4194304.0;

/// The sentence under a run's comparison with the full computation: whether max_abs_diff
/// `diff` is 0 (the same rows, bit for bit), within `tolerance` (AgreementTolerance, inference.h:
/// float32 / float64 summation order, or the rounding of the scenario's bfloat16 / float16) or
/// beyond it; `tiled` says which loop. Sets *equal to whether diff <= tolerance.
std::string AgreementText(const Scenario& s, double diff, double tolerance, bool tiled,
                          bool* equal);

/// How the loop computes in the scenario's dtype, one line for the view ("" for float32):
/// bfloat16 / float16 decode stores each step's stages in it; the tiles keep FlashAttention-2's
/// float32 state with P stored in the dtype; float64 runs in double.
std::string DtypeNote(const Scenario& s, bool tiled);

/// prefix + 0, prefix + 1, ..., prefix + (n - 1): the columns of the views' tables ("k0", "d3").
std::vector<std::string> NumberedLabels(const char* prefix, int64_t n);

/// The number of steps of each run (0 without one).
int64_t DecodeStepCount(const AppState& state);
int64_t TileStepCount(const AppState& state);

/// The views' state as JSON for the script's save-views: settings, the step shown, and per run
/// its step count, max_abs_diff, tolerance, skipped tiles and the shown step's keys / m / l.
std::string InferenceJson(const AppState& state);

}  // namespace attnlab::gui
