// script.h: --script FILE, actions from a text file, one command per frame, emitted through
// the same Emit() the widgets use, so undo/redo, export and save are tested end to end.
//
// One command per line; '#' starts a comment. STAGE is X, Q, K, V, scores, mask, logits,
// weights, weights_dropped or context.
//   preset ID | open FILE | save FILE | export STAGE FILE.png | export-all DIR
//   temperature X                  scaling.multiplier (the slider "multiplier = 1/temperature")
//   drag-temperature FROM TO FRAMES
//                                  one edit per frame, log-spaced, held like a slider: one undo
//                                  step
//   scaling on|off                 divide by sqrt(d_k)
//   mask none|causal|custom|toggle toggle: none <-> causal
//   mask-cell ROW COL 0|1          paint one cell of the custom mask
//   normalization softmax|softmax_naive|sum|mean
//   dropout P
//   heads N | d_out N | input-seed N | length N
//   per-head on|off                  projections.per_head (the checkbox "one module per head")
//   input-cell ROW COL VALUE         one cell of a matrix input (batch 0); VALUE may be nan or inf
//   head H | batch B | row R
//   numbers auto|on|off              print cell values on the heatmaps
//   weights-range auto|fixed|data|per-row|log   how the weights are coloured (RangeMode)
//   focus STAGE|none                 one stage over most of the view (values printed), or all
//   zoom Z                           View > Zoom (0.6..2.5): fonts and spacing times Z
//   undo | redo
//   hover MAP ROW COL                move the mouse over a cell (tooltip, row highlight); MAP is
//                                    a STAGE or a view's map as --layout names it
//                                    (trick_v2_weights, compare_diff, ...)
//   click MAP ROW COL                press and release the left button there (two frames)
//   dtype float32|float64            the pipeline's precision (the Input section's dtype)
//   generator torch|numpy            whose generator and program (the Input section's generator)
//   wheel MAP ROW COL STEPS          turn the mouse wheel over a shown cell (> 0 zooms in)
//   pan MAP R0 C0 R1 C1              drag with the left button from one shown cell to another
//   dialog open|save|export|export-all   open that dialog (to look at it in a screenshot)
//   view heatmaps|trick|compare|code the central view
//   compare scaled|causal|pin        B of the compare view: sqrt(d_k) flipped, the mask flipped,
//                                    or a snapshot of the current state
//   compare heads [A B]              head A against head B (default 0 and 1)
//   compare temperature A B          the scenario's multiplier set to A (an edit), B's to B
//   compare-stage STAGE              the stage the compare view shows
//   export-compare [a|b|diff] FILE.png   one compare heatmap (default diff) as PNG
//   copy-code                        the code view's program to the clipboard
//   save-code FILE                   the code view's program, as shown
//   save-clipboard FILE              what the clipboard holds
//   save-views FILE                  the views' state as JSON (views.h ViewsJson)
//   save-layout FILE                 what --layout writes, for the last frame drawn
//   tour start|next|back|skip        the guided tour
//   wait N                           render N frames
//   expect-error TEXT                the window shows an error containing TEXT
//   expect-ok                        the window shows no error
//   quit
//   choose open|save|export|export-all FILE   a path picked in that file dialog (save: asks
//                                    before replacing an existing file)
//   replace yes|no                   the answer to "Replace file?"
//   drop FILE...                     files dropped on the window (the first .json opens)
//   open-recent N | clear-recent     File > Open Recent: the Nth file (0: newest), or Clear
//   export-option KEY VALUE          the export dialog's choice: format png|svg|pdf|csv|npy,
//                                    stages this|pipeline|A,B,C, dpi N, width 8cm|3in|0,
//                                    colorbar auto|shared|per-panel (then choose export FILE)
//   train-run TASK STEPS D_K         the Training view: train scaled and unscaled (D_K 8|64|256)
//   train-wait | train-cancel        wait for the training to end (blocks) | cancel it
//   train-step N                     scrub the attention maps to step N
//   train-export-csv FILE | train-save-scenario scaled|unscaled FILE
//   train-wait-steps N               wait (blocks) until N steps of both runs are done
//   train-export-curves FILE         both loss curves as .png (a plot) or .csv
//   train-code scaled|unscaled|off   the Code view: the Training view's loop, or the scenario's
//   hover train_scaled|train_unscaled ROW COL   a cell of the Training view's attention maps
// A file or export action that fails, or an expect that does not hold, fails the script: the
// app prints "script FILE:LINE: reason" and exits with status 3.
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

namespace attnlab::gui {

struct AppState;

class ScriptRunner {
 public:
  /// Reads and checks every line. Errors: std::runtime_error "FILE:LINE: what is wrong".
  void Load(const std::string& path);

  /// Runs at the start of each frame: checks the previous command's outcome, then emits this
  /// frame's actions. Returns false once the script is over (or failed; see failure()).
  bool Step(AppState& state);

  bool loaded() const { return !commands_.empty(); }
  const std::string& failure() const { return failure_; }

 private:
  struct Command {
    int line = 0;
    std::vector<std::string> words;
  };
  bool Fail(const Command& c, const std::string& why);
  void Start(AppState& state, const Command& c);
  bool StartEdit(AppState& state, const Command& c);
  bool StartView(AppState& state, const Command& c);
  bool StartControl(AppState& state, const Command& c);
  bool StartDesktop(AppState& state, const Command& c);

  std::string path_;
  std::vector<Command> commands_;
  size_t next_ = 0;
  std::string failure_;
  // A command spanning frames: drag-temperature, wait, click (release on the next frame).
  int frames_left_ = 0;
  int frames_total_ = 0;
  double drag_from_ = 1.0, drag_to_ = 1.0;
  bool dragging_ = false, releasing_ = false, unwheel_ = false;
  // pan: the mouse moves from pan_from_ to pan_to_ with the left button down.
  ImVec2 pan_from_{0, 0}, pan_to_{0, 0};
  bool panning_ = false;
  int pan_frame_ = 0;
  const Command* current_ = nullptr;
};

}  // namespace attnlab::gui
