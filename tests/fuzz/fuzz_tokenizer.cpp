// fuzz_tokenizer.cpp: any bytes as text for the three tokenizers and the UTF-8 helpers of
// text.h. Invariants from tokenizer.h: "chars" and "words_and_spaces" only cut the text (the
// tokens concatenate back to it); the vocabulary is sorted, unique, and every id points at its
// token.
#include <algorithm>
#include <string>

#include "attnlab/base/text.h"
#include "attnlab/model/tokenizer.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace attnlab;
  if (size > 4096) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (TokenizerKind kind :
       {TokenizerKind::kWords, TokenizerKind::kWordsAndSpaces, TokenizerKind::kChars}) {
    const std::vector<std::string> tokens = Tokenize(text, kind);
    std::string joined;
    for (const std::string& t : tokens) {
      if (t.empty()) fuzz::Violated("an empty token");
      joined += t;
    }
    if (kind != TokenizerKind::kWords && joined != text)
      fuzz::Violated("the tokens do not concatenate back to the text");
    const Vocabulary v = BuildVocabulary(tokens, {"<|endoftext|>", "<|unk|>"});
    if (v.token_ids.size() != tokens.size()) fuzz::Violated("one id per token");
    for (size_t i = 0; i < tokens.size(); ++i)
      if (v.token_ids[i] < 0 || v.token_ids[i] >= static_cast<int>(v.vocab.size()) ||
          v.vocab[v.token_ids[i]] != tokens[i])
        fuzz::Violated("a token id points at another token");
  }
  const std::vector<char32_t> cps = DecodeUtf8(text);
  if (cps.size() != Utf8Length(text)) fuzz::Violated("DecodeUtf8 and Utf8Length disagree");
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, cps.size()}) {
    const std::string prefix = Utf8Prefix(text, n);
    if (text.compare(0, prefix.size(), prefix) != 0) fuzz::Violated("Utf8Prefix is no prefix");
  }
  (void)VisibleToken(text);
  return 0;
}
