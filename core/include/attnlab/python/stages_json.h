// stages_json.h: the stages of a run as JSON, the output of `attention-lab dump`.
//
// Keys and shapes (the dump format): X (B x T x d_in), W_query,
// W_key, W_value (d_in x d_out), Q, K (B x T x d_out), Q_rot, K_rot (B x T x d_out, Q and K
// after RoPE's rotation: "positions" "rope" only), V (B x T x d_v), scores, logits, weights
// and weights_dropped (B x H x T x T), mask (T x T of 0/1), context (B x T x d_v), shape (B, H,
// T, d_in, d_k = dh, d_out, d_v), tokens, and for text input token_ids and vocab. d_in is X's
// width, d_out the width of Q and K (all heads), d_k one head's share of it, d_v the width of V
// and the context: d_out except for qkv input (no X, no W: X, the W's and d_in are left out;
// d_out is input.d_k, or the given Q's columns), whose V has its own width.
// "stats": {var_q, var_k, var_scores, var_logits, var_weights}, the notebooks' .var() over the
// whole stages (stats.h: torch's unbiased float32 var, or NumPy's ddof = 0 for numpy
// scenarios, nan where logits are -inf). Also var_K (K.var() as the scenario's library computes
// it: stats.var_k, torch's unbiased value or NumPy's ddof = 0) and, when
// present, b_query, b_key, b_value (d_out), out_proj_W (d_out x d_out, x @ W), out_proj_b and,
// with scaling.sink, "sink" (B x H x T x 1: the sink column's share of each row's softmax).
#pragma once

#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "attnlab/lessons/grad.h"
#include "attnlab/model/pipeline.h"

namespace attnlab {

/// The stages as a JSON object: DumpStages parsed (small scenarios and tests). Floats hold the
/// shortest decimal text that reads back as the same float32; inf, -inf and nan the strings
/// "inf", "-inf" and "nan".
nlohmann::json StagesToJson(const Stages& stages);

/// The dump's text, written to `out` as it is produced (no JSON tree, so the memory of a dump
/// stays that of the stages: a 1 MiB buffer): one line, keys in byte order, floats as their
/// shortest float32 text (whole values as 1.0), "nan"/"inf"/"-inf" as strings. Errors: those
/// of `out` (the caller checks its state); std::bad_alloc.
void WriteStagesJson(std::ostream& out, const Stages& stages);

/// A stage computed elsewhere, written into the dump after "context" (grad.h's gradients):
/// its key must sort between "context" and "logits" in byte order, and the extras be in byte
/// order, so the dump's keys stay sorted. B > 0: a stack as B x rows x cols (H = 0) or
/// B x H x T x T (index b * H + h); B = 0: the single matrix stack->front().
struct DumpExtra {
  const char* key;
  const MatrixStack* stack;
  int64_t B = 0, H = 0;
};

/// WriteStagesJson with the `extra` stages added (their numbers written as the stages' are).
void WriteStagesJson(std::ostream& out, const Stages& stages, const std::vector<DumpExtra>& extra);

/// WriteStagesJson into a string (ends with a newline).
std::string DumpStages(const Stages& stages);

/// The dump with the gradients (grad.h) added, for `attention-lab dump --loss-row I
/// --loss-key J`: "grad_logits", "grad_scores" (B x H x T x T), "grad_Q", "grad_K"
/// (B x T x d_out), "grad_W_query", "grad_W_key" (d_in x d_out; left out for qkv input, which
/// has no W) and "jacobian_row" (T x T, batch 0, head 0), written as the stages are. Errors:
/// those of `out` (the caller checks its state); std::bad_alloc.
void WriteStagesJsonWithGradients(std::ostream& out, const Stages& stages, const Gradients& g);

}  // namespace attnlab
