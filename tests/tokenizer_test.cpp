// tokenizer_test.cpp: the notebooks' tokenizers, checked against Python's re.split results.
#include "attnlab/model/tokenizer.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace attnlab {
namespace {

using Tokens = std::vector<std::string>;

TEST(Tokenize, WordsAndSpacesKeepsTheSpaces) {
  // dog-attacks-cat: SimpleTokenizer.tokenize("The dog attacks the wild cat")
  EXPECT_EQ(Tokenize("The dog attacks the wild cat", TokenizerKind::kWordsAndSpaces),
            (Tokens{"The", " ", "dog", " ", "attacks", " ", "the", " ", "wild", " ", "cat"}));
}

TEST(Tokenize, WordsSplitsPunctuationAndDoubleDash) {
  // re.split(r'([,.:;?_!"()\']|--|\s)', 'Hello, world. Is this-- a test?') stripped, blanks dropped
  EXPECT_EQ(Tokenize("Hello, world. Is this-- a test?", TokenizerKind::kWords),
            (Tokens{"Hello", ",", "world", ".", "Is", "this", "--", "a", "test", "?"}));
  EXPECT_EQ(Tokenize("don't  stop", TokenizerKind::kWords), (Tokens{"don", "'", "t", "stop"}));
  EXPECT_EQ(Tokenize("a-b", TokenizerKind::kWords), (Tokens{"a-b"}));
  EXPECT_EQ(Tokenize("   ", TokenizerKind::kWords), Tokens{});
}

TEST(Tokenize, WordsAndSpacesKeepsEveryWhitespacePiece) {
  // Python: [p for p in re.split(...) if p != ""] on "a  b\n"
  EXPECT_EQ(Tokenize("a  b\n", TokenizerKind::kWordsAndSpaces), (Tokens{"a", " ", " ", "b", "\n"}));
}

TEST(Tokenize, CharsAreCodePoints) {
  EXPECT_EQ(Tokenize("hé!", TokenizerKind::kChars), (Tokens{"h", "é", "!"}));
}

TEST(Tokenize, UnicodeSpacesArePythonsBackslashS) {
  // golden/scenarios/text-unicode-spaces-*.json, tokenized by the oracle (re.split with \s and
  // str.strip() on a str): U+00A0, U+2003, U+3000, U+0085, U+2028 and \x1c are whitespace.
  const std::pair<const char*, TokenizerKind> modes[] = {
      {"words", TokenizerKind::kWords},
      {"words_and_spaces", TokenizerKind::kWordsAndSpaces},
      {"chars", TokenizerKind::kChars}};
  for (const auto& [name, kind] : modes) {
    const nlohmann::json g =
        test::LoadGolden(std::string("scenarios/text-unicode-spaces-") + name + ".json");
    EXPECT_EQ(Tokenize(g["scenario"]["input"]["text"].get<std::string>(), kind),
              g["expected"]["tokens"].get<Tokens>())
        << name;
  }
  // A no-break space between words splits them, as a plain space does.
  EXPECT_EQ(Tokenize("one\u00a0two\u2003three", TokenizerKind::kWords),
            (Tokens{"one", "two", "three"}));
  EXPECT_EQ(Tokenize("\u3000a\u0085", TokenizerKind::kWordsAndSpaces),
            (Tokens{"\u3000", "a", "\u0085"}));
  // U+200B (zero width space) is not whitespace to Python.
  EXPECT_EQ(Tokenize("a\u200bb", TokenizerKind::kWords), (Tokens{"a\u200bb"}));
}

TEST(BuildVocabulary, SortedUniqueThenSpecials) {
  const Vocabulary v =
      BuildVocabulary(Tokenize("the cat the", TokenizerKind::kWords), {"<|endoftext|>", "<|unk|>"});
  EXPECT_EQ(v.vocab, (Tokens{"cat", "the", "<|endoftext|>", "<|unk|>"}));
  EXPECT_EQ(v.token_ids, (std::vector<int>{1, 0, 1}));
}

}  // namespace
}  // namespace attnlab
