// script.cpp: see script.h.
//
// [SECTION] Arguments: counts, numbers, names, checks
// [SECTION] Loading and stepping
// [SECTION] One command: what it emits or checks
#include "gui/script.h"
#include "gui/training.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include "attnlab/file_io.h"
#include "attnlab/text.h"
#include "gui/actions.h"
#include "gui/app_state.h"
#include "gui/export.h"
#include "gui/generator_switch.h"
#include "gui/panels/panels.h"
#include "gui/views.h"
#include "gui/window.h"

namespace attnlab::gui {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Arguments: counts, numbers, names, checks

/// Argument counts per command (-1: any).
const std::map<std::string, int>& Arity() {
  static const std::map<std::string, int> arity = {{"preset", 1},
                                                   {"open", 1},
                                                   {"save", 1},
                                                   {"export", 2},
                                                   {"export-all", 1},
                                                   {"temperature", 1},
                                                   {"drag-temperature", 3},
                                                   {"scaling", 1},
                                                   {"mask", 1},
                                                   {"mask-cell", 3},
                                                   {"normalization", 1},
                                                   {"dropout", 1},
                                                   {"heads", 1},
                                                   {"per-head", 1},
                                                   {"d_out", 1},
                                                   {"input-seed", 1},
                                                   {"length", 1},
                                                   {"head", 1},
                                                   {"batch", 1},
                                                   {"row", 1},
                                                   {"undo", 0},
                                                   {"redo", 0},
                                                   {"hover", 3},
                                                   {"click", 3},
                                                   {"wait", 1},
                                                   {"expect-error", -1},
                                                   {"expect-ok", 0},
                                                   {"quit", 0},
                                                   {"dialog", 1},
                                                   {"numbers", 1},
                                                   {"focus", 1},
                                                   {"zoom", 1},
                                                   {"weights-range", 1},
                                                   {"input-cell", 3},
                                                   {"view", 1},
                                                   {"compare", -1},
                                                   {"compare-stage", 1},
                                                   {"export-compare", -1},
                                                   {"copy-code", 0},
                                                   {"save-code", 1},
                                                   {"save-clipboard", 1},
                                                   {"save-views", 1},
                                                   {"save-layout", 1},
                                                   {"tour", 1},
                                                   {"choose", 2},
                                                   {"replace", 1},
                                                   {"drop", -1},
                                                   {"open-recent", 1},
                                                   {"clear-recent", 0},
                                                   {"wheel", 4},
                                                   {"pan", 5},
                                                   {"export-option", 2},
                                                   {"loss-key", 1},
                                                   {"dtype", 1},

                                                   {"train-run", 3},
                                                   {"train-wait", 0},
                                                   {"train-cancel", 0},
                                                   {"train-step", 1},
                                                   {"train-export-csv", 1},
                                                   {"train-save-scenario", 2},
                                                   {"generator", 1},
                                                   {"train-wait-steps", 1},
                                                   {"train-export-curves", 1},
                                                   {"train-code", 1}};
  return arity;
}

// std::stod and std::stoll say only "stod" or "stoll": these name the text they refuse.
double Number(const std::string& w) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(w, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != w.size() || !std::isfinite(v))
    throw std::invalid_argument("not a number: \"" + MessageText(w) + "\"");
  return v;
}

int64_t Integer(const std::string& w) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(w, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != w.size())
    throw std::invalid_argument("not an integer: \"" + MessageText(w) + "\"");
  return v;
}

/// A cell value: a number, or nan, inf, -inf (float32).
float CellValue(const std::string& w) {
  if (w == "nan") return std::numeric_limits<float>::quiet_NaN();
  if (w == "inf") return std::numeric_limits<float>::infinity();
  if (w == "-inf") return -std::numeric_limits<float>::infinity();
  return static_cast<float>(Number(w));
}

Stage StageArg(const std::string& w) {
  if (const std::optional<Stage> s = ParseStage(w)) return *s;
  std::string known;
  for (Stage s : AllStages()) known += (known.empty() ? "" : ", ") + std::string(StageName(s));
  throw std::invalid_argument("unknown stage: " + w + " (" + known + ")");
}

