// tokenizer.cpp: see tokenizer.h.
#include "attnlab/tokenizer.h"

#include <algorithm>
#include <map>

namespace attnlab {
namespace {

// Python's \s on the ASCII range (including the separators 0x1c..0x1f). Unicode spaces such as
// U+00A0 are not treated as whitespace here; the notebooks' texts never contain them.
bool IsSpace(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == 0x1c ||
         c == 0x1d || c == 0x1e || c == 0x1f;
}

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

// Length in bytes of the UTF-8 code point starting at s[i] (1 for an invalid byte).
size_t CodePointLength(const std::string& s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
  if (i + len > s.size()) return 1;
  for (size_t k = 1; k < len; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 1;
  return len;
}

std::string Strip(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && IsSpace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && IsSpace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

}  // namespace

const char* TokenizerName(TokenizerKind kind) {
  switch (kind) {
    case TokenizerKind::kWords:
      return "words";
    case TokenizerKind::kWordsAndSpaces:
      return "words_and_spaces";
    case TokenizerKind::kChars:
      return "chars";
  }
  return "words";
}

std::vector<std::string> Tokenize(const std::string& text, TokenizerKind kind) {
  std::vector<std::string> out;
  if (kind == TokenizerKind::kChars) {
    for (size_t i = 0; i < text.size();) {
      const size_t len = CodePointLength(text, i);
      out.push_back(text.substr(i, len));
      i += len;
    }
    return out;
  }
  // re.split with one capturing group: the text between separators, and each separator itself.
  // The alternation tries the punctuation class, then "--", then one whitespace character.
  std::vector<std::string> pieces;
  std::string current;
  for (size_t i = 0; i < text.size();) {
    size_t sep = 0;
    if (IsPunct(text[i]) || IsSpace(static_cast<unsigned char>(text[i]))) {
      sep = 1;
    } else if (text.compare(i, 2, "--") == 0) {
      sep = 2;
    }
    if (sep == 0) {
      current += text[i];
      ++i;
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
