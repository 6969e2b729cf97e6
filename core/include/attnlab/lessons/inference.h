// inference.h: the same attention computed the two ways models run it, each compared with the
// full computation (pipeline.h) it must equal.
//
// 1. KV-cache decoding (as LLMs-from-scratch's KV-cache chapter and nanochat's engine run it):
//    a prefill of P tokens (optionally in chunks of C), then one token per step. Each step's
//    queries attend over the keys and values cached from the earlier steps plus their own,
//    masked by the scenario's mask at the positions mask.align gives (MaskAlign); with a
//    sliding-window mask the cache keeps at most W keys (a ring buffer: the oldest is evicted).
// 2. FlashAttention's forward pass (Dao et al. 2022, Algorithm 1; FlashAttention-2's loop
//    order): Q in blocks of Br rows, K and V in blocks of Bc keys; per query row a running
//    maximum m, a running sum l and an unnormalised output O, rescaled by exp(m_old - m_new)
//    whenever the maximum grows; tiles the mask forbids entirely are skipped; the context is
//    O / l at the end (the "online softmax", Milakov & Gimelshein 2018).
//
// Both run in the scenario's dtype (float32, or float64 from Stages::f64) with the stage rules
// of the engine (stage_rules.h: logits, normalization, masked rows) on each step's own rows,
// and store their values as doubles (float32 values widen exactly). They differ from the full
// computation only by summation order (the dot products here run left to right over d, the
// engine's through Eigen's product; the online softmax sums blockwise): max_abs_diff says by how
// much.
//
// bfloat16 and float16 (the scenario's dtype; pipeline.h StoreAs). The decode computes in
// float32 and stores each step's scores, logits, weights (unless scaling.softmax_dtype is
// "float32") and context in the dtype, as the full computation stores its stages, from the K
// and V the cache holds as stored: its rows equal the full ones, but for a float32 sum in
// another order that lands on the other side of a rounding boundary. The tiles follow
// FlashAttention-2's half-precision kernel (Dao 2023; flash-attention's
// csrc/flash_attn/src/flash_fwd_kernel.h): Q, K and V in the dtype; the tile's logits, m, l
// and O in float32 (l sums the float32 P); P stored in the dtype before P·V, accumulated into
// the float32 O; the context O / l stored in the dtype at the end. The full computation stores
// its scores, logits and weights instead, so the two differ by the dtype's rounding of those:
// AgreementTolerance bounds it.
//
// Legend: B batch, H heads, T tokens, d_v the width of V and the context, dh_v = d_v / H;
// "position" = a token's index 0..T-1 in the scenario.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/base/tensor.h"
#include "attnlab/model/pipeline.h"