CentralView ViewArg(const std::string& w) {
  if (w == "heatmaps") return CentralView::kHeatmaps;
  if (w == "trick") return CentralView::kTrick;
  if (w == "compare") return CentralView::kCompare;
  if (w == "code") return CentralView::kCode;
  if (w == "gradients") return CentralView::kGradients;
  if (w == "training") return CentralView::kTraining;
  throw std::invalid_argument("unknown view: " + w +
                              " (heatmaps, trick, compare, code, gradients, training)");
}

Normalization NormalizationArg(const std::string& w) {
  for (Normalization n : {Normalization::kSoftmax, Normalization::kSoftmaxNaive,
                          Normalization::kSum, Normalization::kMean})
    if (w == Name(n)) return n;
  throw std::invalid_argument("unknown normalization: " + w +
                              " (softmax, softmax_naive, sum, mean)");
}

/// open, save, export or export-all: the file dialog of those commands.
DialogKind DialogArg(const std::string& w) {
  if (w == "open") return DialogKind::kOpen;
  if (w == "save") return DialogKind::kSaveAs;
  if (w == "export") return DialogKind::kExport;
  if (w == "export-all") return DialogKind::kExportAll;
  if (w == "notebook") return DialogKind::kSaveNotebook;
  throw std::invalid_argument("open, save, export, export-all or notebook");
}

/// Checks a command's arguments by building what it would emit (throws when they are bad).
void CheckArguments(const std::vector<std::string>& w) {
  const std::string& c = w[0];
  if (c == "temperature" || c == "dropout") Number(w[1]);
  if (c == "drag-temperature") {
    if (Number(w[1]) <= 0 || Number(w[2]) <= 0) throw std::invalid_argument("must be > 0");
    if (Integer(w[3]) < 1) throw std::invalid_argument("FRAMES must be >= 1");
  }
  if ((c == "scaling" || c == "per-head") && w[1] != "on" && w[1] != "off")
    throw std::invalid_argument("on or off");
  if (c == "mask" && w[1] != "none" && w[1] != "causal" && w[1] != "custom" && w[1] != "toggle")
    throw std::invalid_argument("none, causal, custom or toggle");
  if (c == "mask-cell") {
    Integer(w[1]);
    Integer(w[2]);
    if (w[3] != "0" && w[3] != "1") throw std::invalid_argument("0 or 1");
  }
  if (c == "normalization") NormalizationArg(w[1]);
  if (c == "dtype" && w[1] != "float32" && w[1] != "float64")
    throw std::invalid_argument("float32 or float64");
  if (c == "generator" && w[1] != "torch" && w[1] != "numpy")
    throw std::invalid_argument("torch or numpy");
  if (c == "heads" || c == "d_out" || c == "input-seed" || c == "length" || c == "head" ||
      c == "batch" || c == "row" || c == "wait" || c == "loss-key")
    Integer(w[1]);
  if (c == "export") StageArg(w[1]);
  if (c == "focus" && w[1] != "none") StageArg(w[1]);
  if (c == "zoom" && (Number(w[1]) < 0.6 || Number(w[1]) > 2.5))
    throw std::invalid_argument("a zoom in 0.6..2.5");
  if (c == "input-cell") {
    Integer(w[1]);
    Integer(w[2]);
    CellValue(w[3]);  // nan and inf are allowed: the point is to see them refused
  }
  // The Training view parses its own numbers when it runs: refused here first, by name.
  if (c == "train-run") {
    Integer(w[2]);
    Integer(w[3]);
  }
  if (c == "train-step" || c == "train-wait-steps") Integer(w[1]);
  if (c == "numbers" && w[1] != "auto" && w[1] != "on" && w[1] != "off")
    throw std::invalid_argument("auto, on or off");
  if (c == "weights-range" && !ParseRangeMode(w[1]))
    throw std::invalid_argument("auto, fixed, data, per-row or log");
  if (c == "dialog") DialogArg(w[1]);
  if (c == "wheel" || c == "pan")
    for (size_t i = 2; i < w.size(); ++i) Integer(w[i]);
  if (c == "hover" || c == "click" || c == "wheel" || c == "pan") {
    if (!ParseStage(w[1]) && w[1].rfind("trick_v", 0) != 0 && w[1].rfind("compare_", 0) != 0 &&
        w[1].rfind("grad_", 0) != 0 && w[1].rfind("train_", 0) != 0)
      StageArg(w[1]);
    Integer(w[2]);
    Integer(w[3]);
  }
  if (c == "view") ViewArg(w[1]);
  if (c == "compare") {
    const size_t n = w.size() - 1;
    const std::string mode = n ? w[1] : "";
    if (mode == "temperature") {
      if (n != 3) throw std::invalid_argument("temperature takes two multipliers, A and B");
      if (Number(w[2]) <= 0 || Number(w[3]) <= 0) throw std::invalid_argument("must be > 0");
    } else if (mode == "heads") {
      if (n != 1 && n != 3) throw std::invalid_argument("heads takes no heads or two, A and B");
      if (n == 3 && (Integer(w[2]) < 0 || Integer(w[3]) < 0))
        throw std::invalid_argument("heads are >= 0");
    } else if (mode == "scaled" || mode == "causal" || mode == "pin") {
      if (n != 1) throw std::invalid_argument(mode + " takes no argument");
    } else {
      throw std::invalid_argument("scaled, causal, heads [A B], temperature A B or pin");
    }
  }
  if (c == "compare-stage") StageArg(w[1]);
  if (c == "export-compare") {
    if (w.size() == 3 && w[1] != "a" && w[1] != "b" && w[1] != "diff")
      throw std::invalid_argument("a, b or diff");
    if (w.size() != 2 && w.size() != 3) throw std::invalid_argument("[a|b|diff] FILE.png");
  }
  if (c == "tour" && w[1] != "start" && w[1] != "next" && w[1] != "back" && w[1] != "skip")
    throw std::invalid_argument("start, next, back or skip");
  if (c == "choose") DialogArg(w[1]);
  if (c == "replace" && w[1] != "yes" && w[1] != "no") throw std::invalid_argument("yes or no");
  if (c == "drop" && w.size() < 2) throw std::invalid_argument("at least one FILE");
  if (c == "open-recent" && Integer(w[1]) < 0) throw std::invalid_argument("N is >= 0");
  if (c == "export-option") {
    ExportChoices choices;
    std::string why;
    if (!SetExportOption(choices, w[1], w[2], &why)) throw std::invalid_argument(why);
  }
}

