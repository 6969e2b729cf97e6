// stages.h: the one table of the engine's stages. Every fact about a stage that is not computed
// from a run — its spelling (--stage, scripts, --layout, the dump's key, the program's
// variable), its help sentence, what `show` calls it, its place in the pipeline and in `show`,
// whether it has heads, batches, columns of a projection, keys for rows, how it is coloured and
// drawn, and what a run needs to make it — is a field of its row in kStageTable. The figures,
// the print, the dump, codegen, the command line and the window read the row; switches that
// remain elsewhere compute values (a stage's tensor, its title for a scenario).
//
// Adding a stage: a value of Stage (at the end: the window's arrays are indexed by it), its row
// at the end of kStageTable, then the code that computes it (CONTRIBUTING.md, "Adding a stage").
//
// Legend: B batch, H heads, T tokens, d_in input width, d_k head width, d_v value width.
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab {

/// The stages of a run, in the order of kStageTable's rows (the window's arrays are indexed by
/// it; the pipeline's order is StageRow::pipeline_place): the input X (B x T x d_in), the
/// projections Q, K, V (one head's d_k columns each), Q and K after RoPE's rotation (positions
/// "rope" only), then the T x T stages and the context; last, what gpt-oss's attention sink
/// took of each row (T x 1 per head, scaling.sink only).
enum class Stage {
  kX,
  kQ,
  kK,
  kV,
  kQRot,
  kKRot,
  kScores,
  kMask,
  kLogits,
  kWeights,
  kWeightsDropped,
  kContext,
  kSink
};

/// How a stage's values are coloured (heatmap_spec.h StageIsDiverging, StageRange, ScanStage).
enum class StageColours {
  kSigned,   ///< a diverging map centred on zero: scores, logits, X, Q, K, V, context
  kWeights,  ///< attention weights: sequential (RangeMode applies) unless a weight is negative
  kUnit,     ///< a share in [0, 1] on a sequential map: the mask (0/1), the sink
};

/// What a stage's matrix is, rows by columns (heatmap_spec.h StageContent's labels, the
/// hover's explanation, the overview's highlight).
enum class StageShape {
  kTokenByDimension,  ///< a token (query or key) per row, a dimension per column: X, Q, K, V,
                      ///< Q_rot, K_rot, context
  kQueryByKey,        ///< T x T, a query per row, a key per column: scores, mask, logits,
                      ///< weights, weights_dropped
  kQueryByOne,        ///< T x 1, one number per query: the sink's share
};

/// One stage's facts. `absent` and `absent_note` are empty for the stages every run makes.
struct StageRow {
  Stage stage;
  const char* name;         ///< --stage, scripts, --layout, the dump's key, codegen's variable
  int pipeline_place;       ///< its place in AllStages (the pipeline figure, export --all)
  int show_place;           ///< its place among the stages `show` prints (the W's follow X)
  int overview_row;         ///< the window's overview: 0 its first row (X .. scores), 1 the second
  bool per_head;            ///< one matrix per head (B*H of them)
  bool projected;           ///< a head's columns of a B x T x d matrix: Q, K, V, Q_rot, K_rot
  bool key_side;            ///< rows are keys, heads are the K/V heads: K, V, K_rot
  bool batched;             ///< one matrix per batch entry (all but the mask, T x T once)
  bool hatches_masked;      ///< masked cells drawn hatched (the logits only where the mask acts
                            ///< on them: heatmap_spec.cpp StageContent)
  StageColours colours;     ///< how it is coloured
  StageShape shape;         ///< rows by columns
  const char* help;         ///< one sentence on what it is (tooltips, figures' metadata)
  const char* print_what;   ///< `show`'s description after the name
  const char* absent;       ///< ExtractStage's reason when the run lacks it, after the name
  const char* absent_note;  ///< `show --stage NAME`'s reason when the run lacks it
};

// clang-format off
/// Every stage's row, in Stage's order (row i is Stage i: checked below and in stages_test).
inline constexpr StageRow kStageTable[] = {
    {Stage::kX, "X", 0, 0, 0, false, false, false, true, false, StageColours::kSigned,
     StageShape::kTokenByDimension,
     "The input: one row per token (its embedding, or the given or drawn matrix). "
     "Q, K and V are made from these rows.",
     "input embeddings",
     ": this scenario has no input matrix (Q, K and V are given)", "Q, K and V are given"},
    {Stage::kQ, "Q", 1, 1, 0, true, true, false, true, false, StageColours::kSigned,
     StageShape::kTokenByDimension,
     "Queries: row i is what token i looks for, x_i W_query. A head uses its own d_k "
     "columns; the score of query i with key j is the dot product q_i \u00B7 k_j.",
     "queries", "", ""},
    {Stage::kK, "K", 2, 2, 0, true, true, true, true, false, StageColours::kSigned,
     StageShape::kTokenByDimension,
     "Keys: row j is what token j offers to be found by, x_j W_key. Scores compare "
     "every query row with every key row.",
     "keys", "", ""},
    {Stage::kV, "V", 3, 3, 0, true, true, true, true, false, StageColours::kSigned,
     StageShape::kTokenByDimension,
     "Values: row j is what token j passes on, x_j W_value. The context of query i "
     "is the average of these rows, weighted by row i of the attention weights.",
     "values", "", ""},
    {Stage::kQRot, "Q_rot", 4, 4, 0, true, true, false, true, false, StageColours::kSigned,
     StageShape::kTokenByDimension,
     "RoPE's queries: row i is q_i with each pair of dimensions turned by an angle "
     "proportional to the position i (pair p faster for small p: theta^(-2p/d_k) per "
     "position). Lengths stay; only directions turn.",
     "queries after RoPE's rotation",
     " needs positions \"rope\" (this scenario rotates nothing)", "positions is not \"rope\""},
    {Stage::kKRot, "K_rot", 5, 5, 0, true, true, true, true, false, StageColours::kSigned,
     StageShape::kTokenByDimension,
     "RoPE's keys: row j is k_j turned by position j as the queries are. A rotated "
     "query dotted with a rotated key depends on i - j only: moving every token by the "
     "same amount changes no score.",
     "keys after RoPE's rotation",
     " needs positions \"rope\" (this scenario rotates nothing)", "positions is not \"rope\""},
    {Stage::kScores, "scores", 6, 6, 0, true, false, false, true, false, StageColours::kSigned,
     StageShape::kQueryByKey,
     "Attention scores: the dot product of query i with key j, before any scaling. "
     "Rows are queries (the token that looks), columns are keys (the tokens looked at).",
     "Q @ K^T, before scaling", "", ""},
    {Stage::kMask, "mask", 7, 8, 1, false, false, false, false, true, StageColours::kUnit,
     StageShape::kQueryByKey,
     "Which keys each query may look at. Causal: only itself and earlier tokens. "
     "Masked cells (hatched) get a logit of -inf, so their weight is 0.",
     "1 = may attend", "", ""},
    {Stage::kLogits, "logits", 8, 7, 1, true, false, false, true, true, StageColours::kSigned,
     StageShape::kQueryByKey,
     "The scores times the multiplier (1/temperature), divided by sqrt(d_k) when "
     "scaling is on, with -inf where the mask forbids. Softmax sees these numbers. "
     "Soft-capping (Gemma 2) squashes them into (-c, c) with c tanh(x / c) first.",
     "scaled scores, -inf where masked", "", ""},
    {Stage::kWeights, "weights", 9, 9, 1, true, false, false, true, true, StageColours::kWeights,
     StageShape::kQueryByKey,
     "Attention weights: each row is normalised (softmax by default) so it sums to 1. "
     "A peaked row means the query attends to almost one key. With an attention sink "
     "(gpt-oss) one more column takes a share, so rows sum below 1.",
     "attention weights", "", ""},
    {Stage::kWeightsDropped, "weights_dropped", 11, 10, 1, true, false, false, true, true,
     StageColours::kWeights, StageShape::kQueryByKey,
     "nn.Dropout in training mode: each weight is multiplied by 0 with probability p, "
     "else by 1 / (1 - p) (a dropped inf or nan weight becomes nan).",
     "attention weights after dropout",
     " needs dropout p > 0 (this scenario has none)", "dropout p is 0"},
    {Stage::kContext, "context", 12, 12, 1, false, false, false, true, false, StageColours::kSigned,
     StageShape::kTokenByDimension,
     "Context vectors: row i is the weighted average of the value vectors, using row i "
     "of the weights (heads side by side, then out_proj if any).",
     "context vectors", "", ""},
    {Stage::kSink, "sink", 10, 11, 1, true, false, false, true, false, StageColours::kUnit,
     StageShape::kQueryByOne,
     "The attention sink (gpt-oss): one more column with a fixed logit joins each row's "
     "softmax and is dropped before the weights meet V. Row i's number is the share it "
     "took: the row's weights sum to 1 minus it, so a query can attend to nothing.",
     "what the attention sink took of each row (gpt-oss)",
     " needs scaling.sink (this scenario has no attention sink)", "no scaling.sink"},
};
// clang-format on

/// How many stages there are: the size of the window's per-stage arrays.
inline constexpr int kStageCount = static_cast<int>(std::size(kStageTable));
static_assert(kStageCount == static_cast<int>(Stage::kSink) + 1,
              "every Stage value needs its row in kStageTable (and the last value is kSink)");

/// The row of `stage`. A value outside the enum (a cast out of range) is a programming error.
constexpr const StageRow& RowOf(Stage stage) { return kStageTable[static_cast<size_t>(stage)]; }

/// "X", "Q", "K", "V", "Q_rot", "K_rot", "scores", "mask", "logits", "weights",
/// "weights_dropped", "context", "sink": RowOf(stage).name.
inline const char* StageName(Stage stage) { return RowOf(stage).name; }

/// Stages with one matrix per head: Q, K, V, Q_rot, K_rot (the head's d_k columns), scores,
/// logits, weights, weights_dropped, sink.
inline bool StageIsPerHead(Stage stage) { return RowOf(stage).per_head; }

/// Q, K, V, Q_rot or K_rot: a head's columns of a B x T x d matrix (rows are tokens, columns
/// dimensions).
inline bool StageIsProjected(Stage stage) { return RowOf(stage).projected; }

/// K, V or K_rot: a stage whose rows are keys and whose heads are the K/V heads (KV of them
/// with projections.kv_heads; query head h shows K/V head Shape::KvHead(h)).
inline bool StageIsKeySide(Stage stage) { return RowOf(stage).key_side; }

/// The weights before or after dropout (StageColours::kWeights): RangeMode applies to them.
inline bool StageIsWeights(Stage stage) { return RowOf(stage).colours == StageColours::kWeights; }

/// Every stage, in pipeline order: X, Q, K, V, Q_rot, K_rot, scores, mask, logits, weights,
/// sink, weights_dropped, context (StageRow::pipeline_place).
const std::vector<Stage>& AllStages();

/// Every stage in the order `show` prints them (StageRow::show_place): X, Q, K, V, Q_rot,
/// K_rot, scores, logits, mask, weights, weights_dropped, sink, context.
const std::vector<Stage>& ShowStages();

/// The stage called `name` (StageName, case-sensitive), or nullopt.
std::optional<Stage> ParseStage(std::string_view name);

struct Scenario;
/// Whether a run of `scenario` makes `stage` (the rows with an `absent` reason are the ones it
/// may lack): X unless the input is qkv, Q_rot and K_rot with positions "rope",
/// weights_dropped with dropout p > 0, sink with scaling.sink; every other stage always.
/// Errors: none.
bool StageInRun(Stage stage, const Scenario& scenario);

/// The names of `stages` joined by ", ", the last by `last_separator`: "X, Q or K".
std::string StageNameList(const std::vector<Stage>& stages, const char* last_separator = ", ");

}  // namespace attnlab
