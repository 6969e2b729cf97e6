// token_view_test.cpp: token_view.h, the token view's geometry (no window) and its figure file:
// line opacities equal the engine's weights (the book's printed digits for Raschka's journey
// rows), masked pairs draw no line, the sink is a pseudo-token with its share, grouped K/V heads
// are named, a selection shades the other side by its row (or column) of weights, and the SVG
// holds one <line> per unmasked pair with the weight as its stroke-opacity.
#include "attnlab/figures/token_view.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "attnlab/model/presets.h"

namespace attnlab {
namespace {

std::vector<const TokenLine*> LinesFrom(const TokenViewGeometry& g, int64_t query) {
  std::vector<const TokenLine*> out;
  for (const TokenLine& l : g.lines)
    if (l.query == query) out.push_back(&l);
  return out;
}

// Raschka ch. 3.4, SelfAttention_v1 with torch.rand weights, seed 123: the row of "journey"
// (x_2) prints tensor([0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820]) in the book.
TEST(TokenView, JourneyRowOpacitiesAreItsWeights) {
  const Scenario s = LoadPreset("raschka-journey");
  const Stages st = RunScenario(s);
  const TokenViewGeometry g = TokenViewLayout(st, s, {});
  ASSERT_EQ(g.queries.size(), 6u);
  ASSERT_EQ(g.keys.size(), 6u);
  EXPECT_EQ(g.queries[1].text, "journey");
  EXPECT_EQ(g.lines.size(), 36u);  // no mask: every pair
  const std::vector<const TokenLine*> row = LinesFrom(g, 1);
  ASSERT_EQ(row.size(), 6u);
  const float book[6] = {0.1500f, 0.2264f, 0.2199f, 0.1311f, 0.0906f, 0.1820f};
  for (int j = 0; j < 6; ++j) {
    EXPECT_EQ(row[j]->key, j);
    EXPECT_EQ(row[j]->opacity, st.weights[0](1, j)) << "key " << j;
    EXPECT_NEAR(row[j]->opacity, book[j], 5e-5f) << "key " << j;
    // The line joins the query's anchor to the key's.
    EXPECT_EQ(row[j]->x0, g.queries[1].anchor_x);
    EXPECT_EQ(row[j]->y1, g.keys[j].anchor_y);
    EXPECT_LT(row[j]->x0, row[j]->x1);
  }
}

// Raschka 3.5.1 [30]: the causal weights; masked pairs (key after query) have no line.
TEST(TokenView, CausalMaskDrawsNoLineForMaskedPairs) {
  const Scenario s = LoadPreset("raschka-3.5-causal");
  const Stages st = RunScenario(s);
  const TokenViewGeometry g = TokenViewLayout(st, s, {});
  EXPECT_EQ(g.lines.size(), 21u);  // 6 * 7 / 2
  for (const TokenLine& l : g.lines) EXPECT_LE(l.key, l.query);
  const std::vector<const TokenLine*> row = LinesFrom(g, 1);
  ASSERT_EQ(row.size(), 2u);
  EXPECT_NEAR(row[0]->opacity, 0.5517f, 5e-5f);
  EXPECT_NEAR(row[1]->opacity, 0.4483f, 5e-5f);
  EXPECT_EQ(LinesFrom(g, 0).size(), 1u);
  EXPECT_EQ(LinesFrom(g, 0)[0]->opacity, 1.0f);
}

TEST(TokenView, SelectedQueryShadesKeysByItsRow) {
  const Scenario s = LoadPreset("raschka-3.5-causal");
  const Stages st = RunScenario(s);
  TokenViewOptions o;
  o.selection = {TokenSelection::Side::kQuery, 2};
  const TokenViewGeometry g = TokenViewLayout(st, s, o);
  EXPECT_TRUE(g.queries[2].selected);
  for (int j = 0; j < 6; ++j) EXPECT_FLOAT_EQ(g.keys[j].share, st.weights[0](2, j));
  EXPECT_NEAR(g.keys[0].share, 0.3800f, 5e-5f);
  EXPECT_EQ(g.keys[5].share, 0.0f);  // masked
  for (const TokenLine& l : g.lines) EXPECT_EQ(l.dimmed, l.query != 2);

  // A key: who attends to it (its column).
  o.selection = {TokenSelection::Side::kKey, 1};
  const TokenViewGeometry k = TokenViewLayout(st, s, o);
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(k.queries[i].share, st.weights[0](i, 1));
  EXPECT_NEAR(k.queries[4].share, 0.1983f, 5e-5f);
  for (const TokenLine& l : k.lines) EXPECT_EQ(l.dimmed, l.key != 1);
}

TEST(TokenView, AllHeadsOneColourEachOneHeadAlone) {
  const Scenario s = LoadPreset("raschka-3.6-mha");
  const Stages st = RunScenario(s);
  ASSERT_EQ(st.shape.H, 2);
  const int64_t allowed = st.mask.cast<int64_t>().sum();
  const TokenViewGeometry all = TokenViewLayout(st, s, {});
  EXPECT_EQ(static_cast<int64_t>(all.lines.size()), 2 * allowed);
  ASSERT_EQ(all.legend.size(), 2u);
  for (const TokenLine& l : all.lines) {
    EXPECT_EQ(l.color, TokenHeadColor(l.head));
    EXPECT_EQ(l.opacity, st.Head(st.weights, 0, l.head)(l.query, l.key));
  }
  EXPECT_NE(TokenHeadColor(0), TokenHeadColor(1));
  TokenViewOptions o;
  o.head = 1;
  const TokenViewGeometry one = TokenViewLayout(st, s, o);
  EXPECT_EQ(static_cast<int64_t>(one.lines.size()), allowed);
  for (const TokenLine& l : one.lines) EXPECT_EQ(l.head, 1);
  EXPECT_EQ(TokenViewTitle(st, o), "attention between tokens \u00B7 head 1 of 2 \u00B7 batch 0");
  o.head = 2;
  try {
    TokenViewLayout(st, s, o);
    FAIL() << "head 2 of 2 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("head 2 is out of range"), std::string::npos) << e.what();
  }
}

TEST(TokenView, GroupedKeyHeadsAreNamed) {
  const Scenario s = LoadPreset("gqa-8-query-2-kv");
  const Stages st = RunScenario(s);
  const TokenViewGeometry g = TokenViewLayout(st, s, {});
  EXPECT_EQ(g.groups, "heads 0, 1, 2, 3 share key head 0; heads 4, 5, 6, 7 share key head 1");
  for (const TokenLine& l : g.lines) EXPECT_EQ(l.kv_head, l.head / 4);
  EXPECT_EQ(g.legend[5].text, "head 5 (key head 1)");
  // Without grouping there is nothing to name.
  const Scenario j = LoadPreset("raschka-journey");
  EXPECT_EQ(TokenViewLayout(RunScenario(j), j, {}).groups, "");
}

TEST(TokenView, SinkIsAPseudoTokenWithItsShare) {
  const Scenario s = LoadPreset("gpt-oss-sink");
  const Stages st = RunScenario(s);
  ASSERT_FALSE(st.sink.empty());
  const int64_t T = st.shape.T;
  TokenViewOptions o;
  o.head = 0;
  const TokenViewGeometry g = TokenViewLayout(st, s, o);
  ASSERT_EQ(static_cast<int64_t>(g.keys.size()), T + 1);
  EXPECT_EQ(g.keys.back().text, "sink");
  EXPECT_LT(g.keys.back().y, g.keys[0].y);  // above the keys
  for (int64_t i = 0; i < T; ++i) {
    double sum = 0;
    bool sink_line = false;
    for (const TokenLine* l : LinesFrom(g, i)) {
      sum += l->opacity;
      if (l->key == T) {
        sink_line = true;
        EXPECT_EQ(l->opacity, st.Head(st.sink, 0, 0)(i, 0));
      }
    }
    EXPECT_TRUE(sink_line) << "query " << i;
    EXPECT_NEAR(sum, 1.0, 1e-5) << "query " << i;  // the row and the sink share 1
  }
}

TEST(TokenFigure, SvgHasOneLinePerUnmaskedPairWithTheWeightAsOpacity) {
  const Scenario s = LoadPreset("raschka-3.5-causal");
  const Stages st = RunScenario(s);
  const std::string svg = TokenFigureFile(st, s, {}, {}, FigureFormat::kSvg, "");
  std::vector<float> opacities;
  for (size_t at = svg.find("<line "); at != std::string::npos; at = svg.find("<line ", at + 1)) {
    const size_t o = svg.find("stroke-opacity=\"", at);
    ASSERT_NE(o, std::string::npos);
    opacities.push_back(std::strtof(svg.c_str() + o + 16, nullptr));
  }
  ASSERT_EQ(opacities.size(), 21u);
  size_t k = 0;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j <= i; ++j) EXPECT_EQ(opacities[k++], st.weights[0](i, j)) << i << "," << j;
  EXPECT_NE(svg.find(">journey</text>"), std::string::npos);
  EXPECT_NE(svg.find("masked pairs have no line"), std::string::npos);
  // PNG and PDF draw the same picture.
  const std::string png = TokenFigureFile(st, s, {}, {}, FigureFormat::kPng, "");
  EXPECT_EQ(png.compare(1, 3, "PNG"), 0);
  const std::string pdf = TokenFigureFile(st, s, {}, {}, FigureFormat::kPdf, "");
  EXPECT_EQ(pdf.compare(0, 5, "%PDF-"), 0);
}

}  // namespace
}  // namespace attnlab