/// Writes a file for a save-* command; false with the reason in *why.
bool WriteText(const std::string& path, const std::string& text, std::string* why) {
  try {
    WriteFileAtomic(path, text);
  } catch (const std::exception& e) {
    *why = e.what();
    return false;
  }
  return true;
}

/// The heatmap called `name`: a stage, or one of the views' maps as the layout names them
/// (trick_v1_weights .. trick_v4_result, compare_a, compare_b, compare_diff); nullptr if none.
const HeatmapSlot* SlotNamed(const AppState& state, const std::string& name) {
  if (const std::optional<Stage> s = ParseStage(name)) return &state.heatmaps[StageIndex(*s)];
  for (int i = 0; i < 4; ++i) {
    const std::string v = "trick_v" + std::to_string(i + 1);
    if (name == v + "_weights") return &state.trick.weight_maps[i];
    if (name == v + "_result") return &state.trick.result_maps[i];
  }
  const char* compare[] = {"compare_a", "compare_b", "compare_diff"};
  for (int i = 0; i < 3; ++i)
    if (name == compare[i]) return &state.compare.maps[i];
  const char* grads[] = {"grad_jacobian", "grad_logits", "grad_scores", "grad_Q", "grad_K"};
  for (size_t i = 0; i < std::size(grads); ++i)
    if (name == grads[i] && state.gradients.maps) return &state.gradients.maps[i];
  if (name == "train_scaled") return &state.training.maps[0];
  if (name == "train_unscaled") return &state.training.maps[1];
  return nullptr;
}

