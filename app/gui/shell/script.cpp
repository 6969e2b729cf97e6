// script.cpp: see script.h.
//
// [SECTION] Arguments: numbers, names, checks
// [SECTION] The commands: one table of name, arity, check, action and help
// [SECTION] Loading and stepping
#include "gui/shell/script.h"

#include <sys/resource.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "attnlab/base/file_io.h"
#include "attnlab/base/text.h"
#include "gui/actions/apply.h"
#include "gui/actions/export.h"
#include "gui/actions/microgpt_view.h"
#include "gui/actions/training.h"
#include "gui/actions/views.h"
#include "gui/panels/panels.h"
#include "gui/shell/window.h"
#include "gui/state/actions.h"
#include "gui/state/app_state.h"
#include "gui/state/generator_switch.h"

namespace attnlab::gui {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Arguments: numbers, names, checks

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
  if (const std::optional<CentralView> v = ParseCentralView(w)) return *v;
  std::string known;
  for (const CentralViewRow& row : kCentralViews)
    known += (known.empty() ? "" : ", ") + std::string(row.name);
  throw std::invalid_argument("unknown view: " + w + " (" + known + ")");
}

Normalization NormalizationArg(const std::string& w) {
  if (const std::optional<Normalization> n = ParseName<Normalization>(w)) return *n;
  throw std::invalid_argument("unknown normalization: " + w + " (" + NameList<Normalization>() +
                              ")");
}

/// The value of E spelled `w` (its list in core); any other word is refused with the list,
/// "float32, float64, bfloat16 or float16".
template <NamedEnum E>
E EnumArg(const std::string& w) {
  if (const std::optional<E> e = ParseName<E>(w)) return *e;
  throw std::invalid_argument(NameList<E>(" or "));
}

