// inference_view.cpp: see inference_view.h.
#include "gui/state/inference_view.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

#include "attnlab/base/text.h"
#include "gui/state/app_state.h"

namespace attnlab::gui {
namespace {

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// A double for JSON: non-finite values as the dump writes them.
nlohmann::json Num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

}  // namespace

bool Do(AppState& state, const SetInference& a) {
  InferenceViewState& v = state.inference;
  using F = SetInference::Field;
  switch (a.field) {
    case F::kPrefill:
      v.prefill = std::max<int64_t>(a.value, 0);
      v.decode_step = 0;
      break;
    case F::kChunk:
      v.chunk = std::max<int64_t>(a.value, 0);
      v.decode_step = 0;
      break;
    case F::kDecodeStep:
      v.decode_step = std::max<int64_t>(a.value, 0);  // RefreshInference clamps to the run's steps
      break;
    case F::kBlockQ:
      v.block_q = std::max<int64_t>(a.value, 1);
      v.tile_step = 0;
      break;
    case F::kBlockK:
      v.block_k = std::max<int64_t>(a.value, 1);
      v.tile_step = 0;
      break;
    case F::kTileStep:
      v.tile_step = std::max<int64_t>(a.value, 0);
      break;
    case F::kPlay:
      v.playing = a.value != 0;
      v.advanced_at = Seconds();
      break;
  }
  return false;  // the scenario is unchanged
}

std::vector<std::string> NumberedLabels(const char* prefix, int64_t n) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

std::string AgreementText(const Scenario& s, double diff, double tolerance, bool tiled,
                          bool* equal) {
  *equal = !std::isnan(diff) && diff <= tolerance;
  if (diff == 0) return ": the same rows, bit for bit";
  if (!*equal)
    return tiled ? ": beyond the tolerance " + FormatNumber(tolerance, NumberStyle::kGeneral, 3)
                 : ": they differ (tolerance " + FormatNumber(tolerance, NumberStyle::kGeneral, 3) +
                       ")";
  const std::string tol = " (tolerance " + FormatNumber(tolerance, NumberStyle::kGeneral, 3) + ")";
  if (!IsLowPrecision(s.dtype))
    return std::string(": the same up to ") + Name(s.dtype) + " summation order" + tol;
  return tiled ? std::string(": the same up to ") + Name(s.dtype) +
                     " rounding: the tiles keep the logits in float32 and round P, the full "
                     "computation rounds its scores, logits and weights" +
                     tol
               : std::string(": the same up to one ") + Name(s.dtype) +
                     " rounding: a float32 sum in another order crossed a rounding boundary" + tol;
}

std::string DtypeNote(const Scenario& s, bool tiled) {
  const std::string d = Name(s.dtype);
  if (s.dtype == Dtype::kFloat64) return "float64: every step computed in double.";
  if (!IsLowPrecision(s.dtype)) return "";
  if (tiled)
    return d + " (FlashAttention-2): Q, K, V in " + d +
           "; each tile's logits and the running m, "
           "l and O in float32; P rounded to " +
           d + " before P\u00B7V; O / l rounded to " + d + " at the end.";
  return d + ": the cache holds K and V as stored in " + d + "; each step's scores, logits, " +
         (s.scaling.softmax_dtype == SoftmaxDtype::kFloat32
              ? std::string("context (weights float32, the upcast softmax)")
              : std::string("weights and context")) +
         " computed in float32 and rounded to " + d + ", as the full computation's.";
}

int64_t DecodeStepCount(const AppState& state) {
  return state.inference.decode ? static_cast<int64_t>(state.inference.decode->steps.size()) : 0;
}

int64_t TileStepCount(const AppState& state) {
  return state.inference.tiled ? static_cast<int64_t>(state.inference.tiled->steps.size()) : 0;
}

void RefreshInference(AppState& state) {
  InferenceViewState& v = state.inference;
  const Stages* st = ReadableStages(state);
  if (!HasShownRun(state) || st == nullptr) return;
  const int64_t T = st->shape.T;
  const std::string key = std::to_string(state.shown_version) + "/" + std::to_string(v.prefill) +
                          "/" + std::to_string(v.chunk) + "/" + std::to_string(v.block_q) + "/" +
                          std::to_string(v.block_k);
  const double cells = static_cast<double>(st->shape.B * st->shape.H) * static_cast<double>(T) *
                       static_cast<double>(T);
  if (key != v.made_for && cells > kMaxInferenceCells) {
    v.made_for = key;
    v.decode.reset();
    v.tiled.reset();
    v.decode_error = v.tiled_error =
        "B \u00D7 H \u00D7 T\u00B2 = " + std::to_string(static_cast<int64_t>(cells)) +
        " cells, more than these views step through (4194304); attention-lab decode and tiled "
        "run it on the command line";
  }
  if (key != v.made_for) {
    v.made_for = key;
    // The command line's memory rule, before anything is allocated (CheckCommandMemory).
    try {
      CheckCommandMemory(state.shown, st->shape, "the Decode view",
                         EstimateInferenceBytes(st->shape, true, 1));
      v.decode = RunDecode(state.shown, *st, {std::min(v.prefill, T), v.chunk});
      v.decode_error.clear();
    } catch (const std::exception& e) {
      v.decode.reset();
      v.decode_error = e.what();
    }
    try {
      CheckCommandMemory(state.shown, st->shape, "the Tiled view",
                         EstimateInferenceBytes(st->shape, false, std::min(v.block_k, T)));
      v.tiled = RunTiled(state.shown, *st, std::min(v.block_q, T), std::min(v.block_k, T));
      v.tiled_error.clear();
    } catch (const std::exception& e) {
      v.tiled.reset();
      v.tiled_error = e.what();
    }
  }
  v.decode_step =
      std::clamp<int64_t>(v.decode_step, 0, std::max<int64_t>(DecodeStepCount(state) - 1, 0));
  v.tile_step = std::clamp<int64_t>(v.tile_step, 0, std::max<int64_t>(TileStepCount(state) - 1, 0));
  if (v.playing && Seconds() - v.advanced_at >= kPlaySeconds) {
    const bool decode = state.central == CentralView::kDecode;
    int64_t& step = decode ? v.decode_step : v.tile_step;
    const int64_t count = decode ? DecodeStepCount(state) : TileStepCount(state);
    if (step + 1 < count)
      ++step;
    else
      v.playing = false;
    v.advanced_at = Seconds();
  }
}

std::string InferenceJson(const AppState& state) {
  const InferenceViewState& v = state.inference;
  nlohmann::json j = {{"prefill", v.prefill},         {"chunk", v.chunk},
                      {"block_q", v.block_q},         {"block_k", v.block_k},
                      {"decode_step", v.decode_step}, {"tile_step", v.tile_step},
                      {"playing", v.playing},         {"decode_error", v.decode_error},
                      {"tiled_error", v.tiled_error}};
  if (v.decode && !v.decode->steps.empty()) {
    const DecodeStep& s = v.decode->steps[static_cast<size_t>(v.decode_step)];
    j["decode"] = {{"steps", v.decode->steps.size()},
                   {"max_abs_diff", Num(v.decode->max_abs_diff)},
                   {"tolerance", Num(v.decode->tolerance)},
                   {"t", s.t},
                   {"keys", s.keys},
                   {"evicted", s.evicted},
                   {"cache_len", s.cache_len},
                   {"step_max_abs_diff", Num(s.max_abs_diff)}};
  }
  if (v.tiled && !v.tiled->steps.empty()) {
    const TileStep& s = v.tiled->steps[static_cast<size_t>(v.tile_step)];
    nlohmann::json m = nlohmann::json::array(), l = nlohmann::json::array();
    for (double x : s.m) m.push_back(Num(x));
    for (double x : s.l) l.push_back(Num(x));
    j["tiled"] = {{"steps", v.tiled->steps.size()},
                  {"max_abs_diff", Num(v.tiled->max_abs_diff)},
                  {"tolerance", Num(v.tiled->tolerance)},
                  {"skipped_tiles", v.tiled->skipped_tiles},
                  {"rows", {s.row0, s.row0 + s.rows}},
                  {"keys", {s.key0, s.key0 + s.keys}},
                  {"skipped", s.skipped},
                  {"m", m},
                  {"l", l}};
  }
  return j.dump();
}

}  // namespace attnlab::gui
