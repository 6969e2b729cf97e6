// scenario_test.cpp: reading, validating and writing scenario@1. Every refusal names its field
// and says what is wrong; these tests check the message, not just that something was thrown.
#include "attnlab/model/scenario.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "attnlab/base/file_io.h"
#include "attnlab/model/presets.h"
#include "test_util.h"

namespace attnlab {
namespace {

const char* kJourney = R"({
  "format": "attention-lab/scenario@1",
  "input": {"source": "matrix", "values": [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66]]},
  "projections": {"init": "torch_rand", "d_out": 2, "seed": 123}
})";

// Parses kJourney with `from` replaced by `to`, expecting a refusal; returns its message.
std::string ErrorOf(const std::string& json) {
  try {
    ParseScenario(json);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(accepted)";
}

std::string Edit(const std::string& from, const std::string& to) {
  std::string s = kJourney;
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

// dtype bfloat16 / float16, mask.fill and scaling.softmax_dtype: what has no meaning is refused.
TEST(LowPrecisionScenario, RefusesWhatHasNoMeaning) {
  const std::string low = R"({
  "format": "attention-lab/scenario@1",
  "input": {"source": "matrix", "values": [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66]]},
  "projections": {"init": "torch_rand", "d_out": 2, "seed": 123},
  "scaling": {"softmax_dtype": "float32"},
  "mask": {"kind": "causal", "fill": "-1e9"},
  "dtype": "bfloat16"
})";
  const auto With = [&](const std::string& from, const std::string& to) {
    std::string s = low;
    return s.replace(s.find(from), from.size(), to);
  };
  EXPECT_EQ(ErrorOf(low), "(accepted)");
  EXPECT_EQ(ErrorOf(With("\"bfloat16\"", "\"float8\"")).rfind("dtype: ", 0), 0u);
  const std::string upcast = ErrorOf(With("\"bfloat16\"", "\"float32\""));
  EXPECT_NE(upcast.find("scaling.softmax_dtype: \"float32\" upcasts the softmax of a bfloat16 or "
                        "float16 scenario; dtype is \"float32\""),
            std::string::npos)
      << upcast;
  const std::string fill = ErrorOf(With("\"-1e9\"", "\"-1e8\""));
  EXPECT_NE(fill.find("mask.fill"), std::string::npos) << fill;
  EXPECT_NE(fill.find("finfo_min"), std::string::npos) << fill;  // lists the accepted names
  const std::string numpy_input = R"("input": {"source": "matrix", "generator": "numpy",)";
  std::string numpy = With(R"("input": {"source": "matrix",)", numpy_input);
  numpy.replace(numpy.find(R"(, "fill": "-1e9")"), 16, "");
  // NumPy's draws stored in bfloat16 too: its program rounds float32's bits (codegen.h).
  EXPECT_EQ(ParseScenario(numpy).dtype, Dtype::kBfloat16);
  EXPECT_EQ(ParseScenario(numpy).input.generator, Generator::kNumpy);
  std::string numpy_fill = With(R"("input": {"source": "matrix",)", numpy_input);
  numpy_fill.replace(numpy_fill.find(R"("scaling")"), 39, R"("scaling": {})");
  numpy_fill.replace(numpy_fill.find("\"bfloat16\""), 10, "\"float32\"");
  EXPECT_EQ(ErrorOf(numpy_fill),
            "mask.fill: must be \"-inf\" with input.generator \"numpy\" (the "
            "NumPy programs add a 0 / -inf mask)");
}

TEST(ParseScenario, ReadsTheDefaults) {
  const Scenario s = ParseScenario(kJourney);
  EXPECT_EQ(s.input.source, InputSource::kMatrix);
  EXPECT_EQ(s.input.values[0].rows(), 2);
  EXPECT_EQ(s.projections.d_out, 2);
  EXPECT_EQ(s.projections.seed, 123u);
  EXPECT_EQ(s.projections.heads, 1);
  EXPECT_TRUE(s.scaling.sqrt_dk);
  EXPECT_EQ(s.scaling.multiplier, 1.0);
  EXPECT_EQ(s.mask.kind, MaskKind::kNone);
  EXPECT_EQ(s.normalization, Normalization::kSoftmax);
  EXPECT_EQ(s.dropout.p, 0.0);
  EXPECT_FALSE(s.dropout.seed.has_value());
}

TEST(ParseScenario, RefusesBadInputNamingTheField) {
  struct Case {
    std::string json, message;
  };
  const std::vector<Case> cases = {
      {R"({"format": "attention-lab/scenario@1", "projections": {"init": "identity"}})",
       "input: missing required field"},
      {Edit("\"matrix\"", "\"image\""),
       "input.source: unknown value \"image\" (expected one of: matrix, text, randn, qkv)"},
      {Edit("[0.55, 0.87, 0.66]", "[0.55, 0.87]"),
       "input.values[1]: has 2 entries but row 0 has 3 (ragged rows)"},
      {Edit("0.87", "1e39"), "input.values[1][1]: is 1e+39, which is not finite in float32"},
      {Edit("0.87", "\"nan\""), "input.values[1][1]: must be a number, not a string"},
      {Edit("\"d_out\": 2", "\"d_out\": 2, \"heads\": 3"),
       "projections.heads: 3 heads do not divide d_out = 2 (each head takes d_out / heads "
       "columns)"},
      {Edit("\"d_out\": 2", "\"d_out\": \"2\""),
       "projections.d_out: must be a whole number, not a string"},
      {Edit("\"d_out\": 2", "\"d_out\": 2.5"),
       "projections.d_out: must be a whole number, not 2.5"},
      {Edit("\"d_out\": 2", "\"d_out\": 0"),
       "projections.d_out: must be between 1 and 1099511627776, got 0"},
      {Edit("\"d_out\": 2, ", ""),
       "projections.d_out: missing required field (init \"torch_rand\")"},
      {Edit("\"seed\": 123", "\"seed\": 123, \"colour\": \"red\""),
       "projections.colour: unknown field (expected one of: init, d_out, seed, order, bias, heads, "
       "kv_heads, out_proj, per_head, head_split, qk_norm, W_query, W_key, W_value)"},
      {Edit("\"seed\": 123", "\"seed\": 123, \"per_head\": 1"),
       "projections.per_head: must be true or false, not a number"},
      {Edit("\"input\"", "\"temperature\": 2, \"input\""),
       "temperature: unknown field (expected one of: format, title, input, projections, scaling, "
       "mask, normalization, dropout, dtype, positions)"},
      {Edit("\"seed\": 123", "\"seed\": 123, \"order\": [\"key\", \"key\", \"value\"]"),
       "projections.order[1]: \"key\" appears twice; list query, key, value once each"},
      {Edit("scenario@1", "scenario@2"),
       "format: must be \"attention-lab/scenario@1\", got \"attention-lab/scenario@2\""},
      {Edit("\"seed\": 123}", "\"seed\": 123}, \"dropout\": {\"p\": 1.0}"),
       "dropout.p: must be in [0, 1), got 1.0"},
      {Edit("\"seed\": 123}",
            "\"seed\": 123}, \"mask\": {\"kind\": \"custom\", \"allowed\": [[1]]}"),
       "mask.allowed: is 1 x 1 but must be T x T = 2 x 2"},
      {Edit("\"seed\": 123}",
            "\"seed\": 123}, \"mask\": {\"kind\": \"custom\", \"allowed\": [[1, 2], [1, 1]]}"),
       "mask.allowed[0][1]: must be 0 or 1"},
      {Edit("\"seed\": 123}", "\"seed\": 123}, \"mask\": {\"kind\": \"upper\"}"),
       "mask.kind: unknown value \"upper\" (expected one of: none, causal, custom, "
       "sliding_window, prefix_lm, document, and, or)"},
      {Edit("\"seed\": 123}", "\"seed\": 123}, \"normalization\": \"softermax\""),
       "normalization: unknown value \"softermax\" (expected one of: softmax, softmax_naive, sum, "
       "mean, softmax_then_mask, softmax_then_mask_no_renorm, softmax_dim_query)"},
      {Edit("\"seed\": 123}", "\"seed\": 123}, \"scaling\": {\"sqrt_dk\": \"yes\"}"),
       "scaling.sqrt_dk: must be true or false, not a string"},
      {R"({"format": "attention-lab/scenario@1",
           "input": {"source": "text", "text": "", "d_in": 3, "seed": 1},
           "projections": {"init": "identity"}})",
       "input.text: must not be empty"},
      {R"({"format": "attention-lab/scenario@1",
           "input": {"source": "text", "text": "   ", "d_in": 3, "seed": 1},
           "projections": {"init": "identity"}})",
       "input.text: has no tokens with the \"words\" tokenizer"},
      {R"({"format": "attention-lab/scenario@1",
           "input": {"source": "text", "text": "a b", "tokenizer": "bpe", "d_in": 3, "seed": 1},
           "projections": {"init": "identity"}})",
       "input.tokenizer: unknown value \"bpe\" (expected one of: words, words_and_spaces, chars)"},
      {R"({"format": "attention-lab/scenario@1",
           "input": {"source": "text", "text": "a b", "d_in": 0, "seed": 1},
           "projections": {"init": "identity"}})",
       "input.d_in: must be between 1 and 1099511627776, got 0"},
      {R"({"format": "attention-lab/scenario@1",
           "input": {"source": "randn", "length": 10000000, "d_in": 4, "seed": 1},
           "projections": {"init": "identity"}})",
       "input.length: T = 10000000 (B = 1, H = 1, d_in = 4, d_out = 4) needs about 1.49e+06 GiB, "
       "more than the 2 GiB limit of a scenario"},
      {R"({"format": "attention-lab/scenario@1",
           "input": {"source": "matrix", "values": [[1, 2]]},
           "projections": {"init": "identity", "out_proj": true}})",
       "projections.out_proj: needs init \"linear\", not \"identity\""},
      {R"({"format": "attention-lab/scenario@1",
           "input": {"source": "matrix", "values": [[1, 2]]},
           "projections": {"init": "identity", "per_head": true}})",
       "projections.per_head: needs an init that draws (\"torch_rand\", \"randn\" or "
       "\"linear\"), not \"identity\": only drawn weights have a draw order"},
      {R"({"format": "attention-lab/scenario@1",
           "input": {"source": "matrix", "values": [[1, 2]]},
           "projections": {"init": "identity", "d_out": 5}})",
       "projections.d_out: is 5 but init \"identity\" needs d_out = d_in = 2"},
      {R"({"format": "attention-lab/scenario@1",
           "input": {"source": "matrix", "values": [[1, 2]]},
           "projections": {"init": "matrix", "W_query": [[1], [2]], "W_key": [[1], [2]], "W_value": [[1, 0]]}})",
       "projections.W_value: is 1 x 2 but must be d_in x d_out = 2 x 1"},
      // Every JSON number error names its field, seeds take torch.manual_seed's range.
      {Edit("0.87", "1e400"), "input.values[1][1]: number 1e400 is out of range"},
      {Edit("\"seed\": 123}", "\"seed\": 123}, \"scaling\": {\"multiplier\": -1e400}"),
       "scaling.multiplier: number -1e400 is out of range"},
      {Edit("\"seed\": 123", "\"seed\": 18446744073709551616"),
       "projections.seed: must be an integer in [-2^63, 2^64) (a torch.manual_seed value), got "
       "18446744073709551616"},
      {Edit("\"seed\": 123", "\"seed\": -9223372036854775809"),
       "projections.seed: must be an integer in [-2^63, 2^64) (a torch.manual_seed value), got "
       "-9223372036854775809"},
      {Edit("\"seed\": 123", "\"seed\": 2e19"),
       "projections.seed: must be an integer in [-2^63, 2^64) (a torch.manual_seed value), got "
       "20000000000000000000"},
      {Edit("\"seed\": 123", "\"seed\": 1.5"),
       "projections.seed: must be an integer in [-2^63, 2^64) (a torch.manual_seed value), got "
       "1.5"},
      {Edit("\"seed\": 123", "\"seed\": \"7\""),
       "projections.seed: must be an integer in [-2^63, 2^64) (a torch.manual_seed value), not a "
       "string"},
      {Edit("\"d_out\": 2", "\"d_out\": 99999999999999999999"),
       "projections.d_out: must be between 1 and 1099511627776, got 99999999999999999999"},
      {Edit("\"d_out\": 2", "\"d_out\": 1e20"),
       "projections.d_out: must be between 1 and 1099511627776, got 100000000000000000000"},
  };
  for (const Case& c : cases) EXPECT_EQ(ErrorOf(c.json), c.message) << c.json;
}

