// tokenizer.h: the notebooks' simple tokenizers and vocabulary (scenario input "text").
//
// Legend: T = number of tokens, V = vocabulary size (sorted unique tokens, then specials).
#pragma once

#include <string>
#include <vector>

#include "attnlab/base/enum_names.h"

namespace attnlab {

/// How text is cut into tokens; the scenario field input.tokenizer.
enum class TokenizerKind {
  kWords,           ///< split on ([,.:;?_!"()']|--|\s), keep the punctuation, drop blanks
  kWordsAndSpaces,  ///< the same split, whitespace pieces kept as tokens (" ")
  kChars,           ///< one token per Unicode code point (Python's list(text))
};

/// The spec's spellings of the tokenizers (enum_names.h: Name, ParseName, NameList).
inline constexpr EnumName<TokenizerKind> kTokenizerKinds[] = {
    {TokenizerKind::kWords, "words"},
    {TokenizerKind::kWordsAndSpaces, "words_and_spaces"},
    {TokenizerKind::kChars, "chars"}};
constexpr const auto& AllNames(TokenizerKind) { return kTokenizerKinds; }
/// The spec's name of a tokenizer ("words", "words_and_spaces", "chars"): Name(kind).
inline const char* TokenizerName(TokenizerKind kind) { return Name(kind); }

/// Splits `text` into tokens. Matches the notebooks' SimpleTokenizer and the oracle's
/// re.split(r'([,.:;?_!"()\']|--|\s)', text): "words" strips and drops empty pieces,
/// "words_and_spaces" drops only empty pieces, "chars" is Python's list(text) (one token per
/// Unicode code point of the UTF-8 input; invalid UTF-8 bytes become one token each).
std::vector<std::string> Tokenize(const std::string& text, TokenizerKind kind);

/// Vocabulary and ids: vocab = sorted(set(tokens)) + specials (Python's sort of str, i.e. by
/// code point, which equals byte order for UTF-8), ids[i] = index of tokens[i] in vocab.
struct Vocabulary {
  std::vector<std::string> vocab;  ///< V entries
  std::vector<int> token_ids;      ///< T entries
};
Vocabulary BuildVocabulary(const std::vector<std::string>& tokens,
                           const std::vector<std::string>& special_tokens);

}  // namespace attnlab