/// The centre of a heatmap cell on screen, from where the heatmap was drawn last frame.
bool CellCentre(const AppState& state, const std::string& map, int64_t row, int64_t col,
                ImVec2* pos) {
  const HeatmapSlot* slot = SlotNamed(state, map);
  if (!slot) return false;
  // The cells drawn last frame (a zoomed map shows part of its matrix).
  const CellWindow& w = slot->shown;
  const int64_t r = row - w.row0, c = col - w.col0;
  if (w.rows <= 0 || w.cols <= 0 || r < 0 || c < 0 || r >= w.rows || c >= w.cols) return false;
  const ImVec2 a = slot->image_min, b = slot->image_max;
  *pos = ImVec2(a.x + (b.x - a.x) * (c + 0.5f) / w.cols, a.y + (b.y - a.y) * (r + 0.5f) / w.rows);
  return b.x > a.x && b.y > a.y;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] Loading and stepping

void ScriptRunner::Load(const std::string& path) {
  path_ = path;
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the script");
  std::string text;
  int line_no = 0;
  while (std::getline(in, text)) {
    ++line_no;
    if (const size_t hash = text.find('#'); hash != std::string::npos) text.resize(hash);
    std::istringstream words(text);
    Command c{line_no, {}};
    for (std::string w; words >> w;) c.words.push_back(w);
    if (c.words.empty()) continue;
    const auto it = Arity().find(c.words[0]);
    const std::string where = path + ":" + std::to_string(line_no) + ": ";
    if (it == Arity().end()) throw std::runtime_error(where + "unknown command " + c.words[0]);
    const int n = static_cast<int>(c.words.size()) - 1;
    if (it->second >= 0 && n != it->second)
      throw std::runtime_error(where + c.words[0] + " takes " + std::to_string(it->second) +
                               " argument(s), got " + std::to_string(n));
    try {
      CheckArguments(c.words);
    } catch (const std::exception& e) {
      throw std::runtime_error(where + c.words[0] + ": " + e.what());
    }
    commands_.push_back(std::move(c));
  }
  if (commands_.empty()) throw std::runtime_error(path + ": the script has no commands");
}

bool ScriptRunner::Fail(const Command& c, const std::string& why) {
  failure_ = path_ + ":" + std::to_string(c.line) + ": " + why;
  return false;
}

bool ScriptRunner::Step(AppState& state) {
  if (!failure_.empty()) return false;
  // The previous command's file or export action failed?
  if (current_ && !state.action_error.empty()) return Fail(*current_, state.action_error);

  // Commands that span frames.
  if (releasing_) {
    state.script_mouse.down = false;
    releasing_ = false;
    return true;
  }
  if (unwheel_) {
    state.script_mouse.wheel = 0.0f;
    unwheel_ = false;
    return true;
  }
  if (panning_) {  // 8 frames from pan_from_ to pan_to_, then the button is let go
    const float t = std::min(1.0f, static_cast<float>(++pan_frame_) / 8.0f);
    state.script_mouse.pos = ImVec2(pan_from_.x + (pan_to_.x - pan_from_.x) * t,
                                    pan_from_.y + (pan_to_.y - pan_from_.y) * t);
    if (t >= 1.0f) {
      panning_ = false;
      releasing_ = true;
    }
    return true;
  }
  if (frames_left_ > 0) {
    --frames_left_;
    if (dragging_) {
      const int i = frames_total_ - frames_left_;  // 1..frames_total_
      const double t = frames_total_ > 1 ? (i - 1.0) / (frames_total_ - 1.0) : 1.0;
      const double v = drag_from_ * std::pow(drag_to_ / drag_from_, t);
      Emit(state, SetMultiplier{v}, "scaling.multiplier");
      if (frames_left_ == 0) dragging_ = false;
    }
    return true;
  }
  state.script_drag = false;
  SettleRuns(state);  // each command sees the stages of the ones before it
  if (next_ >= commands_.size()) return false;
  current_ = &commands_[next_++];
  state.action_error.clear();
  Start(state, *current_);
  return failure_.empty();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] One command: what it emits or checks