// The mask composer (issue 26): each kind's field named in its error, and its cells.
// projections.kv_heads (grouped K/V heads): what is refused, each naming the field.
TEST(ParseScenario, KvHeadsRefusesWhatCannotBeGroupedNamingTheField) {
  const std::string head = R"({"format": "attention-lab/scenario@1",
    "input": {"source": "randn", "length": 4, "d_in": 8, "seed": 1},
    "projections": )";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"init": "randn", "d_out": 8, "heads": 4, "kv_heads": 3}})",
       "projections.kv_heads: 3 K/V heads do not divide heads = 4 (each K/V head serves heads / "
       "kv_heads query heads)"},
      {R"({"init": "randn", "d_out": 8, "heads": 2, "kv_heads": 4}})",
       "projections.kv_heads: 4 K/V heads do not divide heads = 2 (each K/V head serves heads / "
       "kv_heads query heads)"},
      {R"({"init": "randn", "d_out": 8, "heads": 4, "kv_heads": 0}})",
       "projections.kv_heads: must be between 1 and 1099511627776, got 0"},
      {R"({"init": "identity", "heads": 4, "kv_heads": 2}})",
       "projections.kv_heads: needs W_key and W_value narrower than d_in, which init \"identity\" "
       "cannot give (use \"matrix\" or an init that draws)"},
      {R"({"init": "randn", "d_out": 8, "heads": 4, "kv_heads": 2, "per_head": true}})",
       "projections.kv_heads: cannot group K/V heads with per_head (the wrapper's heads each own "
       "their K and V); turn per_head off"},
      {R"({"init": "matrix", "heads": 2, "kv_heads": 1,
           "W_query": [[1, 0], [0, 1], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0]],
           "W_key": [[1, 0], [0, 1], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0]],
           "W_value": [[1], [0], [0], [0], [0], [0], [0], [0]]}})",
       "projections.W_key: is 8 x 2 but must be d_in x (kv_heads * d_out / heads) = 8 x 1"},
  };
  for (const auto& [rest, message] : cases) EXPECT_EQ(ErrorOf(head + rest), message) << rest;
  // Written only when it groups: kv_heads = heads is plain multi-head and leaves no trace.
  const Scenario same = ParseScenario(head + R"({"init": "randn", "d_out": 8, "heads": 4,
                                                 "kv_heads": 4}})");
  EXPECT_EQ(WriteScenario(same).find("kv_heads"), std::string::npos);
  const Scenario gqa = ParseScenario(head + R"({"init": "randn", "d_out": 8, "heads": 4,
                                                "kv_heads": 2}})");
  EXPECT_NE(WriteScenario(gqa).find("\"kv_heads\": 2"), std::string::npos);
  EXPECT_EQ(ParseScenario(WriteScenario(gqa)).projections.kv_heads, 2);
  const Shape sh = ValidateScenario(gqa);
  EXPECT_EQ(sh.Kv(), 2);
  EXPECT_EQ(sh.KWidth(), 4);
  EXPECT_EQ(sh.KvHead(3), 1);
  EXPECT_EQ(KvGroupLegend(sh, 1), "K/V head 1 of 2, shared by query heads 2..3");
  EXPECT_EQ(KvBytesPerToken(sh, 2, 4), 32);  // 2 heads x (2 + 2) values x 4 bytes
  EXPECT_EQ(KvBytesPerToken(sh, 4, 4), 64);
  // The dtype's own size (torch's element_size()): bfloat16 and float16 halve the cache.
  EXPECT_EQ(BytesPerValue(Dtype::kFloat32), 4);
  EXPECT_EQ(BytesPerValue(Dtype::kFloat64), 8);
  EXPECT_EQ(BytesPerValue(Dtype::kBfloat16), 2);
  EXPECT_EQ(BytesPerValue(Dtype::kFloat16), 2);
  EXPECT_EQ(KvBytesPerToken(sh, 2, BytesPerValue(Dtype::kBfloat16)), 16);
}

TEST(ParseScenario, MaskKindsRefuseBadFieldsNamingThem) {
  auto with_mask = [](const std::string& mask) {
    return Edit("\"seed\": 123}", "\"seed\": 123}, \"mask\": " + mask);
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"kind": "sliding_window"})", "mask.window: missing required field"},
      {R"({"kind": "sliding_window", "window": 0})",
       "mask.window: must be between 1 and 2147483648, got 0"},
      {R"({"kind": "sliding_window", "window": 2.5})",
       "mask.window: must be a whole number, not 2.5"},
      {R"({"kind": "causal", "window": 2})",
       "mask.window: is only read when kind is \"sliding_window\", not \"causal\""},
      {R"({"kind": "prefix_lm", "prefix": -1})",
       "mask.prefix: must be between 0 and 2147483648, got -1"},
      {R"({"kind": "document", "doc_ids": [0, 1, 2]})",
       "mask.doc_ids: has 3 ids but must have one per token, T = 2"},
      {R"({"kind": "document", "doc_ids": "ab"})",
       "mask.doc_ids: must be an array of T integers, not a string"},
      {R"({"kind": "document", "doc_ids": [0, 0.5]})",
       "mask.doc_ids[1]: must be a whole number, not 0.5"},
      {R"({"kind": "and", "of": []})",
       "mask.of: must be a non-empty array of masks, not an empty array"},
      {R"({"kind": "or"})", "mask.of: missing required field"},
      {R"({"kind": "or", "of": [{"kind": "causal"}, {"kind": "sliding_window", "window": 0}]})",
       "mask.of[1].window: must be between 1 and 2147483648, got 0"},
      {R"({"kind": "or", "of": [{"kind": "custom", "allowed": [[1]]}]})",
       "mask.of[0].allowed: is 1 x 1 but must be T x T = 2 x 2"},
      {R"({"kind": "and", "of": [{"kind": "causal", "masked_rows": "zero"}]})",
       "mask.of[0].masked_rows: unknown field (expected one of: kind, allowed, window, prefix, "
       "doc_ids, of)"},
      {R"({"kind": "causal", "of": [{"kind": "causal"}]})",
       "mask.of: is only read when kind is \"and\" or \"or\", not \"causal\""},
      {R"({"kind": "causal", "masked_rows": "inf"})",
       "mask.masked_rows: unknown value \"inf\" (expected one of: nan, zero)"},
      {R"({"kind": "causal", "align": "top-left"})",
       "mask.align: unknown value \"top-left\" (expected one of: bottom_right, top_left)"},
      {R"({"kind": "and", "of": [{"kind": "causal", "align": "top_left"}]})",
       "mask.of[0].align: unknown field (expected one of: kind, allowed, window, prefix, "
       "doc_ids, of)"},
  };
  for (const auto& [mask, message] : cases) EXPECT_EQ(ErrorOf(with_mask(mask)), message) << mask;
}