/// The check of a command whose one word is a spelling of E.
template <NamedEnum E>
void EnumWord(const std::vector<std::string>& w) {
  EnumArg<E>(w[1]);
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

/// Refuses `w` unless it is one of `options`: "on or off", "none, causal, custom or toggle".
void OneOf(const std::string& w, std::initializer_list<const char*> options) {
  std::string list;
  size_t k = 0;
  for (const char* o : options) {
    if (w == o) return;
    list += (k == 0 ? "" : ++k == options.size() ? " or " : ", ") + std::string(o);
    k += k == 0;
  }
  throw std::invalid_argument(list);
}

/// A heatmap's cell: MAP ROW COL (a stage, or a view's map as the layout names it).
void CheckCell(const std::vector<std::string>& w) {
  if (!ParseStage(w[1]) && w[1].rfind("trick_v", 0) != 0 && w[1].rfind("compare_", 0) != 0 &&
      w[1].rfind("grad_", 0) != 0 && w[1].rfind("train_", 0) != 0)
    StageArg(w[1]);
  Integer(w[2]);
  Integer(w[3]);
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

// ---------------------------------------------------------------------------------------------
// [SECTION] The commands: one table of name, arity, check, action and help

using Words = std::vector<std::string>;

/// What a command's action works on: the app, its words, the frames it may span, and the
/// reason the script fails (left empty when the command did what it should).
struct Call {
  AppState& state;
  const Words& w;
  ScriptRunner::Frames& frames;
  std::string failure;
};

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// User and system CPU time of the whole process, every thread, in seconds (getrusage).
double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

/// idle S: the main loop waits S seconds for events (IdleSeconds), then Continue records the
/// wall-clock and CPU time spent.
void StartIdle(Call& c) {
  const double S = std::max(Number(c.w[1]), 0.0);
  c.frames.idle_wall0 = SteadySeconds();
  c.frames.idle_cpu0 = ProcessCpuSeconds();
  c.frames.idle_until = c.frames.idle_wall0 + S;
}

/// One script command. `check` refuses bad words when the script is loaded (throws
/// std::invalid_argument saying what is expected; nullptr: nothing to check beyond the count);
/// `run` does it, one frame, through the same actions the widgets emit.
struct CommandSpec {
  const char* name;
  int arity;  ///< the number of words after the name; -1: any (`check` counts them)
  void (*check)(const Words& w);
  void (*run)(Call& c);
  const char* help;  ///< "ARGUMENTS: what the command does"
};

void Edit(Call& c, std::string label, std::function<void(Scenario&)> f) {
  Emit(c.state, EditScenario{std::move(label), std::move(f)});
}

/// An edit that sets one integer field of the scenario to word 1.
void EditInteger(Call& c, std::string label, void (*set)(Scenario&, int64_t)) {
  const int64_t v = Integer(c.w[1]);
  Edit(c, std::move(label), [v, set](Scenario& s) { set(s, v); });
}

/// A train-* command: its failure is "COMMAND: what went wrong".
void Train(Call& c, const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    c.failure = c.w[0] + ": " + e.what();
  }
}

/// The centre of cell ROW COL (words `at`, `at` + 1) on the MAP of word 1, or a failure.
bool CellAt(Call& c, size_t at, ImVec2* pos) {
  return CellCentre(c.state, c.w[1], Integer(c.w[at]), Integer(c.w[at + 1]), pos);
}

void Hover(Call& c) {
  ImVec2 pos;
  if (!CellAt(c, 2, &pos)) {
    c.failure = "no cell " + c.w[2] + ", " + c.w[3] + " on the " + c.w[1] + " heatmap";
    return;
  }
  c.state.script_mouse.active = true;
  c.state.script_mouse.pos = pos;
  c.state.script_mouse.down = c.w[0] == "click";
  c.frames.releasing = c.w[0] == "click";
}

void WheelOrPan(Call& c) {
  ImVec2 from, to;
  const bool pan = c.w[0] == "pan";
  if (!CellAt(c, 2, &from) || (pan && !CellAt(c, 4, &to))) {
    c.failure = "no such cell shown on the " + c.w[1] + " heatmap";
    return;
  }
  c.state.script_mouse.active = true;
  c.state.script_mouse.pos = from;
  if (pan) {
    c.state.script_mouse.down = true;
    c.frames.pan_from = from;
    c.frames.pan_to = to;
    c.frames.pan_frame = 0;
    c.frames.panning = true;
  } else {
    c.state.script_mouse.wheel = static_cast<float>(Integer(c.w[4]));
    c.frames.unwheel = true;
  }
}

void DragTemperature(Call& c) {
  ScriptRunner::Frames& f = c.frames;
  f.drag_from = Number(c.w[1]);
  f.drag_to = Number(c.w[2]);
  f.total = static_cast<int>(Integer(c.w[3]));
  f.left = f.total - 1;
  f.dragging = f.left > 0;
  c.state.script_drag = true;
  Emit(c.state, SetMultiplier{f.drag_from}, "scaling.multiplier");
}

/// The words after the command, joined by single spaces.
std::string RestOfLine(const Call& c) {
  std::string text;
  for (size_t i = 1; i < c.w.size(); ++i) text += (i > 1 ? " " : "") + c.w[i];
  return text;
}

void ExpectError(Call& c) {
  const std::string text = RestOfLine(c);
  if (c.state.error.empty())
    c.failure = "expected an error containing \"" + text + "\", but the scenario runs";
  else if (c.state.error.find(text) == std::string::npos)
    c.failure = "expected an error containing \"" + text + "\", got: " + c.state.error;
}

/// save-code, save-clipboard, save-views, save-layout: that text to FILE.
void SaveText(Call& c) {
  const std::string& cmd = c.w[0];
  std::string text;
  if (cmd == "save-code") {
    RefreshCode(c.state);
    if (!c.state.code.error.empty()) {
      c.failure = "no code: " + c.state.code.error;
      return;
    }
    text = c.state.code.text;
  } else if (cmd == "save-clipboard") {
    const char* clip = ImGui::GetClipboardText();
    text = clip ? clip : "";
  } else if (cmd == "save-layout") {
    text = HeatmapLayoutJson(c.state);  // of the last frame drawn
  } else {
    text = ViewsJson(c.state);
  }
  WriteText(c.w[1], text, &c.failure);
}

void Compare(Call& c) {
  const Words& w = c.w;
  if (w[1] == "scaled") Emit(c.state, SetCompare{CompareMode::kScaled});
  if (w[1] == "causal") Emit(c.state, SetCompare{CompareMode::kCausal});
  if (w[1] == "pin") Emit(c.state, PinCompare{});
  if (w[1] == "heads")
    Emit(c.state, w.size() == 4 ? SetCompare{CompareMode::kHeads, 0, Integer(w[2]), Integer(w[3])}
                                : SetCompare{CompareMode::kHeads});
  if (w[1] == "temperature") {
    // A is the scenario on screen: its multiplier is an ordinary (undoable) edit.
    Emit(c.state, SetMultiplier{Number(w[2])});
    Emit(c.state, SetCompare{CompareMode::kTemperature, Number(w[3])});
  }
}

void CheckCompare(const Words& w) {
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

void OpenRecent(Call& c) {
  const size_t i = static_cast<size_t>(Integer(c.w[1]));
  if (i >= c.state.recent_files.size())
    c.failure = "no recent file " + c.w[1] + " (the list has " +
                std::to_string(c.state.recent_files.size()) + ")";
  else
    Emit(c.state, OpenScenario{c.state.recent_files[i]});
}

void Integer1(const Words& w) { Integer(w[1]); }
void Number1(const Words& w) { Number(w[1]); }
void Stage1(const Words& w) { StageArg(w[1]); }
void OnOff(const Words& w) { OneOf(w[1], {"on", "off"}); }

// Every command. The order is the help's order: files, edits, views, the mouse, checks, dialogs,
// training.
const CommandSpec kCommands[] = {
    {"preset", 1, nullptr, [](Call& c) { Emit(c.state, LoadPresetAction{c.w[1]}); },
     "ID: load a preset"},
    {"bug", 1, nullptr, [](Call& c) { Emit(c.state, LoadBugAction{c.w[1]}); },
     "ID: the bug gallery: the fix of bug preset ID as the scenario (A), the bug as B"},
    {"open", 1, nullptr, [](Call& c) { Emit(c.state, OpenScenario{c.w[1]}); },
     "FILE: open a scenario"},
    {"save", 1, nullptr, [](Call& c) { Emit(c.state, SaveScenario{c.w[1]}); },
     "FILE: save the scenario"},
    {"export", 2, Stage1,
     [](Call& c) {
       Emit(c.state, ExportStage{StageArg(c.w[1]), c.w[2]});
     },
     "STAGE FILE.png: export one stage's heatmap"},
    {"export-all", 1, nullptr, [](Call& c) { Emit(c.state, ExportAllStages{c.w[1]}); },
     "DIR: export every stage"},
    {"temperature", 1, Number1, [](Call& c) { Emit(c.state, SetMultiplier{Number(c.w[1])}); },
     "X: scaling.multiplier (the slider \"multiplier = 1/temperature\")"},
    {"drag-temperature", 3,
     [](const Words& w) {
       if (Number(w[1]) <= 0 || Number(w[2]) <= 0) throw std::invalid_argument("must be > 0");
       if (Integer(w[3]) < 1) throw std::invalid_argument("FRAMES must be >= 1");
     },
     DragTemperature,
     "FROM TO FRAMES: one edit per frame, log-spaced, held like a slider: one undo step"},
    {"scaling", 1, OnOff, [](Call& c) { Emit(c.state, SetSqrtDk{c.w[1] == "on"}); },
     "on|off: divide by sqrt(d_k)"},
    {"positions", 1, [](const Words& w) { EnumArg<PositionKind>(w[1]); },
     [](Call& c) {
       const PositionKind kind = EnumArg<PositionKind>(c.w[1]);
       Edit(c, "positions", [kind](Scenario& x) { x.positions.kind = kind; });
     },
     "none|alibi|rope|sinusoidal: positions.kind (the Positions combo)"},
    {"softcap", 1,
     [](const Words& w) {
       if (w[1] != "off" && !(Number(w[1]) > 0)) throw std::invalid_argument("off or C > 0");
     },
     [](Call& c) {
       const std::optional<double> cap =
           c.w[1] == "off" ? std::nullopt : std::optional<double>(Number(c.w[1]));
       Edit(c, "soft-cap c", [cap](Scenario& x) { x.scaling.softcap = cap; });
     },
     "off|C: scaling.softcap (the checkbox \"soft-cap the logits\" and its c)"},
    {"sink", -1,
     [](const Words& w) {
       if (w.size() < 2) throw std::invalid_argument("off, or one sink logit or one per head");
       if (w[1] != "off")
         for (size_t k = 1; k < w.size(); ++k) Number(w[k]);
     },
     [](Call& c) {
       std::vector<double> sink;
       if (c.w[1] != "off")
         for (size_t k = 1; k < c.w.size(); ++k) sink.push_back(Number(c.w[k]));
       Edit(c, "sink logit", [sink](Scenario& x) {
         x.scaling.sink = sink;
         if (sink.empty()) x.scaling.sink_form = SinkForm::kConcat;  // needs a sink
       });
     },
     "off|S [S ...]: scaling.sink, one logit for every head or one per head (the checkbox "
     "\"attention sink\")"},
    {"sink-form", 1, [](const Words& w) { EnumArg<SinkForm>(w[1]); },
     [](Call& c) {
       const SinkForm form = EnumArg<SinkForm>(c.w[1]);  // the combo "sink form"
       Edit(c, "sink form", [form](Scenario& x) { x.scaling.sink_form = form; });
     },
     "concat|sigmoid: scaling.sink_form (the combo \"sink form\")"},
    {"mask", 1,
     [](const Words& w) {
       if (w[1] != "toggle" && !ParseName<MaskKind>(w[1]))
         throw std::invalid_argument(NameList<MaskKind>() + " or toggle");
     },
     [](Call& c) {
       const MaskKind now = c.state.scenario.mask.kind;
       Emit(c.state, SetMaskKind{c.w[1] == "toggle" ? (now == MaskKind::kNone ? MaskKind::kCausal
                                                                              : MaskKind::kNone)
                                                    : EnumArg<MaskKind>(c.w[1])});
     },
     "KIND|toggle: the mask kind (none, causal, custom, sliding_window, prefix_lm, document, "
     "and, or; toggle: none <-> causal)"},
    {"mask-part", 2,
     [](const Words& w) {
       Integer(w[1]);
       if (!ParseName<MaskKind>(w[2]) || w[2] == "custom" || w[2] == "and" || w[2] == "or")
         throw std::invalid_argument("causal, sliding_window, prefix_lm, document or none");
     },
     [](Call& c) {
       const int64_t k = Integer(c.w[1]);
       const Scenario& s = c.state.scenario;
       if ((s.mask.kind != MaskKind::kAnd && s.mask.kind != MaskKind::kOr) || k < 0 ||
           k >= static_cast<int64_t>(s.mask.of.size())) {
         c.failure = "mask.of: no part " + c.w[1] + " (the mask is " + MaskName(s.mask) + ")";
         return;
       }
       const MaskKind kind = EnumArg<MaskKind>(c.w[2]);
       const int64_t T = std::max<int64_t>(ShownShape(c.state).T, 1);
       Edit(c, "mask part kind", [k, kind, T](Scenario& x) {
         StartMaskKind(x.mask.of[static_cast<size_t>(k)], kind, T);
       });
     },
     "K KIND: part K of an and / or mask becomes KIND (causal, sliding_window, prefix_lm, "
     "document, none), from the setting a new mask of that kind starts with (the part's combo)"},
    {"mask-part-add", 0, nullptr,
     [](Call& c) {
       const Scenario& s = c.state.scenario;
       if (s.mask.kind != MaskKind::kAnd && s.mask.kind != MaskKind::kOr) {
         c.failure = "mask.kind: parts are added to an and / or mask, not " + MaskName(s.mask);
         return;
       }
       Edit(c, "add mask part", [](Scenario& x) {
         MaskSpec causal;
         causal.kind = MaskKind::kCausal;
         x.mask.of.push_back(causal);
       });
     },
     ": a causal part appended to an and / or mask (the \"+ mask\" button)"},
    {"mask-part-remove", 1, [](const Words& w) { Integer(w[1]); },
     [](Call& c) {
       const int64_t k = Integer(c.w[1]);
       const Scenario& s = c.state.scenario;
       if ((s.mask.kind != MaskKind::kAnd && s.mask.kind != MaskKind::kOr) || k < 0 ||
           k >= static_cast<int64_t>(s.mask.of.size()) || s.mask.of.size() < 2) {
         c.failure = "mask.of: part " + c.w[1] +
                     " cannot be removed (the last part stays; the mask is " + MaskName(s.mask) +
                     ")";
         return;
       }
       Edit(c, "remove mask part", [k](Scenario& x) {
         x.mask.of.erase(x.mask.of.begin() + static_cast<std::ptrdiff_t>(k));
       });
     },
     "K: removes part K of an and / or mask (the part's \u00D7 button; not the last part)"},
    {"mask-cell", 3,
     [](const Words& w) {
       Integer(w[1]);
       Integer(w[2]);
       OneOf(w[3], {"0", "1"});
     },
     [](Call& c) {
       Emit(c.state, SetMaskCell{Integer(c.w[1]), Integer(c.w[2]), c.w[3] == "1"});
     },
     "ROW COL 0|1: paint one cell of the custom mask"},
    {"normalization", 1, [](const Words& w) { NormalizationArg(w[1]); },
     [](Call& c) { Emit(c.state, SetNormalization{NormalizationArg(c.w[1])}); },
     "NAME: how logits become weights (the format's normalization; a wrong name lists them)"},
    {"dropout", 1, Number1, [](Call& c) { Emit(c.state, SetDropout{Number(c.w[1])}); },
     "P: dropout.p"},
    {"heads", 1, Integer1,
     [](Call& c) {
       EditInteger(c, "heads", [](Scenario& s, int64_t v) { s.projections.heads = v; });
     },
     "N: projections.heads"},
    {"kv-heads", 1, Integer1,
     [](Call& c) {
       EditInteger(c, "K/V heads", [](Scenario& s, int64_t v) {
         s.projections.kv_heads = v == s.projections.heads ? 0 : v;
       });
     },
     "N: projections.kv_heads (the input \"K/V heads\"; = heads is multi-head)"},
    {"head-split", 1, [](const Words& w) { EnumArg<HeadSplit>(w[1]); },
     [](Call& c) {
       const HeadSplit split = EnumArg<HeadSplit>(c.w[1]);  // the combo "split heads"
       Edit(c, "split heads", [split](Scenario& s) { s.projections.head_split = split; });
     },
     "transpose|view_no_transpose: projections.head_split (the combo \"split heads\")"},
    {"per-head", 1, OnOff,
     [](Call& c) {
       const bool on = c.w[1] == "on";  // the checkbox "one module per head"
       Edit(c, "one module per head", [on](Scenario& s) { s.projections.per_head = on; });
     },
     "on|off: projections.per_head (the checkbox \"one module per head\")"},
    {"d_out", 1, Integer1,
     [](Call& c) {
       EditInteger(c, "d_out", [](Scenario& s, int64_t v) { s.projections.d_out = v; });
     },
     "N: projections.d_out"},
    {"input-seed", 1, Integer1,
     [](Call& c) {
       EditInteger(c, "input seed",
                   [](Scenario& s, int64_t v) { s.input.seed = static_cast<uint64_t>(v); });
     },
     "N: input.seed"},
    {"length", 1, Integer1,
     [](Call& c) { EditInteger(c, "length", [](Scenario& s, int64_t v) { s.input.length = v; }); },
     "N: input.length"},
    {"input-cell", 3,
     [](const Words& w) {
       Integer(w[1]);
       Integer(w[2]);
       CellValue(w[3]);  // nan and inf are allowed: the point is to see them refused
     },
     [](Call& c) {
       const int64_t i = Integer(c.w[1]), j = Integer(c.w[2]);
       const float v = CellValue(c.w[3]);
       Edit(c, "embedding cell", [i, j, v](Scenario& s) {
         if (!s.input.values.empty() && i >= 0 && j >= 0 && i < s.input.values[0].rows() &&
             j < s.input.values[0].cols())
           s.input.values[0](i, j) = v;
       });
     },
     "ROW COL VALUE: one cell of a matrix input (batch 0); VALUE may be nan or inf"},
    {"dtype", 1, EnumWord<Dtype>,
     [](Call& c) {
       const Dtype dtype = EnumArg<Dtype>(c.w[1]);
       Edit(c, "dtype", [dtype](Scenario& s) { s.dtype = dtype; });
     },
     "float32|float64|bfloat16|float16: the pipeline's precision (the Input section's dtype)"},
    {"generator", 1, EnumWord<Generator>,
     [](Call& c) {
       SettleRuns(c.state);  // SwitchGenerator reads the shown stages
       Edit(c, "generator", SwitchGenerator(ShownStages(c.state), EnumArg<Generator>(c.w[1])));
     },
     "torch|numpy: whose generator and program (the Input section's generator)"},
    {"head", 1, Integer1, [](Call& c) { Emit(c.state, SelectHead{Integer(c.w[1])}); },
     "H: the head shown"},
    {"batch", 1, Integer1, [](Call& c) { Emit(c.state, SelectBatch{Integer(c.w[1])}); },
     "B: the batch item shown"},
    {"row", 1, Integer1, [](Call& c) { Emit(c.state, SelectRow{Integer(c.w[1])}); },
     "R: the query row selected"},
    {"undo", 0, nullptr, [](Call& c) { Emit(c.state, Undo{}); }, ": undo the last edit"},
    {"redo", 0, nullptr, [](Call& c) { Emit(c.state, Redo{}); }, ": redo it"},
    {"numbers", 1, EnumWord<ValuesMode>,
     [](Call& c) { Emit(c.state, SetValuesMode{EnumArg<ValuesMode>(c.w[1])}); },
     "auto|on|off: print cell values on the heatmaps"},
    {"every-head", 1, OnOff, [](Call& c) { Emit(c.state, SetEveryHead{c.w[1] == "on"}); },
     "on|off: the heatmaps view shows every head's weights (the head grid)"},
    {"weights-range", 1, EnumWord<RangeMode>,
     [](Call& c) { Emit(c.state, SetWeightsRange{EnumArg<RangeMode>(c.w[1])}); },
     "auto|fixed|data|per-row|log: how the weights are coloured (RangeMode)"},
    {"focus", 1,
     [](const Words& w) {
       if (w[1] != "none") StageArg(w[1]);
     },
     [](Call& c) { Emit(c.state, c.w[1] == "none" ? SetFocus{} : SetFocus{StageArg(c.w[1])}); },
     "STAGE|none: one stage over most of the view (values printed), or all"},
    {"zoom", 1,
     [](const Words& w) {
       if (Number(w[1]) < 0.6 || Number(w[1]) > 2.5)
         throw std::invalid_argument("a zoom in 0.6..2.5");
     },
     [](Call& c) { Emit(c.state, SetZoom{static_cast<float>(Number(c.w[1]))}); },
     "Z: View > Zoom (0.6..2.5): fonts and spacing times Z"},
    {"view", 1, [](const Words& w) { ViewArg(w[1]); },
     [](Call& c) { Emit(c.state, SetView{ViewArg(c.w[1])}); },
     "heatmaps|trick|compare|code|gradients|training|decode|tiled: the central view"},
    {"decode", 2, [](const Words& w) { Integer(w[1]), Integer(w[2]); },
     [](Call& c) {
       Emit(c.state, SetInference{SetInference::Field::kPrefill, Integer(c.w[1])});
       Emit(c.state, SetInference{SetInference::Field::kChunk, Integer(c.w[2])});
     },
     "P C: the Decode view's prefill of P tokens in chunks of C (0: one chunk)"},
    {"align", 1, EnumWord<MaskAlign>,
     [](Call& c) {
       const MaskAlign a = EnumArg<MaskAlign>(c.w[1]);
       Emit(c.state, EditScenario{"mask align", [a](Scenario& x) { x.mask.align = a; }});
     },
     "bottom_right|top_left: mask.align, where a decode step's queries sit against its keys"},
    {"decode-step", 1, Integer1,
     [](Call& c) {
       Emit(c.state, SetInference{SetInference::Field::kDecodeStep, Integer(c.w[1])});
     },
     "N: the Decode view shows step N (from 0; clamped to the steps there are)"},
    {"tiled", 2, [](const Words& w) { Integer(w[1]), Integer(w[2]); },
     [](Call& c) {
       Emit(c.state, SetInference{SetInference::Field::kBlockQ, Integer(c.w[1])});
       Emit(c.state, SetInference{SetInference::Field::kBlockK, Integer(c.w[2])});
     },
     "BR BC: the Tiled view's tiles of BR query rows by BC keys"},
    {"tiled-step", 1, Integer1,
     [](Call& c) {
       Emit(c.state, SetInference{SetInference::Field::kTileStep, Integer(c.w[1])});
     },
     "N: the Tiled view shows tile N (from 0; clamped to the tiles there are)"},
    {"export-step", 1, nullptr, [](Call& c) { Emit(c.state, ExportStepFigure{c.w[1]}); },
     "FILE.png|svg|pdf|csv|npy: the Decode view's step (its weights over the cache) or the Tiled "
     "view's tile (m, l, rescale, O per row) on screen as a figure, as decode|tiled --step K -o "
     "FILE"},
    {"code-loop", 1,
     [](const Words& w) {
       if (w[1] != "decode" && w[1] != "tiled" && w[1] != "off")
         throw std::invalid_argument("decode, tiled or off");
     },
     [](Call& c) {
       c.state.code.training = false;
       c.state.code.loop = c.w[1] == "off" ? "" : c.w[1];
     },
     "decode|tiled|off: the Code view: the scenario's program followed by the Decode or Tiled "
     "view's loop (code --loop), or the scenario's alone"},
    {"compare", -1, CheckCompare, Compare,
     "scaled|causal|pin|heads [A B]|temperature A B: B of the compare view: sqrt(d_k) flipped, "
     "the mask flipped, a snapshot of the current state, head A against head B (default 0 and "
     "1), or the scenario's multiplier set to A (an edit) and B's to B"},
    {"compare-stage", 1, Stage1, [](Call& c) { Emit(c.state, SetCompareStage{StageArg(c.w[1])}); },
     "STAGE: the stage the compare view shows"},
    {"compare-decoded", 1, OnOff, [](Call& c) { Emit(c.state, SetCompareDecoded{c.w[1] == "on"}); },
     "on|off: the compare view shows A and B as the KV-cache decode computes them (the Decode "
     "view's prefill and chunk), or as the full computation"},
    {"export-compare", -1,
     [](const Words& w) {
       if (w.size() == 3) OneOf(w[1], {"a", "b", "diff"});
       if (w.size() != 2 && w.size() != 3) throw std::invalid_argument("[a|b|diff] FILE.png");
     },
     [](Call& c) {
       const CompareMap map = c.w.size() == 2 || c.w[1] == "diff" ? CompareMap::kDifference
                              : c.w[1] == "a"                     ? CompareMap::kA
                                                                  : CompareMap::kB;
       Emit(c.state, ExportCompare{map, c.w.back()});
     },
     "[a|b|diff] FILE.png: one compare heatmap (default diff) as PNG"},
    {"loss-key", 1, Integer1, [](Call& c) { Emit(c.state, SetLossKey{Integer(c.w[1])}); },
     "J: the gradients view's loss key (query row i should attend to key J)"},
    {"hover", 3, CheckCell, Hover,
     "MAP ROW COL: move the mouse over a cell (tooltip, row highlight)"},
    {"leave", 0, nullptr,
     [](Call& c) {
       c.state.script_mouse.active = true;
       c.state.script_mouse.pos = ImVec2(-FLT_MAX, -FLT_MAX);
       c.state.script_mouse.down = false;
     },
     ": move the mouse off the window (nothing hovered)"},
    {"click", 3, CheckCell, Hover,
     "MAP ROW COL: press and release the left button there (two frames)"},
    {"wheel", 4,
     [](const Words& w) {
       CheckCell(w);
       Integer(w[4]);
     },
     WheelOrPan, "MAP ROW COL STEPS: turn the mouse wheel over a shown cell (> 0 zooms in)"},
    {"pan", 5,
     [](const Words& w) {
       CheckCell(w);
       Integer(w[4]);
       Integer(w[5]);
     },
     WheelOrPan, "MAP R0 C0 R1 C1: drag with the left button from one shown cell to another"},
    {"idle", 1, Number1, StartIdle,
     "S: S seconds of wall-clock time without input: the window waits for events as it does "
     "for a learner who does nothing (--frame-stats reports the CPU time spent)"},
    {"modern", 1, OnOff,
     [](Call& c) {
       Emit(c.state, SetSectionOpen{SetSectionOpen::kModern, c.w[1] == "on"});
     },
     "on|off: open or close the controls' \"Modern attention\" section"},
    {"plots", 1, OnOff,
     [](Call& c) {
       Emit(c.state, SetSectionOpen{SetSectionOpen::kPlots, c.w[1] == "on"});
     },
     "on|off: show or hide the plots under the heatmaps"},
    {"wait", 1, Integer1,
     [](Call& c) { c.frames.left = static_cast<int>(std::max<int64_t>(Integer(c.w[1]) - 1, 0)); },
     "N: render N frames"},
    {"expect-dialog-error", -1, nullptr,
     [](Call& c) {
       const std::string text = RestOfLine(c);
       const DialogState& d = c.state.dialog;
       if (d.kind == DialogKind::kNone)
         c.failure = "expected the file dialog open with an error, but it is closed";
       else if (d.error.find(text) == std::string::npos)
         c.failure =
             "expected the file dialog's error to contain \"" + text + "\", got: " + d.error;
       c.state.action_error.clear();  // the failure was expected: the script goes on
     },
     "TEXT: the last file action failed and its dialog is open again with an error containing "
     "TEXT (must come right after the action)"},
    {"expect-error", -1, nullptr, ExpectError, "TEXT: the window shows an error containing TEXT"},
    {"expect-ok", 0, nullptr,
     [](Call& c) {
       if (!c.state.error.empty()) c.failure = "expected no error, got: " + c.state.error;
     },
     ": the window shows no error"},
    {"expect-status", -1, nullptr,
     [](Call& c) {
       const std::string text = RestOfLine(c);
       if (c.state.status.find(text) == std::string::npos)
         c.failure = "expected the status bar to say \"" + text + "\", got: " + c.state.status;
     },
     "TEXT: the status bar's message contains TEXT"},
    {"copy-code", 0, nullptr, [](Call& c) { Emit(c.state, CopyCode{}); },
     ": the code view's program to the clipboard"},
    {"copy-print", 1, Stage1, [](Call& c) { Emit(c.state, CopyStagePrint{StageArg(c.w[1])}); },
     "STAGE: that map's stage to the clipboard as print() writes it (its context menu's Copy "
     "as printed)"},
    {"check-output", 1, nullptr,
     [](Call& c) {
       try {
         c.state.check_output.text = ReadFile(c.w[1]);
       } catch (const std::exception& e) {
         c.failure = e.what();
         return;
       }
       Emit(c.state, CheckOutput{CheckOutput::kCheck});
     },
     "FILE: Edit > Check against my output with FILE's text pasted"},
    {"expect-check", 2, nullptr,
     [](Call& c) {
       const CheckOutputState& k = c.state.check_output;
       const std::string got = !k.result ? "no verdict (" + k.error + ")"
                                         : std::string(Name(k.result->verdict)) + " " +
                                               (k.result->cause.empty() ? "-" : k.result->cause);
       if (got != c.w[1] + " " + c.w[2])
         c.failure = "expected the check to say " + c.w[1] + " " + c.w[2] + ", got " + got;
     },
     "VERDICT CAUSE: the last check's verdict (match, close, explained, none) and cause (- for "
     "none)"},
    {"save-code", 1, nullptr, SaveText, "FILE: the code view's program, as shown"},
    {"save-clipboard", 1, nullptr, SaveText, "FILE: what the clipboard holds"},
    {"save-views", 1, nullptr, SaveText, "FILE: the views' state as JSON (views.h ViewsJson)"},
    {"save-layout", 1, nullptr, SaveText, "FILE: what --layout writes, for the last frame drawn"},
    {"tour", 1,
     [](const Words& w) {
       OneOf(w[1], {"start", "next", "back", "skip"});
     },
     [](Call& c) {
       const std::string& w = c.w[1];
       Emit(c.state, TourCommand{w == "start"  ? TourCommand::kStart
                                 : w == "next" ? TourCommand::kNext
                                 : w == "back" ? TourCommand::kBack
                                               : TourCommand::kSkip});
     },
     "start|next|back|skip: the guided tour"},
    {"quit", 0, nullptr, [](Call& c) { Emit(c.state, Quit{}); }, ": close the window"},
    {"dialog", 1, [](const Words& w) { DialogArg(w[1]); },
     [](Call& c) { Emit(c.state, OpenDialog{DialogArg(c.w[1])}); },
     "open|save|export|export-all|notebook: open that dialog (to look at it in a screenshot)"},
    {"choose", 2, [](const Words& w) { DialogArg(w[1]); },
     [](Call& c) {
       Emit(c.state, ChooseFile{DialogArg(c.w[1]), c.w[2], StageIndex(Stage::kWeights)});
     },
     "open|save|export|export-all|notebook FILE: a path picked in that file dialog (save: asks "
     "before replacing an existing file)"},
    {"replace", 1,
     [](const Words& w) {
       OneOf(w[1], {"yes", "no"});
     },
     [](Call& c) { Emit(c.state, ConfirmReplace{c.w[1] == "yes"}); },
     "yes|no: the answer to \"Replace file?\""},
    {"drop", -1,
     [](const Words& w) {
       if (w.size() < 2) throw std::invalid_argument("at least one FILE");
     },
     [](Call& c) { Emit(c.state, DropFiles{Words(c.w.begin() + 1, c.w.end())}); },
     "FILE...: files dropped on the window (the first .json opens)"},
    {"open-recent", 1,
     [](const Words& w) {
       if (Integer(w[1]) < 0) throw std::invalid_argument("N is >= 0");
     },
     OpenRecent, "N: File > Open Recent, the Nth file (0: newest)"},
    {"clear-recent", 0, nullptr, [](Call& c) { Emit(c.state, ClearRecentFiles{}); },
     ": File > Open Recent > Clear"},
    {"export-option", 2,
     [](const Words& w) {
       ExportChoices choices;
       std::string why;
       if (!SetExportOption(choices, w[1], w[2], &why)) throw std::invalid_argument(why);
     },
     [](Call& c) {  // the export dialog's choices, as its widgets set them
       ExportChoices choices = c.state.export_choices;
       std::string why;
       SetExportOption(choices, c.w[1], c.w[2], &why);
       Emit(c.state, SetExportChoices{choices});
     },
     "KEY VALUE: the export dialog's choice: format png|svg|pdf|csv|npy, stages "
     "this|pipeline|A,B,C, dpi N, width 8cm|3in|0, colorbar auto|shared|per-panel (then choose "
     "export FILE)"},
    // The Training view parses its own numbers when it runs: refused here first, by name.
    {"train-run", 3,
     [](const Words& w) {
       Integer(w[2]);
       Integer(w[3]);
     },
     [](Call& c) {
       Train(c, [&] { TrainScriptRun(c.state, c.w[1], Integer(c.w[2]), Integer(c.w[3])); });
     },
     "TASK STEPS D_K: the Training view: train scaled and unscaled (D_K 8|64|256)"},
    {"train-wait", 0, nullptr, [](Call& c) { Train(c, [&] { TrainScriptWait(c.state); }); },
     ": wait (blocks) for the training to end"},
    {"train-cancel", 0, nullptr, [](Call& c) { Train(c, [&] { TrainScriptCancel(c.state); }); },
     ": cancel the training"},
    {"train-wait-steps", 1, Integer1,
     [](Call& c) { Train(c, [&] { TrainScriptWaitSteps(c.state, Integer(c.w[1])); }); },
     "N: wait (blocks) until N steps of both runs are done"},
    {"train-step", 1, Integer1,
     [](Call& c) { Train(c, [&] { TrainScriptStep(c.state, Integer(c.w[1])); }); },
     "N: scrub the attention maps to step N"},
    {"train-export-csv", 1, nullptr,
     [](Call& c) { Train(c, [&] { TrainScriptExportCurves(c.state, c.w[1]); }); },
     "FILE: both loss curves as CSV"},
    {"train-export-curves", 1, nullptr,
     [](Call& c) { Train(c, [&] { TrainScriptExportCurves(c.state, c.w[1]); }); },
     "FILE: both loss curves as .png (a plot) or .csv"},
    {"train-save-scenario", 2, nullptr,
     [](Call& c) {
       Train(c, [&] { TrainScriptSaveScenario(c.state, c.w[1] == "unscaled", c.w[2]); });
     },
     "scaled|unscaled FILE: one trained head as a scenario file"},
    {"train-code", 1, nullptr, [](Call& c) { Train(c, [&] { TrainScriptCode(c.state, c.w[1]); }); },
     "scaled|unscaled|off: the Code view: the Training view's loop, or the scenario's"},
    {"microgpt-train", 2, [](const Words& w) { Integer(w[1]); },
     [](Call& c) { Train(c, [&] { MicrogptScriptTrain(c.state, Integer(c.w[1]), c.w[2]); }); },
     "STEPS SEED: the microgpt view: train microgpt.py on the names list in the background"},
    {"microgpt-wait", 0, nullptr, [](Call& c) { Train(c, [&] { MicrogptScriptWait(c.state); }); },
     ": wait (blocks) for the microgpt training to end"},
    {"microgpt-step", 1, Integer1,
     [](Call& c) { Train(c, [&] { MicrogptScriptStep(c.state, Integer(c.w[1])); }); },
     "N: the microgpt view's step (its document's attention at that step)"},
    {"microgpt-open", 1, nullptr, [](Call& c) { Train(c, [&] { MicrogptOpen(c.state, c.w[1]); }); },
     "FILE: the microgpt view: open a run saved with `attention-lab microgpt -o`"},
};

const CommandSpec* FindCommand(const std::string& name) {
  for (const CommandSpec& spec : kCommands)
    if (name == spec.name) return &spec;
  return nullptr;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] Loading and stepping

void ScriptRunner::Load(const std::string& path) {
  path_ = path;
  // Bounded, and only a regular file: /dev/zero or a FIFO would be read forever.
  std::istringstream in(ReadFile(path, kMaxScriptBytes, "a script"));
  std::string text;
  int line_no = 0;
  while (std::getline(in, text)) {
    ++line_no;
    if (const size_t hash = text.find('#'); hash != std::string::npos) text.resize(hash);
    std::istringstream words(text);
    Command c{line_no, {}};
    for (std::string w; words >> w;) c.words.push_back(w);
    if (c.words.empty()) continue;
    const CommandSpec* spec = FindCommand(c.words[0]);
    const std::string where = path + ":" + std::to_string(line_no) + ": ";
    if (!spec) throw std::runtime_error(where + "unknown command " + c.words[0]);
    const int n = static_cast<int>(c.words.size()) - 1;
    if (spec->arity >= 0 && n != spec->arity)
      throw std::runtime_error(where + c.words[0] + " takes " + std::to_string(spec->arity) +
                               " argument(s), got " + std::to_string(n));
    try {
      if (spec->check) spec->check(c.words);
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

bool ScriptRunner::Continue(AppState& state) {
  Frames& f = frames_;
  if (f.idle_until > 0) {
    if (SteadySeconds() < f.idle_until) return true;
    state.script_idle.wall = SteadySeconds() - f.idle_wall0;
    state.script_idle.cpu = ProcessCpuSeconds() - f.idle_cpu0;
    f.idle_until = 0;
    return true;
  }
  if (f.releasing) {
    state.script_mouse.down = false;
    f.releasing = false;
    return true;
  }
  if (f.unwheel) {
    state.script_mouse.wheel = 0.0f;
    f.unwheel = false;
    return true;
  }
  if (f.panning) {  // 8 frames from pan_from to pan_to, then the button is let go
    const float t = std::min(1.0f, static_cast<float>(++f.pan_frame) / 8.0f);
    state.script_mouse.pos = ImVec2(f.pan_from.x + (f.pan_to.x - f.pan_from.x) * t,
                                    f.pan_from.y + (f.pan_to.y - f.pan_from.y) * t);
    if (t >= 1.0f) {
      f.panning = false;
      f.releasing = true;
    }
    return true;
  }
  if (f.left > 0) {
    --f.left;
    if (f.dragging) {
      const int i = f.total - f.left;  // 1..total
      const double t = f.total > 1 ? (i - 1.0) / (f.total - 1.0) : 1.0;
      const double v = f.drag_from * std::pow(f.drag_to / f.drag_from, t);
      Emit(state, SetMultiplier{v}, "scaling.multiplier");
      if (f.left == 0) f.dragging = false;
    }
    return true;
  }
  return false;
}

double ScriptRunner::IdleSeconds() const {
  return frames_.idle_until > 0 ? std::max(frames_.idle_until - SteadySeconds(), 0.0) : 0.0;
}

bool ScriptRunner::Step(AppState& state) {
  if (!failure_.empty()) return false;
  // The previous command's file or export action failed?
  // (unless the next command expects the file dialog to come back with that error)
  const bool dialog_error_expected =
      next_ < commands_.size() && commands_[next_].words[0] == "expect-dialog-error";
  if (current_ && !state.action_error.empty() && !dialog_error_expected)
    return Fail(*current_, state.action_error);
  if (Continue(state)) return true;  // a command that spans frames
  state.script_drag = false;
  SettleRuns(state);  // each command sees the stages of the ones before it
  if (next_ >= commands_.size()) return false;
  current_ = &commands_[next_++];
  state.action_error.clear();
  Call call{state, current_->words, frames_, {}};
  FindCommand(current_->words[0])->run(call);  // Load refused unknown commands
  if (!call.failure.empty()) Fail(*current_, call.failure);
  return failure_.empty();
}

}  // namespace attnlab::gui
