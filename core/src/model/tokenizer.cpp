// tokenizer.cpp: see tokenizer.h.
#include "attnlab/model/tokenizer.h"

#include <algorithm>
#include <map>

#include "attnlab/base/text.h"

namespace attnlab {
namespace {

bool IsPunct(char c) {
  switch (c) {
    case ',':
    case '.':
    case ':':
    case ';':
    case '?':
    case '_':
    case '!':
    case '"':
    case '(':
    case ')':
    case '\'':
      return true;
    default:
      return false;
  }
}

// Python's str.strip(): removes leading and trailing code points for which str.isspace() holds.
std::string Strip(const std::string& s) {
  size_t b = 0;
  while (b < s.size()) {
    const Utf8Char ch = DecodeUtf8At(s, b);
    if (!IsPythonSpace(ch.cp)) break;
    b += ch.len;
  }
  size_t e = b;  // end of the last non-space code point
  for (size_t i = b; i < s.size();) {
    const Utf8Char ch = DecodeUtf8At(s, i);
    i += ch.len;
    if (!IsPythonSpace(ch.cp)) e = i;
  }
  return s.substr(b, e - b);
}

}  // namespace

std::vector<std::string> Tokenize(const std::string& text, TokenizerKind kind) {
  std::vector<std::string> out;
  if (kind == TokenizerKind::kChars) {
    for (size_t i = 0; i < text.size();) {
      const size_t len = DecodeUtf8At(text, i).len;
      out.push_back(text.substr(i, len));
      i += len;
    }
    return out;
  }
  // re.split with one capturing group: the text between separators, and each separator itself.
  // The alternation tries the punctuation class, then "--", then one whitespace code point
  // (Python's \s on str: U+00A0, U+2003, U+3000, U+0085, U+2028, \x1c... as well as ASCII).
  std::vector<std::string> pieces;
  std::string current;
  for (size_t i = 0; i < text.size();) {
    const Utf8Char ch = DecodeUtf8At(text, i);
    size_t sep = 0;
    if (IsPunct(text[i])) {
      sep = 1;
    } else if (text.compare(i, 2, "--") == 0) {
      sep = 2;
    } else if (IsPythonSpace(ch.cp)) {
      sep = ch.len;
    }
    if (sep == 0) {
      current.append(text, i, ch.len);
      i += ch.len;
      continue;
    }
    pieces.push_back(current);
    current.clear();
    pieces.push_back(text.substr(i, sep));
    i += sep;
  }
  pieces.push_back(current);
  for (const std::string& p : pieces) {
    if (kind == TokenizerKind::kWords) {
      std::string s = Strip(p);
      if (!s.empty()) out.push_back(s);
    } else if (!p.empty()) {
      out.push_back(p);
    }
  }
  return out;
}

Vocabulary BuildVocabulary(const std::vector<std::string>& tokens,
                           const std::vector<std::string>& special_tokens) {
  Vocabulary v;
  v.vocab = tokens;
  std::sort(v.vocab.begin(), v.vocab.end());
  v.vocab.erase(std::unique(v.vocab.begin(), v.vocab.end()), v.vocab.end());
  v.vocab.insert(v.vocab.end(), special_tokens.begin(), special_tokens.end());
  // vocab.index(t) is the first occurrence, which matters when a special token is also a token.
  std::map<std::string, int> first;
  for (size_t i = 0; i < v.vocab.size(); ++i) first.emplace(v.vocab[i], static_cast<int>(i));
  for (const std::string& t : tokens) v.token_ids.push_back(first.at(t));
  return v;
}

}  // namespace attnlab