// Soft-capping and the attention sink (issue 26): each refusal names its field.
TEST(ParseScenario, ScoreModifiersRefuseBadValuesNamingThem) {
  auto with = [](const std::string& scaling, const std::string& rest = "") {
    return Edit("\"seed\": 123}", "\"seed\": 123}, \"scaling\": " + scaling + rest);
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {with(R"({"softcap": 0})"),
       "scaling.softcap: must be a number c > 0 (finite and not 0 in float32): logits = c * "
       "tanh(logits / c), got 0.0"},
      {with(R"({"softcap": -2})"),
       "scaling.softcap: must be a number c > 0 (finite and not 0 in float32): logits = c * "
       "tanh(logits / c), got -2.0"},
      {with(R"({"softcap": 1e-50})"),
       "scaling.softcap: must be a number c > 0 (finite and not 0 in float32): logits = c * "
       "tanh(logits / c), got 1e-50"},
      {with(R"({"softcap": "big"})"), "scaling.softcap: must be a number, not a string"},
      {with(R"({"sink": 1e39})"), "scaling.sink: is 1e+39, which is not finite in float32"},
      {with(R"({"sink": [0.5, "x"]})"), "scaling.sink[1]: must be a number, not a string"},
      {with(R"({"sink": []})"),
       "scaling.sink: must be a number or a non-empty array of numbers, one per head"},
      {with(R"({"sink": [0.5, 1, 2]})"),
       "scaling.sink: has 3 logits but must be one number or one per head (heads = 1)"},
      {Edit("\"seed\": 123}", "\"seed\": 123}, \"positions\": {\"kind\": \"rope2\"}"),
       "positions.kind: unknown value \"rope2\" (expected one of: none, alibi, rope, sinusoidal)"},
      {Edit("\"seed\": 123}", "\"seed\": 123}, \"positions\": {}"),
       "positions.kind: missing required field"},
      {with(R"({"sink_form": "sigmoid"})"),
       "scaling.sink_form: \"sigmoid\" needs an attention sink (scaling.sink)"},
      {with(R"({"sink": 0.5, "sink_form": "exp"})"),
       "scaling.sink_form: unknown value \"exp\" (expected one of: concat, sigmoid)"},
      {with(R"({"scale_at": "qk"})"),
       "scaling.scale_at: unknown value \"qk\" (expected one of: scores, q_and_k)"},
      {with(R"({"scale_at": true})"), "scaling.scale_at: must be a string, not a boolean"},
      {with(R"({"sink": 0.5})", R"(, "normalization": "sum")"),
       "scaling.sink: needs normalization \"softmax\" (the sink is one more column of the "
       "softmax), not \"sum\""},
  };
  for (const auto& [json, message] : cases) EXPECT_EQ(ErrorOf(json), message) << json;
}

// ALiBi's slopes as the paper's reference get_slopes gives them (tools/torch_oracle.py's copy).
TEST(AlibiSlopes, AsThePapersReferenceCode) {
  EXPECT_EQ(AlibiSlopes(1), (std::vector<double>{0.00390625}));
  EXPECT_EQ(AlibiSlopes(4), (std::vector<double>{0.25, 0.0625, 0.015625, 0.00390625}));
  EXPECT_EQ(AlibiSlopes(8)[0], 0.5);
  EXPECT_EQ(AlibiSlopes(8)[7], 0.00390625);
  // Not a power of two: the 4 slopes of 4 heads, then slopes 1 and 3 of 8 heads.
  EXPECT_EQ(AlibiSlopes(6), (std::vector<double>{0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125}));
  EXPECT_EQ(AlibiSlopes(3), (std::vector<double>{0.0625, 0.00390625, 0.25}));
  EXPECT_NEAR(AlibiSlopes(12)[8], 0.7071067811865476, 1e-15);
}

// attention-gym's generate_alibi_bias (attn_gym/mods/alibi.py): 2^(-8(h+1)/H) for any H, the
// paper's when H is a power of two; AlibiSlopesOf picks by positions.slopes.
TEST(AlibiSlopes, AttentionGymsRuleAndTheScenariosChoice) {
  EXPECT_EQ(AttentionGymSlopes(4), AlibiSlopes(4));
  EXPECT_EQ(AttentionGymSlopes(8), AlibiSlopes(8));
  const std::vector<double> three = AttentionGymSlopes(3);
  ASSERT_EQ(three.size(), 3u);
  // torch.exp2(-((h + 1) * 8.0 / 3)) on torch.arange(3, dtype=torch.int32), PyTorch 1.13:
  // float32 values, one ulp below the float32 nearest 2^(-8/3) and 2^(-16/3).
  EXPECT_EQ(three[0], static_cast<double>(0.15749011933803558f));
  EXPECT_EQ(three[1], static_cast<double>(0.02480313926935196f));
  EXPECT_EQ(three[2], 0.00390625);
  PositionsSpec p;
  p.kind = PositionKind::kAlibi;
  EXPECT_EQ(AlibiSlopesOf(p, 3), AlibiSlopes(3));
  p.slope_rule = AlibiSlopeRule::kAttentionGym;
  EXPECT_EQ(AlibiSlopesOf(p, 3), three);
  p.slope_rule = AlibiSlopeRule::kGiven;
  p.slopes = {0.5, -0.25};
  EXPECT_EQ(AlibiSlopesOf(p, 2), p.slopes);
  EXPECT_EQ(AlibiDistance(2, 5, false), -3);
  EXPECT_EQ(AlibiDistance(2, 5, true), 3);
  EXPECT_EQ(AlibiDistance(5, 2, true), 3);
}

// "out_proj": {"bias": false}: out_proj on without its bias; written back the same way.
TEST(ParseScenario, OutProjWithoutBias) {
  const std::string linear = R"({"format": "attention-lab/scenario@1", "input": {"source":
    "randn", "length": 3, "d_in": 4, "seed": 1}, "projections": {"init": "linear", "d_out": 4,
    "seed": 9, "out_proj": )";
  const Scenario s = ParseScenario(linear + R"({"bias": false}}})");
  EXPECT_TRUE(s.projections.out_proj);
  EXPECT_FALSE(s.projections.out_proj_bias);
  const std::string text = WriteScenario(s);
  EXPECT_NE(text.find(R"("out_proj": {)"), std::string::npos) << text;
  EXPECT_EQ(ParseScenario(text), s);
  EXPECT_TRUE(ParseScenario(linear + "true}}").projections.out_proj_bias);
  EXPECT_EQ(ErrorOf(linear + R"({"weight": 1}}})"),
            "projections.out_proj.weight: unknown field (expected one of: bias)");
  EXPECT_EQ(ErrorOf(linear + "1}}"),
            "projections.out_proj: must be true, false or {\"bias\": false}, not a number");
}

// projections.qk_norm (issue 61): read, written back, and refused naming the field.
TEST(ParseScenario, QkNormReadsWritesAndRefuses) {
  const std::string head = R"({"format": "attention-lab/scenario@1", "input": {"source":
    "randn", "length": 3, "d_in": 4, "seed": 1}, "projections": {"init": "randn", "d_out": 4,
    "heads": 2, "seed": 9, "qk_norm": )";
  const Scenario s =
      ParseScenario(head + R"({"eps": 1e-6, "weight": [1.5, 0.25], "order": "before_rope"}}})");
  ASSERT_TRUE(s.projections.qk_norm.has_value());
  EXPECT_EQ(s.projections.qk_norm->eps, 1e-6);
  EXPECT_EQ(s.projections.qk_norm->weight, (std::vector<double>{1.5, 0.25}));
  EXPECT_FALSE(s.projections.qk_norm->after_rope);
  EXPECT_EQ(s.projections.qk_norm->scale, 1.0);
  EXPECT_EQ(ParseScenario(WriteScenario(s)), s);
  const Scenario nano = ParseScenario(head + R"({"scale": 1.2}}})");
  EXPECT_TRUE(nano.projections.qk_norm->after_rope);
  EXPECT_EQ(QkNormEps(*nano.projections.qk_norm, Dtype::kFloat32), 1.1920928955078125e-07);
  EXPECT_EQ(QkNormEps(*nano.projections.qk_norm, Dtype::kBfloat16), 0.0078125);
  EXPECT_EQ(ErrorOf(head + R"({"weight": [1, 2, 3]}}})"),
            "projections.qk_norm.weight: 3 numbers for heads of 2 dimensions (one per dimension "
            "of a head)");
  EXPECT_EQ(ErrorOf(head + R"({"order": "later"}}})"),
            "projections.qk_norm.order: must be \"after_rope\" or \"before_rope\"");
  EXPECT_EQ(ErrorOf(head + R"({"eps": -1}}})"),
            "projections.qk_norm.eps: must be a finite number of at least 0, got -1.0");
  EXPECT_EQ(ErrorOf(head + R"({"gain": 1}}})"),
            "projections.qk_norm.gain: unknown field (expected one of: eps, weight, order, scale)");
  EXPECT_EQ(ErrorOf(head + R"({}, "head_split": "view_no_transpose"}})"),
            "projections.qk_norm: cannot be used with head_split \"view_no_transpose\" (the "
            "norm reads whole heads)");
}

TEST(ParseScenario, AlibiSettingsReadAndWriteBack) {
  const std::string text =
      Edit("\"seed\": 123}",
           R"("seed": 123}, "positions": {"kind": "alibi", "slopes": [0.5], "symmetric": true})");
  const Scenario s = ParseScenario(text);
  EXPECT_EQ(s.positions.slope_rule, AlibiSlopeRule::kGiven);
  EXPECT_EQ(s.positions.slopes, std::vector<double>{0.5});
  EXPECT_TRUE(s.positions.symmetric);
  EXPECT_EQ(ParseScenario(WriteScenario(s)), s);
  EXPECT_EQ(PositionsName(s.positions), "ALiBi (given slopes, symmetric)");
  Scenario gym = s;
  gym.positions.slope_rule = AlibiSlopeRule::kAttentionGym;
  gym.positions.slopes.clear();
  gym.positions.symmetric = false;
  const std::string written = WriteScenario(gym);
  EXPECT_NE(written.find(R"("slopes": "attention_gym")"), std::string::npos) << written;
  EXPECT_EQ(written.find("symmetric"), std::string::npos) << written;
  Scenario paper = gym;
  paper.positions.slope_rule = AlibiSlopeRule::kPaper;  // the default: not written
  EXPECT_EQ(WriteScenario(paper).find("slopes"), std::string::npos);
}