// Scenario edits: the same actions the controls emit.
bool ScriptRunner::StartEdit(AppState& state, const Command& c) {
  const std::vector<std::string>& w = c.words;
  const std::string& cmd = w[0];
  auto edit = [&](std::string label, std::function<void(Scenario&)> f) {
    Emit(state, EditScenario{std::move(label), std::move(f)});
  };
  if (cmd == "preset") {
    Emit(state, LoadPresetAction{w[1]});
  } else if (cmd == "open") {
    Emit(state, OpenScenario{w[1]});
  } else if (cmd == "save") {
    Emit(state, SaveScenario{w[1]});
  } else if (cmd == "export") {
    Emit(state, ExportStage{StageArg(w[1]), w[2]});
  } else if (cmd == "export-all") {
    Emit(state, ExportAllStages{w[1]});
  } else if (cmd == "temperature") {
    Emit(state, SetMultiplier{Number(w[1])});
  } else if (cmd == "drag-temperature") {
    drag_from_ = Number(w[1]);
    drag_to_ = Number(w[2]);
    frames_total_ = static_cast<int>(Integer(w[3]));
    frames_left_ = frames_total_ - 1;
    dragging_ = frames_left_ > 0;
    state.script_drag = true;
    Emit(state, SetMultiplier{drag_from_}, "scaling.multiplier");
  } else if (cmd == "scaling") {
    Emit(state, SetSqrtDk{w[1] == "on"});
  } else if (cmd == "mask") {
    MaskKind kind = MaskKind::kNone;
    if (w[1] == "causal") kind = MaskKind::kCausal;
    if (w[1] == "custom") kind = MaskKind::kCustom;
    if (w[1] == "toggle")
      kind = state.scenario.mask.kind == MaskKind::kNone ? MaskKind::kCausal : MaskKind::kNone;
    Emit(state, SetMaskKind{kind});
  } else if (cmd == "mask-cell") {
    Emit(state, SetMaskCell{Integer(w[1]), Integer(w[2]), w[3] == "1"});
  } else if (cmd == "normalization") {
    Emit(state, SetNormalization{NormalizationArg(w[1])});
  } else if (cmd == "dtype") {
    const bool f64 = w[1] == "float64";
    edit("dtype", [f64](Scenario& s) { s.dtype = f64 ? Dtype::kFloat64 : Dtype::kFloat32; });
  } else if (cmd == "generator") {
    SettleRuns(state);  // SwitchGenerator reads the shown stages
    edit("generator", SwitchGenerator(ShownStages(state), w[1] == "numpy" ? Generator::kNumpy
                                                                          : Generator::kTorch));
  } else if (cmd == "dropout") {
    Emit(state, SetDropout{Number(w[1])});
  } else if (cmd == "per-head") {
    const bool on = w[1] == "on";  // the checkbox "one module per head"
    edit("one module per head", [on](Scenario& s) { s.projections.per_head = on; });
  } else if (cmd == "heads") {
    const int64_t v = Integer(w[1]);
    edit("heads", [v](Scenario& s) { s.projections.heads = v; });
  } else if (cmd == "d_out") {
    const int64_t v = Integer(w[1]);
    edit("d_out", [v](Scenario& s) { s.projections.d_out = v; });
  } else if (cmd == "input-seed") {
    const uint64_t v = static_cast<uint64_t>(Integer(w[1]));
    edit("input seed", [v](Scenario& s) { s.input.seed = v; });
  } else if (cmd == "length") {
    const int64_t v = Integer(w[1]);
    edit("length", [v](Scenario& s) { s.input.length = v; });
  } else if (cmd == "input-cell") {
    const int64_t i = Integer(w[1]), j = Integer(w[2]);
    const float v = CellValue(w[3]);
    edit("embedding cell", [i, j, v](Scenario& s) {
      if (!s.input.values.empty() && i >= 0 && j >= 0 && i < s.input.values[0].rows() &&
          j < s.input.values[0].cols())
        s.input.values[0](i, j) = v;
    });
  } else {
    return false;
  }
  return true;
}

