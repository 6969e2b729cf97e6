// tokenizer_test.cpp: the notebooks' tokenizers, checked against Python's re.split results.
#include "attnlab/tokenizer.h"

#include <gtest/gtest.h>

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

TEST(BuildVocabulary, SortedUniqueThenSpecials) {
  const Vocabulary v =
      BuildVocabulary(Tokenize("the cat the", TokenizerKind::kWords), {"<|endoftext|>", "<|unk|>"});
  EXPECT_EQ(v.vocab, (Tokens{"cat", "the", "<|endoftext|>", "<|unk|>"}));
  EXPECT_EQ(v.token_ids, (std::vector<int>{1, 0, 1}));
}

}  // namespace
}  // namespace attnlab