TEST(ParseScenario, PositionsRefuseBadFieldsNamingThem) {
  auto with = [](const std::string& positions) {
    return Edit("\"seed\": 123}", "\"seed\": 123}, \"positions\": " + positions);
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"layout": "interleaved"})", "positions.kind: missing required field"},
      {R"({"kind": "yarn"})",
       "positions.kind: unknown value \"yarn\" (expected one of: none, alibi, rope, sinusoidal)"},
      {R"({"kind": "rope", "layout": "halves"})",
       "positions.layout: unknown value \"halves\" (expected one of: split_halves, interleaved)"},
      {R"({"kind": "rope", "theta": 0})",
       "positions.theta: must be a finite number above 0, got 0.0"},
      {R"({"kind": "rope", "sign": 0})", "positions.sign: must be 1 or -1, got 0"},
      {R"({"kind": "rope", "sign": 2})", "positions.sign: must be between -1 and 1, got 2"},
      {R"({"kind": "sinusoidal", "theta": 5})",
       "positions.theta: is only read when kind is \"rope\", not \"sinusoidal\""},
      {R"({"kind": "rope", "base": 5})",
       "positions.base: unknown field (expected one of: kind, layout, theta, sign, slopes, "
       "symmetric)"},
      {R"({"kind": "rope", "slopes": "paper"})",
       "positions.slopes: is only read when kind is \"alibi\", not \"rope\""},
      {R"({"kind": "alibi", "slopes": "bloom"})",
       "positions.slopes: unknown value \"bloom\" (expected one of: paper, attention_gym, "
       "given)"},
      {R"({"kind": "alibi", "slopes": "given"})",
       "positions.slopes: \"given\" is written as the numbers themselves, one per head"},
      {R"({"kind": "alibi", "slopes": []})",
       "positions.slopes: must be \"paper\", \"attention_gym\" or one number per head"},
      {R"({"kind": "alibi", "slopes": [0.5, 0.25]})",
       "positions.slopes: has 2 slopes but must have one per head (heads = 1)"},
      {R"({"kind": "alibi", "symmetric": 1})",
       "positions.symmetric: must be true or false, not a number"},
  };
  for (const auto& [positions, message] : cases)
    EXPECT_EQ(ErrorOf(with(positions)), message) << positions;
  // d_out 3 in one head: the pairs do not come out even.
  std::string odd = with(R"({"kind": "rope"})");
  odd.replace(odd.find("\"d_out\": 2"), 10, "\"d_out\": 3");
  EXPECT_EQ(ErrorOf(odd),
            "positions.kind: \"rope\" rotates pairs of dimensions, so the head size must be even; "
            "it is 3 (d_out 3 / 1 heads)");
  const std::string qkv = R"({"format": "attention-lab/scenario@1", "input": {"source": "qkv",
    "Q": [[1, 2]], "K": [[3, 4]], "V": [[5, 6]]}, "positions": {"kind": "sinusoidal"}})";
  EXPECT_EQ(ErrorOf(qkv),
            "positions.kind: \"sinusoidal\" adds its encoding to X, and a qkv input has no X (use "
            "\"rope\", which rotates Q and K)");
  // Written back as read, every field of the kind.
  const Scenario s = ParseScenario(
      with(R"({"kind": "rope", "layout": "interleaved", "theta": 500000, "sign": -1})"));
  EXPECT_EQ(s.positions.kind, PositionKind::kRope);
  EXPECT_EQ(s.positions.layout, RopeLayout::kInterleaved);
  EXPECT_EQ(s.positions.theta, 500000.0);
  EXPECT_EQ(s.positions.sign, -1);
  EXPECT_EQ(ParseScenario(WriteScenario(s)), s);
  EXPECT_EQ(PositionsName(s.positions), "RoPE (interleaved, θ = 500000, sign −1)");
  EXPECT_FALSE(ParseScenario(kJourney) == s);
}

TEST(AllowedCells, EachKindAsTheReferenceImplementationsCount) {
  auto cells = [](const std::string& mask, int64_t T) {
    const Scenario s = ParseScenario(
        R"({"format": "attention-lab/scenario@1", "input": {"source": "randn", "length": )" +
        std::to_string(T) + R"(, "d_in": 2, "seed": 1}, "projections": {"init": "identity"},
        "mask": )" +
        mask + "}");
    ValidateScenario(s);
    return AllowedCells(s.mask, T);
  };
  auto rows = [](std::initializer_list<std::initializer_list<int>> r) {
    MaskMatrix m(static_cast<Eigen::Index>(r.size()), static_cast<Eigen::Index>(r.size()));
    Eigen::Index i = 0;
    for (const auto& row : r) {
      Eigen::Index j = 0;
      for (int v : row) m(i, j++) = static_cast<uint8_t>(v);
      ++i;
    }
    return m;
  };
  // W = 2: query i sees keys i - 1 and i (2 keys, its own included).
  EXPECT_EQ(cells(R"({"kind": "sliding_window", "window": 2})", 4),
            rows({{1, 0, 0, 0}, {1, 1, 0, 0}, {0, 1, 1, 0}, {0, 0, 1, 1}}));
  EXPECT_EQ(cells(R"({"kind": "prefix_lm", "prefix": 2})", 4),
            rows({{1, 1, 0, 0}, {1, 1, 0, 0}, {1, 1, 1, 0}, {1, 1, 1, 1}}));
  EXPECT_EQ(cells(R"({"kind": "document", "doc_ids": [3, 3, 1, 1]})", 4),
            rows({{1, 0, 0, 0}, {1, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 1, 1}}));
  // A window of 1 or the first key (StreamingLLM's sink and window).
  EXPECT_EQ(cells(R"({"kind": "or", "of": [{"kind": "sliding_window", "window": 1},
                      {"kind": "custom", "allowed": [[1, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0],
                                                     [1, 0, 0, 0]]}]})",
                  4),
            rows({{1, 0, 0, 0}, {1, 1, 0, 0}, {1, 0, 1, 0}, {1, 0, 0, 1}}));
  EXPECT_EQ(cells(R"({"kind": "and", "of": [{"kind": "none"},
                      {"kind": "custom", "allowed": [[0, 1, 1], [1, 0, 1], [1, 1, 0]]},
                      {"kind": "causal"}]})",
                  3),
            rows({{0, 0, 0}, {1, 0, 0}, {1, 1, 0}}));
  MaskSpec window;
  window.kind = MaskKind::kSlidingWindow;
  window.window = 3;
  EXPECT_EQ(MaskLegend(window), "3 keys, this one included");
  EXPECT_EQ(MaskName(window), "sliding window W = 3");
}

TEST(ParseScenario, AcceptsEveryTorchManualSeedValue) {
  // torch.manual_seed takes integers in [-2^63, 2^64); negatives wrap modulo 2^64, and a whole
  // number written as 2.0 or 1e3 is what int() makes of it.
  const std::pair<const char*, uint64_t> cases[] = {
      {"18446744073709551615", 18446744073709551615ull},
      {"-9223372036854775808", 9223372036854775808ull},
      {"9223372036854775808", 9223372036854775808ull},
      {"0", 0},
      {"2.0", 2},
      {"1e3", 1000},
      {"-2.0", 18446744073709551614ull}};
  for (const auto& [text, seed] : cases) {
    const Scenario s = ParseScenario(Edit("\"seed\": 123", std::string("\"seed\": ") + text));
    EXPECT_EQ(*s.projections.seed, seed) << text;
  }
}

TEST(ParseScenario, BrokenJsonGivesLineAndColumn) {
  const std::string broken =
      "{\n  \"format\": \"attention-lab/scenario@1\",\n  \"input\": {\"source\": matrix}\n}";
  const std::string msg = ErrorOf(broken);
  EXPECT_EQ(msg.rfind("JSON syntax error at line 3, column 23: ", 0), 0u) << msg;
}

TEST(ParseScenario, HugeSizeIsRefusedBeforeAllocating) {
  // 10^12 tokens would need petabytes; the refusal must come from the estimate, not bad_alloc.
  const std::string json = R"({"format": "attention-lab/scenario@1",
      "input": {"source": "randn", "batch": 1000, "length": 1000000000, "d_in": 1000, "seed": 1},
      "projections": {"init": "linear", "d_out": 1000}})";
  try {
    ParseScenario(json);
    FAIL() << "accepted";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.field(), "input.length");
    EXPECT_NE(std::string(e.what()).find("2 GiB limit"), std::string::npos) << e.what();
  }
}

TEST(ParseScenario, TooLargeNamesTheSizeThatIsOutOfLine) {
  const char* head = R"({"format": "attention-lab/scenario@1", "input": )";
  const std::pair<std::string, std::string> cases[] = {
      {R"({"source": "randn", "length": 2048, "d_in": 4, "seed": 1},
          "projections": {"init": "randn", "d_out": 1024, "heads": 1024}})",
       "projections.heads: H = 1024 (T = 2048, B = 1, d_in = 4, d_out = 1024) needs about 48.1 "
       "GiB, more than the 2 GiB limit of a scenario"},
      {R"({"source": "randn", "batch": 1000, "length": 512, "d_in": 4, "seed": 1},
          "projections": {"init": "randn", "d_out": 4}})",
       "input.batch: B = 1000 (T = 512, H = 1, d_in = 4, d_out = 4) needs about 3 GiB, more "
       "than the 2 GiB limit of a scenario"},
      {R"({"source": "randn", "length": 1024, "d_in": 4, "seed": 1},
          "projections": {"init": "linear", "d_out": 1000000}})",
       "projections.d_out: d_out = 1000000 (T = 1024, B = 1, H = 1, d_in = 4) needs about "
       "26.8 GiB, more than the 2 GiB limit of a scenario"},
      {R"({"source": "randn", "length": 4, "d_in": 30000, "seed": 1},
          "projections": {"init": "identity"}})",
       "input.d_in: d_in = 30000 (T = 4, B = 1, H = 1, d_out = 30000) needs about 13.4 "
       "GiB, more than the 2 GiB limit of a scenario"},
  };
  for (const auto& [rest, message] : cases) EXPECT_EQ(ErrorOf(head + rest), message);
}