namespace attnlab {

/// A decode or tiled run the scenario or the options cannot take; the message names the
/// option or the scenario field ("--prefill: 9 is more than T = 6 tokens").
class InferenceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// How the tokens are fed to a decode run: positions 0..P-1 as the prefill, in chunks of C
/// (the last one shorter; C = 0 or C >= P: one chunk), then P, P+1, ..., T-1 one per step.
struct DecodeOptions {
  int64_t prefill = 1;  ///< P, 0..T (0: every token decoded one by one)
  int64_t chunk = 0;    ///< C >= 0 (0: the prefill in one step)
};

/// One step of a decode run: a prefill chunk or one decoded token.
struct DecodeStep {
  int64_t first = 0;             ///< position of the step's first query (first new token)
  int64_t t = 0;                 ///< tokens so far after the step: first + the step's queries
  std::vector<int64_t> keys;     ///< positions of the keys attended over, ascending: the cache
                                 ///< kept from earlier steps, then the step's own tokens
  std::vector<int64_t> evicted;  ///< positions dropped from the cache in this step (sliding
                                 ///< window: before attending, and the excess beyond W after)
  int64_t cache_len = 0;         ///< keys kept in the cache after the step (per head)
  MaskMatrix allowed;            ///< q_len x keys.size(): 1 where the query may attend (the
                                 ///< scenario's mask at the aligned positions)
  MatrixStackD scores, weights;  ///< B*H (index b * H + h) of q_len x keys.size()
  MatrixStackD logits;           ///< B*H of q_len x keys.size(): the step's logits (the
                                 ///< scenario's fill where `allowed` is 0)
  MatrixStackD sink;             ///< with scaling.sink: B*H of q_len x 1, what the sink's
                                 ///< column took of each new row (its weights sum to 1 minus
                                 ///< it); empty without a sink
  MatrixStackD context;          ///< B of q_len x d_v: the step's rows of the context
  double max_abs_diff = 0.0;     ///< largest |context - full context| over the step's rows
                                 ///< (nan where exactly one of the two is nan)
};

/// A whole decode run.
struct DecodeRun {
  std::vector<DecodeStep> steps;
  MatrixStackD context;       ///< B x T x d_v: every row as the cached computation made it
  double max_abs_diff = 0.0;  ///< largest over the steps
  double tolerance = 0.0;     ///< AgreementTolerance of the scenario: at most this, the same rows
  /// Cells the full mask allows that no step can attend (a key later than the step: with mask
  /// "none" or a prefix longer than the first step, a decode cannot equal the full
  /// computation). 0 for causal-type masks.
  int64_t unreachable_cells = 0;
};

/// Runs `st` (the stages of `s`, from Engine::Run or RunScenario) as a KV-cache decode
/// (see the header comment) and compares every row with st's context. Per step and per head:
/// scores = q k^T over the step's keys (left to right over dh), logits and weights by the
/// engine's stage rules with the step's mask (MaskAlign), context = weights V (then out_proj
/// if the scenario has one). Grouped K/V heads: query head h reads K/V head Shape::KvHead(h).
/// RoPE: the steps read Q_rot and K_rot, each row turned by its absolute position, as a KV
/// cache stores its keys already rotated (LLMs-from-scratch's KV-cache chapter, Llama).
/// bfloat16 / float16: each step's stages stored in the dtype (see the header comment).
/// Errors: InferenceError for P outside 0..T, C < 0, dropout p > 0 (a decode is inference:
/// "dropout.p: ... decode runs without dropout"), projections.head_split "view_no_transpose"
/// ("projections.head_split: a decode reads each token's own row of Q, K and V; ...").
/// Soft-capping and ALiBi act on each step's logits by the pipeline's rule, ALiBi's distance
/// between the query's and the key's absolute positions; a sink (gpt-oss) adds its column to
/// each new row's softmax (a row whose keys are all masked gets 0 weights, the sink 1), or with
/// scaling.sink_form "sigmoid" rescales it by sigmoid(lse - sink) (such a row is nan), as the
/// full computation.
DecodeRun RunDecode(const Scenario& s, const Stages& st, const DecodeOptions& opt);

/// Bytes a decode (`decode`) or a tiled run with key tiles of `block_k` holds besides the
/// scenario's stages, for CheckCommandMemory (the command line's decode and tiled, and the
/// window's Decode and Tiled views): per number it keeps (the decode's B*H*T(T+1)/2 weights;
/// the tiled run's B*H*ceil(T/Bc)*T values of O, m, l and rescale, dh_v + 3 a row) 112 bytes
/// for a decode and 64 for a tiled run: the run's doubles, the JSON tree and its text. The
/// decode's was measured (tests/memory_test.py): about 83 bytes per weight at T = 6688, causal;
/// 112 leaves a margin. Errors: none (block_k < 1 counts as 1).
double EstimateInferenceBytes(const Shape& shape, bool decode, int64_t block_k);

/// The stages `full` (of the scenario `run` decoded) with every row replaced by the row the
/// decode computed for that query, as if the steps' rows were stacked: row i of scores, logits,
/// weights and sink (B*H of T x T, T x 1) is query i's row in the step that held it, each value
/// at its key's position; keys the step did not hold (later tokens, keys evicted from a sliding
/// window's cache) get score 0, logit -inf and weight 0; `mask` (T x T) is 1 where the step let
/// query i attend (under mask.align, so a top-left step shows what it really allowed); context
/// is run.context. Everything before the scores (X, W, Q, K, V, ...) is full's. A float64 run's
/// double stages are replaced the same way. The float32 reference of a bfloat16 / float16 run
/// (Stages::f32) is dropped: it is the full computation's, not the decode's. For the compare
/// view's "as decoded" (the bug gallery's bug-decode-top-left: with q_len < kv_len the mask's
/// alignment matters, and only a decode shows it). Errors: std::invalid_argument when `run`
/// does not fit `full` (another T, B or H).
Stages DecodedStages(const Stages& full, const DecodeRun& run);

/// RunDecode's checks of `s` (T tokens) and `opt` alone, for what writes the loop without
/// running it (the generated program, python/codegen.h). Errors: InferenceError as RunDecode.
void CheckDecode(const Scenario& s, int64_t T, const DecodeOptions& opt);

/// One tile of the online softmax: query rows [row0, row0 + rows) of (batch, head) against
/// keys [key0, key0 + keys), and the state of its rows after it.
struct TileStep {
  int64_t batch = 0, head = 0;
  int64_t row0 = 0, rows = 0;   ///< the query block (Br rows, the last one shorter)
  int64_t key0 = 0, keys = 0;   ///< the key block (Bc keys, the last one shorter)
  bool skipped = false;         ///< every cell of the tile is masked: not computed
  std::vector<double> m;        ///< per row: the running maximum of the logits after the
                                ///< tile (-inf while no key was allowed yet)
  std::vector<double> l;        ///< per row: the running sum of exp(logit - m)
  std::vector<double> rescale;  ///< per row: exp(m_old - m_new), the factor l and O were
                                ///< multiplied by (1 when m did not change; 0 from -inf)
  MatrixD O;                    ///< rows x dh_v: the unnormalised output after the tile
};

/// A whole tiled (FlashAttention) run.
struct TiledRun {
  int64_t block_q = 0, block_k = 0;  ///< Br, Bc
  std::vector<TileStep> steps;       ///< batch by batch, head by head, query block by query
                                     ///< block, key blocks in order within (FlashAttention-2)
  int64_t skipped_tiles = 0;         ///< tiles the mask forbids entirely (over all b, h)
  MatrixStackD context;              ///< B x T x d_v: O / l per head, heads side by side
                                     ///< (then out_proj if any)
  double max_abs_diff = 0.0;         ///< largest |context - full context|
  double tolerance = 0.0;            ///< AgreementTolerance of the scenario
  MatrixStackD sink;                 ///< with scaling.sink: B*H (index b * H + h) of T x 1,
                                     ///< what the sink took of each row, exp(sink - m) / l
                                     ///< after the last tile (1 - sigmoid(m + log l - sink)
                                     ///< with sink_form "sigmoid"); empty without a sink
};

/// Runs `st` (the stages of `s`) through FlashAttention's forward loop with Br x Bc tiles and
/// compares the result with st's context. The logits of a tile follow the engine's rule
/// (scores x multiplier / sqrt(dh), ALiBi at the tile's absolute positions, soft-capping,
/// -inf where masked); a row that no key is allowed for ends with l = 0, so O / l is nan as
/// softmax gives (0 with masked_rows "zero"). With a sink each row starts at m = sink, l = 1
/// (the sink's column, rescaled like the rest and never multiplied with V), so such a row ends
/// at O / l = 0. With scaling.sink_form "sigmoid" (torchtitan) the online softmax runs without
/// the sink and O / l is multiplied by sigmoid(m + log l - sink) after the last tile (a row
/// with no allowed key stays nan: 0 / 0 times 0), the sink's share 1 minus that. Errors:
/// InferenceError for Br or Bc < 1, a normalization other than softmax
/// (the online softmax computes softmax: softmax_then_mask equals it and is accepted), dropout
/// p > 0, projections.head_split "view_no_transpose" (as RunDecode). RoPE: the tiles read Q_rot
/// and K_rot. bfloat16 / float16: FlashAttention-2's rule (float32 state, P stored in the dtype
/// before P·V, O / l stored; see the header comment).
TiledRun RunTiled(const Scenario& s, const Stages& st, int64_t block_q, int64_t block_k);

/// What a query block's rows come to after its last tile `t` (a step of `run`, RunTiled of `s`,
/// H query heads): rows x dh_v of O / l, times g = 1 - run.sink's share with scaling.sink_form
/// "sigmoid" (the gate sigmoid(m + log l - sink)), each value stored in s.dtype as the run's
/// context holds it (bfloat16 / float16 rounded, float32 and float64 as they are): the block's
/// columns of run.context before out_proj, computed in double from the step's O and l (within a
/// float32 rounding of the run's own). Errors: none (t must be a block's last tile of `run`).
MatrixD TileBlockOutput(const Scenario& s, const TiledRun& run, const TileStep& t, int64_t H);

/// RunTiled's checks of `s`, Br and Bc alone (as CheckDecode). Errors: InferenceError as RunTiled.
void CheckTiled(const Scenario& s, int64_t block_q, int64_t block_k);

/// The largest |decoded or tiled row - full row| that still means "the same computation" for
/// scenario `s` with stages `st` (what a decode or tiled run's max_abs_diff is held to), with
/// L the largest finite |value| of the full context: float64 1e-12 max(1, L); float32
/// 1e-5 max(1, L) (summation order moves the last bits); bfloat16 and float16
/// eps (2 L + G Vmax (2 + 2 Zmax)), eps the dtype's spacing at 1 (2^-7, 2^-10), Vmax the
/// largest |V|, Zmax the largest finite |logit| (or |sink logit|), G out_proj's largest column
/// sum of |W| (1 without): two roundings of the rows, and the weights' rounding (stored weights
/// or P, and the scores and logits the full computation stores and the tiles do not) carried
/// through V and out_proj. Errors: none.
double AgreementTolerance(const Scenario& s, const Stages& st);

}  // namespace attnlab
