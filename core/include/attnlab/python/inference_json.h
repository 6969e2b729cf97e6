// inference_json.h: a decode run and a tiled run (lessons/inference.h) as JSON, the output of
// `attention-lab decode` and `attention-lab tiled`. The key names are fixed (scripts rely on
// them; docs/scenario-format.md, "Decoding and tiles"):
//
//   decode: {"prefill", "chunk", "align", "dtype", "max_abs_diff", "tolerance"
//            (AgreementTolerance: max_abs_diff at most this is the same computation),
//            "unreachable_cells", "context" (B x T x d_v: every row as the cached computation
//            produced it), "steps": [{"first", "t" (tokens so far), "keys" (positions attended
//            over),
//                       "cache_len" (keys kept after the step), "evicted" (positions dropped),
//                       "max_abs_diff" (against the full computation), "weights"
//                       (B x H x q_len x keys), "sink" (with scaling.sink only:
//                       B x H x q_len x 1, what the sink took of each new row)}]}
//   tiled:  {"block_q", "block_k", "dtype", "max_abs_diff", "tolerance", "skipped_tiles",
//            "context" (B x T x d_v: O / l), "sink" (with scaling.sink only: B x H x T x 1,
//            exp(sink - m) / l after the last tile), "steps": [{"batch", "head", "rows" and
//            "keys" ([first, end) positions), "skipped", "m", "l", "rescale" (per row, after
//            the tile), "O" (rows x dh_v)}]}
//
// float32, bfloat16 and float16 runs write each value as its shortest float32 text (a bfloat16
// or float16 value is a float32 one; the tiles' m, l, rescale and O are float32 state), float64
// runs as the shortest double text; non-finite values as "nan", "inf", "-inf" (the dump's
// convention). max_abs_diff and tolerance are doubles.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "attnlab/lessons/inference.h"

namespace attnlab {

/// The decode run of scenario `s` with options `opt` as JSON (keys above). Errors: none.
nlohmann::json DecodeRunJson(const Scenario& s, const DecodeOptions& opt, const DecodeRun& run);

/// The tiled run of scenario `s` as JSON (keys above). Errors: none.
nlohmann::json TiledRunJson(const Scenario& s, const TiledRun& run);

}  // namespace attnlab