// Grouped K/V heads make K, V, W_key, W_value (and K_rot with RoPE) kv_heads * dh wide: the
// estimate counts those widths. Counted by hand for B = 1, T = 8, d_in = 16, d_out = 16, H = 4,
// dh = 4, kv_heads = 1 (K and V 4 wide), causal, no dropout, RoPE: floats =
// X 2*8*16 + W 16*(2*16 + 4 + 4) + biases 4*16 + Q,K,V 8*(16 + 4 + 4) + K and V packed
// 8*(4 + 4) + mask 64 + scores/logits/weights 3*4*64 + context 2*8*16 = 256 + 640 + 64 + 192
// + 64 + 64 + 768 + 256 = 2304; Q_rot and K_rot 8*(16 + 4) = 160 more; times 4 bytes.
TEST(ScenarioStageBytes, CountsKAndVAtTheirGroupedWidth) {
  const char* json = R"({"format": "attention-lab/scenario@1",
      "input": {"source": "randn", "length": 8, "d_in": 16, "seed": 1},
      "projections": {"init": "linear", "d_out": 16, "heads": 4, "kv_heads": 1},
      "mask": {"kind": "causal"}, "positions": {"kind": "rope"}})";
  const Scenario s = ParseScenario(json);
  const Shape sh = ValidateScenario(s);
  EXPECT_DOUBLE_EQ(EstimateStageBytes(sh, false, false), 2304.0 * 4);
  EXPECT_DOUBLE_EQ(ScenarioStageBytes(s, sh), (2304.0 + 160.0) * 4);
  Shape multi_head = sh;
  multi_head.KV = 4;  // K and V 16 wide: 2 * 16 * 12 + 8 * 24 more floats, and 8 * 24 packed
  EXPECT_DOUBLE_EQ(EstimateStageBytes(multi_head, false, false), (2304.0 + 384 + 192 + 192) * 4);
}

// The preset registry (presets.cpp kRegistry) holds every shipped preset once, in reading
// order: the courses chapter by chapter, then today's attention, then the bug gallery.
TEST(Presets, RegistryOrdersEveryPresetByCourseAndChapter) {
  EXPECT_EQ(PresetRegistryMismatch(), "");
  std::vector<std::string> ids;
  int last_group = -1;
  for (const PresetInfo& p : Presets()) {
    ids.push_back(p.id);
    EXPECT_GE(static_cast<int>(p.group), last_group) << p.id << " breaks the group order";
    last_group = static_cast<int>(p.group);
    EXPECT_EQ(p.group == PresetGroup::kBugGallery, p.id.rfind("bug-", 0) == 0) << p.id;
    EXPECT_FALSE(p.title.empty()) << p.id;
    EXPECT_NE(std::string(PresetGroupTitle(p.group)), "") << p.id;
  }
  auto at = [&](const std::string& id) {
    return std::find(ids.begin(), ids.end(), id) - ids.begin();
  };
  // Raschka's sections in the book's order, the journey after them, then the other courses.
  const std::vector<std::string> reading = {"raschka-3.3-sum",
                                            "raschka-3.3-simple",
                                            "raschka-3.4-v2",
                                            "raschka-3.5-masked-scores",
                                            "raschka-3.5-causal",
                                            "raschka-3.5-dropout",
                                            "raschka-3.5-causal-batch",
                                            "raschka-3.6-wrapper",
                                            "raschka-3.6-mha",
                                            "raschka-journey",
                                            "numpy-masked",
                                            "dog-attacks-cat",
                                            "karpathy-trick",
                                            "karpathy-head",
                                            "rope-shift",
                                            "flash-journey",
                                            "train-scaling",
                                            "bug-softmax-dim"};
  for (size_t k = 1; k < reading.size(); ++k)
    EXPECT_LT(at(reading[k - 1]), at(reading[k])) << reading[k - 1] << " before " << reading[k];
  EXPECT_EQ(ids.front(), "raschka-3.3-sum");
}

TEST(WriteScenario, RoundTripsEveryPreset) {
  for (const PresetInfo& p : Presets()) {
    const Scenario a = ParseScenario(p.json);
    const Scenario b = ParseScenario(WriteScenario(a));
    EXPECT_TRUE(a == b) << p.id;  // operator== compares the matrices bit for bit
  }
  // The shortest float32 text, as the presets and the dump write it.
  const std::string text = WriteScenario(LoadPreset("raschka-journey"));
  EXPECT_NE(text.find("0.43,"), std::string::npos) << text;
  EXPECT_EQ(text.find("0.4300000071525574"), std::string::npos) << text;
}

TEST(WriteScenario, EveryFloat32ReadsBackBitForBit) {
  // Shortest texts near the edges: subnormals, FLT_MAX, -0, and a spread of bit patterns.
  Matrix m(64, 64);
  uint32_t bits = 0x00000001u;
  for (Eigen::Index i = 0; i < m.size(); ++i) {
    float v;
    std::memcpy(&v, &bits, 4);
    if (!std::isfinite(v)) v = -0.0f;
    m.data()[i] = v;
    bits = bits * 2654435761u + 0x9E3779B9u;  // a Weyl-style walk over the bit patterns
  }
  m(0, 0) = std::numeric_limits<float>::max();
  m(0, 1) = -std::numeric_limits<float>::denorm_min();
  m(0, 2) = 0.1f;
  Scenario s;
  s.input.values = {m};
  const Scenario back = ParseScenario(WriteScenario(s));
  ASSERT_EQ(back.input.values.size(), 1u);
  EXPECT_EQ(std::memcmp(back.input.values[0].data(), m.data(), sizeof(float) * m.size()), 0);
}

TEST(WriteScenario, RoundTripsEveryOption) {
  Scenario s;
  s.title = "all options";
  s.input.source = InputSource::kText;
  s.input.text = "a b -- c";
  s.input.tokenizer = TokenizerKind::kChars;
  s.input.d_in = 4;
  s.input.seed = 18446744073709551615ull;  // torch.manual_seed(-1)
  s.input.special_tokens = {"<pad>"};
  s.projections.init = ProjectionInit::kLinear;
  s.projections.d_out = 4;
  s.projections.order = {Projection::kKey, Projection::kValue, Projection::kQuery};
  s.projections.bias = true;
  s.projections.out_proj = true;
  s.projections.heads = 2;
  s.projections.per_head = true;
  s.scaling = {false, 0.37};
  s.mask.kind = MaskKind::kCausal;
  s.normalization = Normalization::kSum;
  s.dropout = {0.25, 77};
  const Scenario back = ParseScenario(WriteScenario(s));
  EXPECT_TRUE(back == s) << WriteScenario(s);
  EXPECT_EQ(back.input.seed, 18446744073709551615ull);
}

TEST(ParseScenario, NegativeSeedWrapsAsInPyTorch) {
  const Scenario s = ParseScenario(Edit("\"seed\": 123", "\"seed\": -1"));
  EXPECT_EQ(*s.projections.seed, 18446744073709551615ull);
}

// input.source "qkv" and input.generator "numpy": what NumPy cannot express is refused.
TEST(QkvScenario, RefusesWhatHasNoMeaningNamingTheField) {
  const std::string head = R"({"format": "attention-lab/scenario@1", "input": )";
  struct Case {
    std::string json, message;
  };
  const Case cases[] = {
      {head + R"({"source": "qkv", "seed": 0, "length": 4, "d_k": 8},
                  "projections": {"init": "identity"}})",
       "projections: is not read when input.source is \"qkv\" (Q, K and V come without X or W); "
       "remove it (the heads are input.heads)"},
      {head + R"({"source": "qkv", "generator": "numpy", "seed": 4294967296, "length": 4,
                  "d_k": 8}})",
       "input.seed: must be in [0, 2**32 - 1] with input.generator \"numpy\" (np.random.seed "
       "refuses 4294967296)"},
      {head + R"({"source": "qkv", "generator": "numpy", "seed": -1, "length": 4, "d_k": 8}})",
       "input.seed: must be in [0, 2**32 - 1] with input.generator \"numpy\" (np.random.seed "
       "refuses negative seeds)"},
      {head + R"({"source": "qkv", "generator": "jax", "seed": 1, "length": 4, "d_k": 8}})",
       "input.generator: unknown value \"jax\" (expected one of: torch, numpy)"},
      {head + R"({"source": "qkv", "seed": 1, "length": 4, "d_k": 8, "d_v": 3, "heads": 2}})",
       "input.heads: 2 heads do not divide d_v = 3 (each head takes d_v / heads columns of V)"},
      {head + R"({"source": "qkv", "seed": 1, "length": 4, "d_k": 8, "d_v": 0}})",
       "input.d_v: must be between 1 and 1099511627776, got 0"},
      {head + R"({"source": "qkv", "Q": [[1, 2]], "K": [[1, 2]], "V": [[1, 2, 3], [4, 5, 6]]}})",
       "input.V: is 2 x 3 but must be T x d_v = 1 x 3"},
      {head + R"({"source": "qkv", "seed": 1, "length": 4, "d_k": 6, "heads": 4}})",
       "input.heads: 4 heads do not divide d_k = 6 (each head takes d_k / heads columns)"},
      {head + R"({"source": "qkv", "seed": 1, "length": 4, "d_k": 6,
                  "order": ["key", "key", "value"]}})",
       "input.order[1]: \"key\" appears twice; list query, key, value once each"},
      {head + R"({"source": "qkv", "Q": [[1, 2]], "K": [[1, 2]], "V": [[1, 2]], "seed": 3}})",
       "input.seed: is only read when Q, K and V are drawn, not given as matrices"},
      {head + R"({"source": "qkv", "Q": [[1, 2]], "K": [[1, 2], [3, 4]], "V": [[1, 2]]}})",
       "input.K: is 2 x 2 but must be T x d_k (the shape of input.Q) = 1 x 2"},
      {head + R"({"source": "qkv", "Q": [[1, 2]], "V": [[1, 2]]}})",
       "input.K: missing required field"},
      {head + R"({"source": "text", "generator": "numpy", "text": "a b", "d_in": 2, "seed": 1},
                  "projections": {"init": "identity"}})",
       "input.generator: \"numpy\" has no nn.Embedding: text input needs \"torch\""},
      {head + R"({"source": "randn", "generator": "numpy", "length": 3, "d_in": 2, "seed": 1},
                  "projections": {"init": "linear", "d_out": 2}})",
       "projections.init: \"linear\" (nn.Linear) has no NumPy counterpart with input.generator "
       "\"numpy\" (use randn, torch_rand for np.random.rand, or matrix)"},
      {head + R"({"source": "randn", "generator": "numpy", "length": 3, "d_in": 2, "seed": 1},
                  "projections": {"init": "identity"}, "dropout": {"p": 0.1}})",
       "dropout.p: must be 0 with input.generator \"numpy\" (nn.Dropout has no NumPy "
       "counterpart here)"},
      {head + R"({"source": "randn", "generator": "numpy", "length": 3, "d_in": 2, "seed": 1},
                  "projections": {"init": "randn", "d_out": 2, "seed": 5000000000}})",
       "projections.seed: must be in [0, 2**32 - 1] with input.generator \"numpy\" "
       "(np.random.seed refuses 5000000000)"},
  };
  for (const Case& c : cases) EXPECT_EQ(ErrorOf(c.json), c.message) << c.json;
}