// What is looked at and how: head, batch, row, undo, views, colours, compare.
bool ScriptRunner::StartView(AppState& state, const Command& c) {
  const std::vector<std::string>& w = c.words;
  const std::string& cmd = w[0];
  if (cmd == "head") {
    Emit(state, SelectHead{Integer(w[1])});
  } else if (cmd == "batch") {
    Emit(state, SelectBatch{Integer(w[1])});
  } else if (cmd == "row") {
    Emit(state, SelectRow{Integer(w[1])});
  } else if (cmd == "undo") {
    Emit(state, Undo{});
  } else if (cmd == "redo") {
    Emit(state, Redo{});
  } else if (cmd == "numbers") {
    Emit(state, SetValuesMode{w[1] == "on"    ? ValuesMode::kOn
                              : w[1] == "off" ? ValuesMode::kOff
                                              : ValuesMode::kAuto});
  } else if (cmd == "zoom") {
    Emit(state, SetZoom{static_cast<float>(Number(w[1]))});
  } else if (cmd == "focus") {
    Emit(state, w[1] == "none" ? SetFocus{} : SetFocus{StageArg(w[1])});
  } else if (cmd == "weights-range") {
    Emit(state, SetWeightsRange{*ParseRangeMode(w[1])});
  } else if (cmd == "dialog") {
    Emit(state, OpenDialog{DialogArg(w[1])});
  } else if (cmd == "view") {
    Emit(state, SetView{ViewArg(w[1])});
  } else if (cmd == "compare") {
    if (w[1] == "scaled") Emit(state, SetCompare{CompareMode::kScaled});
    if (w[1] == "causal") Emit(state, SetCompare{CompareMode::kCausal});
    if (w[1] == "pin") Emit(state, PinCompare{});
    if (w[1] == "heads")
      Emit(state, w.size() == 4 ? SetCompare{CompareMode::kHeads, 0, Integer(w[2]), Integer(w[3])}
                                : SetCompare{CompareMode::kHeads});
    if (w[1] == "temperature") {
      // A is the scenario on screen: its multiplier is an ordinary (undoable) edit.
      Emit(state, SetMultiplier{Number(w[2])});
      Emit(state, SetCompare{CompareMode::kTemperature, Number(w[3])});
    }
  } else if (cmd == "loss-key") {
    Emit(state, SetLossKey{Integer(w[1])});
  } else if (cmd == "compare-stage") {
    Emit(state, SetCompareStage{StageArg(w[1])});
  } else if (cmd == "export-compare") {
    const CompareMap map = w.size() == 2 || w[1] == "diff" ? CompareMap::kDifference
                           : w[1] == "a"                   ? CompareMap::kA
                                                           : CompareMap::kB;
    Emit(state, ExportCompare{map, w.back()});
  } else {
    return false;
  }
  return true;
}

