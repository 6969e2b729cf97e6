// png.h: an 8-bit RGB image and the PNG file of it: encoding (libpng), the text chunks a
// figure's metadata travels in (iTXt, written and read back without libpng) and the print
// resolution (pHYs). Shared by every figure (figure.h), the loss plots (loss_plot.h) and export.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab {

/// An 8-bit sRGB image, rows top to bottom, 3 bytes per pixel.
struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
};

/// The most pixels a PNG figure may have: 2^27 (about 11585 x 11585, 384 MiB of RGB; cairo's
/// image surfaces stop at 32767 pixels a side). A figure this large is also past what image
/// viewers open.
inline constexpr int64_t kMaxFigurePixels = int64_t{1} << 27;

/// The message refusing an image of width x height pixels, over kMaxFigurePixels: "`what` would
/// be W x H pixels, more than the PNG limit ...", with the way out (a smaller scale, CSV or NPY).
std::string TooManyPixelsMessage(const std::string& what, int64_t width, int64_t height);

/// True when `bytes` start with the PNG signature.
bool IsPng(std::string_view bytes);

/// PNG bytes of an image (libpng, zlib level 3, Sub and Up filters). Errors:
/// std::invalid_argument for an empty image, one whose pixels do not match its size, or one over
/// kMaxFigurePixels; std::runtime_error when libpng fails to encode (never an empty result).
std::string EncodePng(const Image& image);

/// `png` with an iTXt chunk (uncompressed UTF-8 `text` under `keyword`, 1..79 Latin-1 bytes)
/// inserted before IEND, its CRC-32 computed here; `png` unchanged when text is empty.
/// Errors: std::invalid_argument when `png` does not end with an IEND chunk or the keyword is
/// not 1..79 bytes.
std::string EmbedPngText(const std::string& png, const std::string& keyword,
                         const std::string& text);

/// `png` with a pHYs chunk after IHDR saying it prints at `dpi` pixels per inch (stored, as PNG
/// requires, in pixels per metre, rounded). Errors: std::invalid_argument when `png` does not
/// start with IHDR or dpi is not in (0, 1e6).
std::string SetPngDpi(const std::string& png, double dpi);

/// The text of the first iTXt chunk keyed `keyword` in `png`, or nullopt when there is none.
/// Every chunk's length is checked against the bytes (a truncated or garbage file gives nullopt,
/// never a read past the end); CRCs are not checked.
std::optional<std::string> PngText(const std::string& png, const std::string& keyword);

}  // namespace attnlab