// Which draw comes before any seed: that one starts from DefaultSeed, for torch and numpy alike
// (an unseeded numpy scenario is no longer refused: its program pins np.random.seed(0)).
TEST(FirstUnseededDraw, IsTheFirstDrawWithoutASeedBeforeIt) {
  const auto first = [](const std::string& input, const std::string& rest) {
    return FirstUnseededDraw(ParseScenario(R"({"format": "attention-lab/scenario@1", "input": )" +
                                           input + ", " + rest + "}"));
  };
  const std::string matrix = R"({"source": "matrix", "values": [[1, 2], [3, 4]]})";
  const std::string np_matrix = R"({"source": "matrix", "generator": "numpy", "values": [[1, 2]]})";
  const std::string randn = R"({"source": "randn", "length": 2, "d_in": 2, "seed": 1})";
  const std::string given = R"({"source": "qkv", "Q": [[1]], "K": [[1]], "V": [[1]]})";
  EXPECT_EQ(first(matrix, R"("projections": {"init": "torch_rand", "d_out": 2})"),
            UnseededDraw::kProjections);
  EXPECT_EQ(first(np_matrix, R"("projections": {"init": "randn", "d_out": 2})"),
            UnseededDraw::kProjections);
  EXPECT_EQ(first(matrix, R"("projections": {"init": "linear", "d_out": 2},
                             "dropout": {"p": 0.5})"),
            UnseededDraw::kProjections);  // the dropout mask continues the stream
  EXPECT_EQ(first(matrix, R"("projections": {"init": "identity"}, "dropout": {"p": 0.5})"),
            UnseededDraw::kDropout);
  EXPECT_EQ(first(given, R"("dropout": {"p": 0.5})"), UnseededDraw::kDropout);
  EXPECT_EQ(first(matrix, R"("projections": {"init": "torch_rand", "d_out": 2, "seed": 0})"),
            UnseededDraw::kNone);
  EXPECT_EQ(first(matrix, R"("projections": {"init": "identity"},
                             "dropout": {"p": 0.5, "seed": 3})"),
            UnseededDraw::kNone);
  EXPECT_EQ(first(randn, R"("projections": {"init": "randn", "d_out": 2},
                            "dropout": {"p": 0.5})"),
            UnseededDraw::kNone);  // the input's seed comes first
  EXPECT_EQ(first(matrix, R"("projections": {"init": "identity"})"), UnseededDraw::kNone);
  EXPECT_EQ(DefaultSeed(Generator::kTorch), 67280421310721u);  // torch.Generator().initial_seed()
  EXPECT_EQ(DefaultSeed(Generator::kNumpy), 0u);
  EXPECT_STREQ(UnseededText(Generator::kTorch), "unseeded: PyTorch's default seed");
}

}  // namespace
}  // namespace attnlab

namespace attnlab {

// [SECTION] Limits: nesting depth and file size, refused before anything is built

namespace limits {

/// ParseScenario's refusal of `text` (what()), "" when it parses.
std::string Refusal(const std::string& text) {
  try {
    ParseScenario(text);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

const std::string kHead = "{\"format\": \"attention-lab/scenario@1\", \"input\": ";

}  // namespace limits

// Issue 31: 150000 nested arrays overflowed the stack (SIGSEGV) of show, dump and the window.
TEST(ScenarioLimits, DeepNestingIsRefusedNamingTheDepthAndPlace) {
  const std::string deep =
      limits::kHead + std::string(150000, '[') + std::string(150000, ']') + "}";
  // Refused by the depth pass (its message), before the parser builds anything. Its speed on
  // such files is bench/attention_bench.cpp BM_RefuseJson's (speed goals live in benchmarks).
  const std::string why = limits::Refusal(deep);
  // The 65th bracket: 1 for the object, then the 64th '[' at column 49 + 64.
  EXPECT_EQ(why, "JSON nested deeper than 64 levels at line 1, column " +
                     std::to_string(limits::kHead.size() + 64));
  // On a later line, the column counts from that line's start.
  EXPECT_EQ(limits::Refusal("{\n  \"input\":\n" + std::string(70, '[')),
            "JSON nested deeper than 64 levels at line 3, column 64");
}

// Issue 31: a million '[' and no ']' took `show` 50 s to call "unexpected end of input".
TEST(ScenarioLimits, AMillionUnclosedBracketsAreRefusedAtOnce) {
  const std::string unclosed(1000000, '[');
  // The depth pass refuses it at the 65th bracket: the parser (quadratic on it) never runs.
  EXPECT_EQ(limits::Refusal(unclosed), "JSON nested deeper than 64 levels at line 1, column 65");
}

TEST(ScenarioLimits, SixtyFourLevelsPassAndBracketsInStringsDoNotCount) {
  EXPECT_NO_THROW(CheckJsonLimits(std::string(64, '[') + std::string(64, ']')));
  EXPECT_THROW(CheckJsonLimits(std::string(65, '[') + std::string(65, ']')), ScenarioError);
  // 100 brackets inside a string, one with an escaped quote before it: depth 1.
  EXPECT_NO_THROW(CheckJsonLimits("[\"" + std::string(100, '[') + "\\\"[{\"]"));
  // The 64-deep text goes on to the parser, which names what is wrong with it.
  const std::string why =
      limits::Refusal(limits::kHead + std::string(63, '[') + std::string(63, ']') + "}");
  EXPECT_EQ(why.find("nested"), std::string::npos) << why;
  EXPECT_NE(why, "");
}

// The tree nlohmann::json builds is bounded before it is built (issue 62: 50 MB of {} entries
// peaked at 3.0 GB): 12 million {} (36 MB of text, about 2.2 GiB of tree) are refused by the
// counting pass with the memory limit's message; a million zeros (a 2 MB matrix) pass it.
TEST(ScenarioLimits, TheTreeOfManyValuesIsRefusedBeforeItIsBuilt) {
  std::string objects = "[";
  for (int i = 0; i < 12'000'000; ++i) objects += "{},";
  objects.back() = ']';
  const std::string why = limits::Refusal(objects);
  EXPECT_EQ(why.rfind("JSON text of 12000000 values or more needs about ", 0), 0u) << why;
  EXPECT_NE(why.find("more than the 2 GiB limit"), std::string::npos) << why;
  std::string zeros = "[";
  for (int i = 0; i < 1'000'000; ++i) zeros += "0,";
  zeros.back() = ']';
  EXPECT_NO_THROW(CheckJsonLimits(zeros));
}

// A megabyte of each shape of content is refused with a message (none is a scenario). How fast
// (linear in the size: well under a second each) is bench/attention_bench.cpp BM_RefuseJson.
TEST(ScenarioLimits, AMegabyteOfAnyContentIsRefused) {
  const size_t n = 1 << 20;
  std::vector<std::pair<std::string, std::string>> texts;
  texts.emplace_back("a long string", limits::kHead + "\"" + std::string(n, 'a') + "\"}");
  std::string numbers = limits::kHead + "{\"source\": \"matrix\", \"values\": [[";
  while (numbers.size() < n) numbers += "0.125, ";
  texts.emplace_back("numbers", numbers + "1]]}}");
  std::string big = limits::kHead + "{\"source\": \"matrix\", \"values\": [[";
  while (big.size() < n) big += "99999999999999999999999, ";
  texts.emplace_back("integers beyond uint64", big + "1]]}}");
  std::string keys = "{";
  for (int k = 0; keys.size() < n; ++k) keys += "\"k" + std::to_string(k) + "\": [[1]], ";
  texts.emplace_back("many keys", keys + "\"format\": 1}");
  std::string arrays = limits::kHead + "[";
  while (arrays.size() < n) arrays += "[[[[[]]]]], ";
  texts.emplace_back("many shallow arrays", arrays + "[]]}");
  texts.emplace_back("unclosed strings", std::string(n / 2, '"') + std::string(n / 2, '['));
  texts.emplace_back("garbage", std::string(n, '\x01'));
  for (const auto& [name, text] : texts) {
    EXPECT_NE(limits::Refusal(text), "") << name;  // none of them is a scenario
  }
}

TEST(ScenarioLimits, AFileAboveTheLimitIsRefusedBeforeReadingNamingItsSize) {
  const std::string path =
      testing::TempDir() + "attnlab_too_large_" + std::to_string(::getpid()) + ".json";
  { std::ofstream(path) << "{"; }
  std::filesystem::resize_file(path, kMaxScenarioFileBytes + 1);  // sparse: no disk used
  std::string why;  // the size check's message: refused by its size, before any read
  try {
    ReadScenarioFile(path);
  } catch (const FileError& e) {
    why = e.what();
  }
  EXPECT_EQ(why, path +
                     ": 268435457 bytes, more than the 268435456 (256 MiB) a scenario or "
                     "figure file may have");
  std::filesystem::resize_file(path, 1000);
  EXPECT_EQ(ReadScenarioFile(path).size(), 1000u);
  std::filesystem::remove(path);
}

}  // namespace attnlab

namespace attnlab {

// Issue 31: text from the file is quoted escaped and cut, so the message stays one line.
TEST(ScenarioError, QuotesTheFilesTextOnOneLine) {
  const std::string evil = R"({"format": "attention-lab/scenario@1", "input": {"source": "text",
      "text": "a b", "tokenizer": "\u001b[2J\u001b[31mevil\nline2", "d_in": 3, "seed": 1},
      "projections": {"init": "rand", "d_out": 2, "seed": 1}})";
  EXPECT_EQ(limits::Refusal(evil),
            "input.tokenizer: unknown value \"\\u001b[2J\\u001b[31mevil\\nline2\" (expected one "
            "of: words, words_and_spaces, chars)");
  const std::string key =
      "{\"format\": \"attention-lab/scenario@1\", \"x\\n" + std::string(300, 'k') + "\": 1}";
  const std::string why = limits::Refusal(key);
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  EXPECT_EQ(why.rfind("x\\n" + std::string(117, 'k') + "\u2026: unknown field", 0), 0u) << why;
  const std::string format = "{\"format\": \"" + std::string(500, 'f') + "\"}";
  EXPECT_EQ(limits::Refusal(format), "format: must be \"attention-lab/scenario@1\", got \"" +
                                         std::string(59, 'f') + "\u2026\"");
}

}  // namespace attnlab