// The mouse, waiting, checks, files and the tour.
bool ScriptRunner::StartControl(AppState& state, const Command& c) {
  const std::vector<std::string>& w = c.words;
  const std::string& cmd = w[0];
  if (cmd == "hover" || cmd == "click") {
    ImVec2 pos;
    if (!CellCentre(state, w[1], Integer(w[2]), Integer(w[3]), &pos)) {
      Fail(c, "no cell " + w[2] + ", " + w[3] + " on the " + w[1] + " heatmap");
      return true;
    }
    state.script_mouse.active = true;
    state.script_mouse.pos = pos;
    state.script_mouse.down = cmd == "click";
    releasing_ = cmd == "click";
  } else if (cmd == "wheel" || cmd == "pan") {
    ImVec2 from, to;
    const bool pan = cmd == "pan";
    if (!CellCentre(state, w[1], Integer(w[2]), Integer(w[3]), &from) ||
        (pan && !CellCentre(state, w[1], Integer(w[4]), Integer(w[5]), &to))) {
      Fail(c, "no such cell shown on the " + w[1] + " heatmap");
      return true;
    }
    state.script_mouse.active = true;
    state.script_mouse.pos = from;
    if (pan) {
      state.script_mouse.down = true;
      pan_from_ = from;
      pan_to_ = to;
      pan_frame_ = 0;
      panning_ = true;
    } else {
      state.script_mouse.wheel = static_cast<float>(Integer(w[4]));
      unwheel_ = true;
    }
  } else if (cmd == "wait") {
    frames_left_ = static_cast<int>(std::max<int64_t>(Integer(w[1]) - 1, 0));
  } else if (cmd == "expect-error") {
    std::string text;
    for (size_t i = 1; i < w.size(); ++i) text += (i > 1 ? " " : "") + w[i];
    if (state.error.empty())
      Fail(c, "expected an error containing \"" + text + "\", but the scenario runs");
    else if (state.error.find(text) == std::string::npos)
      Fail(c, "expected an error containing \"" + text + "\", got: " + state.error);
  } else if (cmd == "expect-ok") {
    if (!state.error.empty()) Fail(c, "expected no error, got: " + state.error);
  } else if (cmd == "copy-code") {
    Emit(state, CopyCode{});
  } else if (cmd == "save-code" || cmd == "save-clipboard" || cmd == "save-views" ||
             cmd == "save-layout") {
    std::string text, why;
    if (cmd == "save-code") {
      RefreshCode(state);
      if (!state.code.error.empty()) {
        Fail(c, "no code: " + state.code.error);
        return true;
      }
      text = state.code.text;
    } else if (cmd == "save-clipboard") {
      const char* clip = ImGui::GetClipboardText();
      text = clip ? clip : "";
    } else if (cmd == "save-layout") {
      text = HeatmapLayoutJson(state);  // of the last frame drawn
    } else {
      text = ViewsJson(state);
    }
    if (!WriteText(w[1], text, &why)) Fail(c, why);
  } else if (cmd == "tour") {
    const TourCommand::Kind kind = w[1] == "start"  ? TourCommand::kStart
                                   : w[1] == "next" ? TourCommand::kNext
                                   : w[1] == "back" ? TourCommand::kBack
                                                    : TourCommand::kSkip;
    Emit(state, TourCommand{kind});
  } else if (cmd == "quit") {
    Emit(state, Quit{});
  } else {
    return false;
  }
  return true;
}

// File dialogs' answers, dropped files and recent files.
bool ScriptRunner::StartDesktop(AppState& state, const Command& c) {
  const std::vector<std::string>& w = c.words;
  const std::string& cmd = w[0];
  if (cmd == "choose") {
    Emit(state, ChooseFile{DialogArg(w[1]), w[2], StageIndex(Stage::kWeights)});
  } else if (cmd == "replace") {
    Emit(state, ConfirmReplace{w[1] == "yes"});
  } else if (cmd == "drop") {
    Emit(state, DropFiles{std::vector<std::string>(w.begin() + 1, w.end())});
  } else if (cmd == "open-recent") {
    const size_t i = static_cast<size_t>(Integer(w[1]));
    if (i >= state.recent_files.size())
      Fail(c, "no recent file " + w[1] + " (the list has " +
                  std::to_string(state.recent_files.size()) + ")");
    else
      Emit(state, OpenScenario{state.recent_files[i]});
  } else if (cmd == "clear-recent") {
    Emit(state, ClearRecentFiles{});
  } else if (cmd == "export-option") {  // the export dialog's choices, as its widgets set them
    ExportChoices choices = state.export_choices;
    std::string why;
    SetExportOption(choices, w[1], w[2], &why);
    Emit(state, SetExportChoices{choices});
  } else {
    return false;
  }
  return true;
}

void ScriptRunner::Start(AppState& state, const Command& c) {
  if (std::string why; TrainScriptCommand(state, c.words, &why)) {
    if (!why.empty()) Fail(c, why);
    return;
  }
  if (StartEdit(state, c) || StartView(state, c) || StartDesktop(state, c)) return;
  StartControl(state, c);
}

}  // namespace attnlab::gui
