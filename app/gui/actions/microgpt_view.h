// microgpt_view.h: the microgpt view's state and its script commands (core lessons/microgpt.h;
// microgpt_panel.cpp draws it). Train Karpathy's microgpt.py in the background, or open a run
// saved by `attention-lab microgpt -o RUN.json`; scrub the steps; for the chosen step's document
// the four heads' causal attention (T x T, assembled from the token loop's rows), beside the
// same document's heads at step 1.
//
// Threads: the worker owns its Microgpt; after each step it appends the loss, the document and
// the parameters to `live` under `mu`. Once a frame the UI thread moves what is new out of
// `live` (under the lock) into `shown`, which only the UI thread touches; panels read `shown`
// only. Each checkpoint is stored once (moved, not copied): P doubles a step, 4192 for the
// names list, so the default 1000 steps keep 33.5 MB of checkpoints.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "attnlab/lessons/microgpt.h"
#include "gui/state/app_state.h"

namespace attnlab::gui {

struct MicrogptViewState {
  // The settings of the next Train (the names list shipped with the app is the input).
  int64_t steps = 1000;
  std::string seed = "42";
  std::string open_path = "microgpt-run.json";
  std::string message;  ///< the last Open's or Train's error, or what was opened

  // Shared with the worker.
  std::thread worker;
  std::atomic<bool> cancel{false}, finished{false};
  std::atomic<int64_t> done{0};  ///< steps done by the worker
  std::mutex mu;                 ///< guards live and pending_error
  MicrogptRecord live;           ///< new steps since the UI last took them (losses, documents,
                                 ///< params as (step, P values))
  std::u32string live_chars;     ///< the vocabulary, set by the worker before its first step
  std::string pending_error;

  // The UI thread's copy: what is drawn.
  bool running = false;
  int64_t generation = 0;  ///< runs started or opened (the maps' upload key)
  int64_t total_steps = 0;
  std::string source;            ///< "trained here, seed 42" or the file opened
  std::u32string chars;          ///< uchars of the run shown
  MicrogptRecord shown;          ///< losses, documents and checkpoints (params[s] after s steps)
  int step = 1;                  ///< the chosen step (1 .. losses.size())
  bool follow = true;            ///< the slider follows the newest step while training
  int64_t computed = -1;         ///< generation * 1e7 + step of `now` and `first`
  MicrogptAttention now, first;  ///< the chosen step's document under step `step` and step 1
  std::string attention_error;
  std::array<HeatmapSlot, 2 * kMicrogptHeads> maps;   ///< the chosen step's heads, then step 1's
  std::array<Matrix, 2 * kMicrogptHeads> map_values;  ///< their weights as float (what maps show)
  std::array<MaskMatrix, 2 * kMicrogptHeads> map_masks;  ///< 1 above the diagonal (causal)

  ~MicrogptViewState() { Stop(); }
  void Stop() {
    cancel = true;
    if (worker.joinable()) worker.join();
    running = false;
  }
};

/// The view's state, made on first use (AppState::microgpt).
MicrogptViewState& MicrogptView(AppState& state);

/// The steps the slider may choose: those with a checkpoint and a document (a run saved with
/// --save-every N has fewer checkpoints than steps).
bool HasStep(const MicrogptViewState& e, int64_t step);

/// Starts training in the background with the view's settings (steps, seed). Errors:
/// std::invalid_argument for a seed that is not an integer or steps out of 1..100000.
void MicrogptStartTraining(AppState& state);
/// Reads a run saved with -o (ReadMicrogptRunJson). Errors: std::runtime_error with the
/// file's name and what is wrong (unreadable, not a run, no step documents: saved before
/// -o kept them).
void MicrogptOpen(AppState& state, const std::string& path);
/// On the UI thread, once a frame: takes what the worker did; when the chosen step changed,
/// computes its attention (MicrogptAttentionOf, about 1 ms per document and checkpoint).
void RefreshMicrogpt(AppState& state);

/// Script commands (script.cpp). microgpt-train STEPS SEED; microgpt-wait (blocks until the
/// worker ends; std::runtime_error with its error); microgpt-step N (1 .. steps done);
/// microgpt-open FILE.
void MicrogptScriptTrain(AppState& state, int64_t steps, const std::string& seed);
void MicrogptScriptWait(AppState& state);
void MicrogptScriptStep(AppState& state, int64_t step);
/// The view's state as JSON text (save-views "microgpt"): steps done, the chosen step, its
/// line as the command line prints it ("step   20 /   20 | loss 2.6594") and its loss as
/// float.hex, the document, each head's weights at the chosen step (rows of T).
std::string MicrogptViewJson(AppState& state);
/// Stops the worker and frees the view's textures (while the GL context lives).
void ReleaseMicrogptView(AppState& state);

}  // namespace attnlab::gui