// ---------------------------------------------------------------------------------------------
// Every scenario field, one at a time (issue 24): changed from a base scenario, the change
// survives WriteScenario -> ParseScenario, and exactly the Same* predicates that guard its stages
// notice it (the engine recomputes from the first stage whose predicate says "changed"; a field
// forgotten in SameInput would silently skip a recompute). The field list is checked against the
// structs' member counts, so a field added to scenario.h without a case here fails the test.
// ---------------------------------------------------------------------------------------------
namespace attnlab {
namespace fields {

// Converts to any member type: T{AnyField{}, ...} compiles with at most as many as T has members.
struct AnyField {
  template <typename T>
  operator T() const;
};

// The number of members of the aggregate T.
template <typename T, typename... A>
constexpr size_t CountFields(A... a) {
  if constexpr (requires { T{a..., AnyField{}}; })
    return CountFields<T>(a..., AnyField{});
  else
    return sizeof...(A);
}

// The predicates a change may trip, as a bit set.
enum Noticed : unsigned { kInput = 1, kProjections = 2, kLogits = 4, kNone = 0 };

unsigned NoticedBy(const Scenario& a, const Scenario& b) {
  return (SameInput(a.input, b.input) ? 0u : kInput) |
         (SameProjections(a.projections, b.projections) ? 0u : kProjections) |
         (SameLogitSettings(a, b) ? 0u : kLogits);
}

std::string Base(const std::string& input, const std::string& rest) {
  return R"({"format": "attention-lab/scenario@1", "input": )" + input + rest + "}";
}
const std::string kMatrixInput = R"({"source": "matrix", "values": [[0.5, 0.25, 1], [2, 3, 4]]})";
const std::string kRandnInput = R"({"source": "randn", "length": 3, "d_in": 4, "seed": 1})";
const std::string kTextInput = R"({"source": "text", "text": "the cat sat", "d_in": 4, "seed": 1})";
const std::string kTorchRand = R"(, "projections": {"init": "torch_rand", "d_out": 4, "seed": 9})";
const std::string kLinear = R"(, "projections": {"init": "linear", "d_out": 4, "seed": 9})";
const std::string kWMatrix = R"(, "projections": {"init": "matrix", "W_query": [[1, 0], [0, 1],
    [1, 1]], "W_key": [[1, 2], [3, 4], [5, 6]], "W_value": [[0, 1], [1, 0], [2, 2]]})";
const std::string kQkvDrawn =
    R"({"source": "qkv", "length": 3, "d_k": 4, "seed": 2}, "mask": {"kind": "custom",
    "allowed": [[1, 0, 0], [1, 1, 0], [0, 1, 1]]})";
const std::string kQkvGiven = R"({"source": "qkv", "Q": [[1, 2], [3, 4]], "K": [[0, 1], [1, 0]],
    "V": [[5, 6], [7, 8]]})";

struct Case {
  const char* owner;  // "input", "projections", ... or "" for the scenario's own fields
  const char* field;
  std::string base;
  std::function<void(Scenario&)> change;
  unsigned noticed;
};

