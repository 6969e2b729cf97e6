// text_test.cpp: the UTF-8 helper and the number formatter (text.h).
#include "attnlab/base/text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

namespace attnlab {
namespace {

TEST(Text, PythonSpaceIsExactlyStrIsspace) {
  // Every code point for which Python 3.11's chr(c).isspace() (and re's \s) is True.
  const std::vector<char32_t> expected = {
      0x9,    0xa,    0xb,    0xc,    0xd,    0x1c,   0x1d,   0x1e,   0x1f,   0x20,
      0x85,   0xa0,   0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006,
      0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000};
  std::vector<char32_t> got;
  for (char32_t c = 0; c < 0x110000; ++c)
    if (IsPythonSpace(c)) got.push_back(c);
  EXPECT_EQ(got, expected);
}

TEST(Text, DecodesValidAndReplacesInvalidBytes) {
  EXPECT_EQ(DecodeUtf8("a\u00E9\u2423\U0001F600"),
            (std::vector<char32_t>{'a', 0xE9, 0x2423, 0x1F600}));
  // Truncated, overlong, surrogate, lone continuation: one U+FFFD per bad byte.
  EXPECT_EQ(DecodeUtf8("\xE2\x82"), (std::vector<char32_t>{0xFFFD, 0xFFFD}));
  EXPECT_EQ(DecodeUtf8("\xC0\xAF"), (std::vector<char32_t>{0xFFFD, 0xFFFD}));
  EXPECT_EQ(DecodeUtf8("\xED\xA0\x80").front(), 0xFFFDu);
  EXPECT_EQ(DecodeUtf8("\x80x"), (std::vector<char32_t>{0xFFFD, 'x'}));
  EXPECT_EQ(EncodeUtf8(0x1F600), "\U0001F600");
  EXPECT_EQ(EncodeUtf8(0xD800), "\uFFFD");
  EXPECT_EQ(Utf8Length("a\u00E9\U0001F600"), 3u);
  EXPECT_EQ(Utf8Prefix("\u00E9\u00E9\u00E9", 2), "\u00E9\u00E9");
}

TEST(Text, VisibleTokenShowsWhitespace) {
  EXPECT_EQ(VisibleToken(" "), "\u2423");
  EXPECT_EQ(VisibleToken("\n"), "\u2424");
  EXPECT_EQ(VisibleToken("\t"), "\u2409");
  EXPECT_EQ(VisibleToken("\u00A0"), "\u2423");
  EXPECT_EQ(VisibleToken(""), "\"\"");
  EXPECT_EQ(VisibleToken("cat"), "cat");
  EXPECT_EQ(VisibleToken("\x1B[31m"), "\uFFFD[31m");  // an escape never reaches a terminal
}

TEST(Text, NumbersAsTheNotebooksPrintThem) {
  EXPECT_EQ(FormatNumber(0.43f, NumberStyle::kFixed, 4), "0.4300");
  EXPECT_EQ(FormatNumber(-0.00001, NumberStyle::kFixed, 4), "-0.0000");
  EXPECT_EQ(FormatNumber(1.8111, NumberStyle::kFixed, 2), "1.81");
  EXPECT_EQ(FormatNumber(2.5e7, NumberStyle::kFixed, 4), "2.5e+07");
  EXPECT_EQ(FormatNumber(0.125, NumberStyle::kGeneral, 6), "0.125");
  EXPECT_EQ(FormatNumber(NAN, NumberStyle::kFixed), "nan");
  EXPECT_EQ(FormatNumber(-INFINITY, NumberStyle::kTick), "-inf");
  EXPECT_EQ(FormatNumber(2048, NumberStyle::kTick), "2048");
  EXPECT_EQ(FormatNumber(0.25, NumberStyle::kTick), "0.25");
  EXPECT_EQ(FormatNumber(1.0 / 3, NumberStyle::kTick), "0.333");
  EXPECT_EQ(ShortestFloat(0.43f), "0.43");
  EXPECT_EQ(ShortestFloat(1.8111e-05f), "1.8111e-05");
  // Shortest text reads back to the same float, for awkward values too.
  for (float v : {0.1f, 1.0f / 3, 3.4023e-04f, 16777217.0f, -0.0f, 1e-45f})
    EXPECT_EQ(std::strtof(ShortestFloat(v).c_str(), nullptr), v);
}

}  // namespace
}  // namespace attnlab

namespace attnlab {
namespace {

// Issue 31: a file's text quoted in a message is one line of plain text, cut with "…".
TEST(Text, MessageTextEscapesControlsAndCuts) {
  EXPECT_EQ(MessageText("\x1b[2J\x1b[31mevil\nline2"), "\\u001b[2J\\u001b[31mevil\\nline2");
  EXPECT_EQ(MessageText("a\tb\rc\x7f\xc2\x85"
                        "d\xe2\x80\xa8"),
            "a\\tb\\rc\\u007f\\u0085d\\u2028");
  EXPECT_EQ(MessageText("caf\xc3\xa9 \xe2\x90\xa3 \xff"), "caf\xc3\xa9 \xe2\x90\xa3 \xef\xbf\xbd");
  EXPECT_EQ(MessageText(std::string(60, 'x')), std::string(60, 'x'));  // fits: not cut
  EXPECT_EQ(MessageText(std::string(61, 'x')), std::string(59, 'x') + "\xe2\x80\xa6");
  EXPECT_EQ(MessageText("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 3), "\xc3\xa9\xc3\xa9\xe2\x80\xa6");
  EXPECT_EQ(MessageText(std::string(5000, '\n'), std::string_view::npos).size(), 10000u);
  EXPECT_EQ(MessageText(""), "");
}

}  // namespace
}  // namespace attnlab