std::vector<Case> Cases() {
  const std::string matrix = Base(kMatrixInput, kTorchRand);
  const std::string randn = Base(kRandnInput, kTorchRand);
  const std::string qkv = Base(kQkvDrawn, "");
  return {
      {"input", "source", matrix,
       [](Scenario& s) {
         s.input.source = InputSource::kRandn;
         s.input.values.clear();
         s.input.length = 2;
         s.input.d_in = 3;
         s.input.seed = 5;
       },
       kInput},
      {"input", "values", matrix, [](Scenario& s) { s.input.values[0](1, 2) = -4; }, kInput},
      {"input", "tokens", matrix,
       [](Scenario& s) {
         s.input.tokens = {"a", "b"};
       },
       kInput},
      {"input", "tokens", qkv,
       [](Scenario& s) {
         s.input.tokens = {"a", "b", "c"};
       },
       kInput},
      {"input", "text", Base(kTextInput, kTorchRand),
       [](Scenario& s) { s.input.text = "the dog sat"; }, kInput},
      {"input", "tokenizer", Base(kTextInput, kTorchRand),
       [](Scenario& s) { s.input.tokenizer = TokenizerKind::kChars; }, kInput},
      {"input", "special_tokens", Base(kTextInput, kTorchRand),
       [](Scenario& s) { s.input.special_tokens = {"<|unk|>"}; }, kInput},
      {"input", "d_in", randn, [](Scenario& s) { s.input.d_in = 5; }, kInput},
      {"input", "seed", randn, [](Scenario& s) { s.input.seed = 2; }, kInput},
      {"input", "seed", qkv, [](Scenario& s) { s.input.seed = 3; }, kInput},
      {"input", "batch", randn, [](Scenario& s) { s.input.batch = 2; }, kInput},
      {"input", "batch", qkv, [](Scenario& s) { s.input.batch = 2; }, kInput},
      {"input", "length", randn, [](Scenario& s) { s.input.length = 4; }, kInput},
      {"input", "generator", randn, [](Scenario& s) { s.input.generator = Generator::kNumpy; },
       kInput},
      {"input", "d_k", qkv, [](Scenario& s) { s.input.d_k = 6; }, kInput},
      {"input", "d_v", qkv, [](Scenario& s) { s.input.d_v = 2; }, kInput},
      {"input", "order", qkv,
       [](Scenario& s) {
         s.input.order = {Projection::kValue, Projection::kQuery, Projection::kKey};
       },
       kInput},
      {"input", "Q", Base(kQkvGiven, ""), [](Scenario& s) { s.input.Q[0](0, 1) = 9; }, kInput},
      {"input", "K", Base(kQkvGiven, ""), [](Scenario& s) { s.input.K[0](1, 1) = 9; }, kInput},
      {"input", "V", Base(kQkvGiven, ""), [](Scenario& s) { s.input.V[0](1, 0) = 9; }, kInput},
      {"projections", "init", randn,
       [](Scenario& s) { s.projections.init = ProjectionInit::kRandn; }, kProjections},
      {"projections", "d_out", randn, [](Scenario& s) { s.projections.d_out = 2; }, kProjections},
      {"projections", "seed", randn, [](Scenario& s) { s.projections.seed = 10; }, kProjections},
      {"projections", "seed", randn, [](Scenario& s) { s.projections.seed.reset(); }, kProjections},
      {"projections", "order", randn,
       [](Scenario& s) {
         s.projections.order = {Projection::kKey, Projection::kQuery, Projection::kValue};
       },
       kProjections},
      {"projections", "bias", Base(kRandnInput, kLinear),
       [](Scenario& s) { s.projections.bias = true; }, kProjections},
      {"projections", "heads", randn, [](Scenario& s) { s.projections.heads = 2; }, kProjections},
      {"projections", "heads", qkv, [](Scenario& s) { s.projections.heads = 2; }, kProjections},
      {"projections", "kv_heads", randn,
       [](Scenario& s) {
         s.projections.heads = 2;
         s.projections.kv_heads = 1;
       },
       kProjections},
      {"projections", "out_proj", Base(kRandnInput, kLinear),
       [](Scenario& s) { s.projections.out_proj = true; }, kProjections},
      {"projections", "qk_norm", randn,
       [](Scenario& s) {
         s.projections.qk_norm = QkNormSpec{};
         s.projections.qk_norm->scale = 1.2;
       },
       kProjections},
      {"projections", "out_proj_bias", Base(kRandnInput, kLinear),
       [](Scenario& s) {
         s.projections.out_proj = true;
         s.projections.out_proj_bias = false;
       },
       kProjections},
      {"projections", "per_head", randn,
       [](Scenario& s) {
         s.projections.heads = 2;
         s.projections.per_head = true;
       },
       kProjections},
      {"projections", "head_split", randn,
       [](Scenario& s) {
         s.projections.heads = 2;
         s.projections.head_split = HeadSplit::kViewNoTranspose;
       },
       kProjections},
      {"projections", "W", Base(kMatrixInput, kWMatrix),
       [](Scenario& s) { s.projections.W[1](2, 0) = -5; }, kProjections},
      {"scaling", "sqrt_dk", randn, [](Scenario& s) { s.scaling.sqrt_dk = false; }, kLogits},
      {"scaling", "multiplier", randn, [](Scenario& s) { s.scaling.multiplier = 2.5; }, kLogits},
      {"scaling", "softcap", randn, [](Scenario& s) { s.scaling.softcap = 30.0; }, kLogits},
      // SDPA's scaling changes the scores' operands, hence the logits.
      {"scaling", "scale_at", randn, [](Scenario& s) { s.scaling.scale_at = ScaleAt::kQAndK; },
       kLogits},
      // The sink changes the weights, not the logits.
      {"scaling", "sink", randn, [](Scenario& s) { s.scaling.sink = {0.75}; }, kNone},
      // So does its form (torchtitan's sigmoid rescale).
      {"scaling", "sink_form", randn,
       [](Scenario& s) {
         s.scaling.sink = {0.75};
         s.scaling.sink_form = SinkForm::kSigmoid;
       },
       kNone},
      // The upcast softmax (low precision only) changes the weights, not the logits.
      {"scaling", "softmax_dtype", randn,
       [](Scenario& s) {
         s.dtype = Dtype::kBfloat16;
         s.scaling.softmax_dtype = SoftmaxDtype::kFloat32;
       },
       kNone},
      {"mask", "fill", randn, [](Scenario& s) { s.mask.fill = MaskFill::kMinus1e9; }, kLogits},
      {"mask", "kind", randn, [](Scenario& s) { s.mask.kind = MaskKind::kCausal; }, kLogits},
      {"mask", "allowed", qkv, [](Scenario& s) { s.mask.allowed(2, 0) = 1; }, kLogits},
      {"mask", "window", randn,
       [](Scenario& s) {
         s.mask.kind = MaskKind::kSlidingWindow;
         s.mask.window = 2;
       },
       kLogits},
      {"mask", "prefix", randn,
       [](Scenario& s) {
         s.mask.kind = MaskKind::kPrefixLm;
         s.mask.prefix = 2;
       },
       kLogits},
      {"mask", "doc_ids", randn,
       [](Scenario& s) {
         s.mask.kind = MaskKind::kDocument;
         s.mask.doc_ids = {4, 4, 7};
       },
       kLogits},
      {"mask", "of", randn,
       [](Scenario& s) {
         s.mask.kind = MaskKind::kOr;
         MaskSpec window;
         window.kind = MaskKind::kSlidingWindow;
         window.window = 1;
         MaskSpec prefix;
         prefix.kind = MaskKind::kPrefixLm;
         prefix.prefix = 1;
         s.mask.of = {window, prefix};
       },
       kLogits},
      {"mask", "masked_rows", qkv, [](Scenario& s) { s.mask.masked_rows = MaskedRows::kZero; },
       kLogits},
      {"mask", "align", randn, [](Scenario& s) { s.mask.align = MaskAlign::kTopLeft; }, kLogits},
      {"", "title", randn, [](Scenario& s) { s.title = "changed"; }, kNone},
      {"", "normalization", randn,
       [](Scenario& s) { s.normalization = Normalization::kSoftmaxNaive; }, kNone},
      {"dropout", "p", randn, [](Scenario& s) { s.dropout.p = 0.5; }, kNone},
      {"dropout", "seed", randn, [](Scenario& s) { s.dropout.seed = 4; }, kNone},
      {"", "dtype", randn, [](Scenario& s) { s.dtype = Dtype::kFloat64; }, kNone},
      {"positions", "kind", randn, [](Scenario& s) { s.positions.kind = PositionKind::kAlibi; },
       kLogits},
      {"positions", "kind", randn, [](Scenario& s) { s.positions.kind = PositionKind::kRope; },
       kNone},
      {"positions", "layout", randn,
       [](Scenario& s) {
         s.positions.kind = PositionKind::kRope;
         s.positions.layout = RopeLayout::kInterleaved;
       },
       kNone},
      {"positions", "theta", randn,
       [](Scenario& s) {
         s.positions.kind = PositionKind::kRope;
         s.positions.theta = 500000;
       },
       kNone},
      {"positions", "sign", randn,
       [](Scenario& s) {
         s.positions.kind = PositionKind::kRope;
         s.positions.sign = -1;
       },
       kNone},
      // ALiBi's slopes and distance act on the logits (issue 61).
      {"positions", "slope_rule", randn,
       [](Scenario& s) {
         s.positions.kind = PositionKind::kAlibi;
         s.positions.slope_rule = AlibiSlopeRule::kAttentionGym;
       },
       kLogits},
      {"positions", "slopes", randn,
       [](Scenario& s) {
         s.positions.kind = PositionKind::kAlibi;
         s.positions.slope_rule = AlibiSlopeRule::kGiven;
         s.positions.slopes = {0.75};
       },
       kLogits},
      {"positions", "symmetric", randn,
       [](Scenario& s) {
         s.positions.kind = PositionKind::kAlibi;
         s.positions.symmetric = true;
       },
       kLogits},
  };
}

TEST(ScenarioFields, EachFieldRoundTripsAndTripsExactlyItsPredicates) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(std::string(c.owner) + "." + c.field);
    const Scenario base = ParseScenario(c.base);
    Scenario changed = base;
    c.change(changed);
    ASSERT_NO_THROW(ValidateScenario(changed));
    EXPECT_FALSE(changed == base) << "operator== misses the change";
    EXPECT_EQ(NoticedBy(changed, base), c.noticed);
    EXPECT_EQ(NoticedBy(base, changed), c.noticed);
    const std::string text = WriteScenario(changed);
    EXPECT_NE(text, WriteScenario(base)) << "WriteScenario does not write the field";
    const Scenario again = ParseScenario(text);
    EXPECT_TRUE(again == changed) << text;
    EXPECT_EQ(NoticedBy(again, base), c.noticed) << text;
    EXPECT_EQ(WriteScenario(again), text);
  }
}

TEST(ScenarioFields, EveryMemberOfTheScenarioHasACase) {
  std::map<std::string, std::set<std::string>> listed;
  for (const Case& c : Cases()) listed[c.owner].insert(c.field);
  EXPECT_EQ(listed["input"].size(), CountFields<InputSpec>());
  EXPECT_EQ(listed["projections"].size(), CountFields<ProjectionSpec>());
  EXPECT_EQ(listed["scaling"].size(), CountFields<ScalingSpec>());
  EXPECT_EQ(listed["mask"].size(), CountFields<MaskSpec>());
  EXPECT_EQ(listed["dropout"].size(), CountFields<DropoutSpec>());
  EXPECT_EQ(listed["positions"].size(), CountFields<PositionsSpec>());
  // The scenario's own fields besides its six sub-structs (input ... dropout, positions).
  EXPECT_EQ(listed[""].size() + 6, CountFields<Scenario>());
}

}  // namespace fields
}  // namespace attnlab

// Each enum's one spelling list (enum_names.h): every value spelled once, parsed back, listed in
// order; the scenario's error messages list them from there.
namespace attnlab {
namespace {

template <NamedEnum E>
void ExpectSpellingsRoundTrip(const std::string& list) {
  std::set<std::string> seen;
  for (const EnumName<E>& n : AllNames(E{})) {
    EXPECT_STREQ(Name(n.value), n.name);
    EXPECT_EQ(ParseName<E>(n.name), n.value) << n.name;
    EXPECT_TRUE(seen.insert(n.name).second) << n.name << " spelled twice";
  }
  EXPECT_FALSE(ParseName<E>("no-such-word").has_value());
  EXPECT_EQ(NameList<E>(), list);
}

TEST(EnumNames, EveryListRoundTrips) {
  ExpectSpellingsRoundTrip<InputSource>("matrix, text, randn, qkv");
  ExpectSpellingsRoundTrip<Generator>("torch, numpy");
  ExpectSpellingsRoundTrip<ProjectionInit>("identity, torch_rand, randn, linear, matrix");
  ExpectSpellingsRoundTrip<Projection>("query, key, value");
  ExpectSpellingsRoundTrip<MaskKind>(
      "none, causal, custom, sliding_window, prefix_lm, document, and, or");
  ExpectSpellingsRoundTrip<MaskedRows>("nan, zero");
  ExpectSpellingsRoundTrip<Normalization>(
      "softmax, softmax_naive, sum, mean, softmax_then_mask, softmax_then_mask_no_renorm, "
      "softmax_dim_query");
  ExpectSpellingsRoundTrip<Dtype>("float32, float64, bfloat16, float16");
  ExpectSpellingsRoundTrip<MaskFill>("-inf, finfo_min, -1e9, -1e4, -2.3819763e38");
  ExpectSpellingsRoundTrip<SoftmaxDtype>("same, float32");
  ExpectSpellingsRoundTrip<PositionKind>("none, alibi, rope, sinusoidal");
  ExpectSpellingsRoundTrip<RopeLayout>("split_halves, interleaved");
  ExpectSpellingsRoundTrip<AlibiSlopeRule>("paper, attention_gym, given");
  ExpectSpellingsRoundTrip<TokenizerKind>("words, words_and_spaces, chars");
  EXPECT_EQ(NameList<Dtype>(" or "), "float32, float64, bfloat16 or float16");
  EXPECT_EQ(NameList<MaskKind>(" or "),
            "none, causal, custom, sliding_window, prefix_lm, document, and or or");
  EXPECT_EQ(ErrorOf(Edit("\"torch_rand\"", "\"rand\"")),
            "projections.init: unknown value \"rand\" (expected one of: identity, torch_rand, "
            "randn, linear, matrix)");
}

}  // namespace
}  // namespace attnlab
