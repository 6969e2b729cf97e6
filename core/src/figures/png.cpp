// png.cpp: see png.h. Images are encoded by libpng; the chunks a figure adds afterwards (iTXt,
// pHYs) are spliced into the bytes here, each with its CRC-32.
#include "attnlab/figures/png.h"

#include <png.h>

#include <array>
#include <cmath>
#include <stdexcept>

namespace attnlab {
namespace {

void AppendPng(png_structp png, png_bytep data, png_size_t size) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), size);
}

// CRC-32 as PNG defines it (ISO 3309 polynomial, reflected, initial and final all ones).
uint32_t Crc32(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void PutU32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xFF);
}

// A PNG chunk: length, type, data, CRC-32 of type and data.
std::string Chunk(std::string_view type, const std::string& data) {
  std::string out;
  PutU32(out, static_cast<uint32_t>(data.size()));
  const std::string body = std::string(type) + data;
  out += body;
  PutU32(out, Crc32(body));
  return out;
}

uint32_t GetU32(std::string_view b, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(b[at + i]);
  return v;
}

constexpr std::string_view kPngSignature("\x89PNG\r\n\x1a\n", 8);

}  // namespace

std::string TooManyPixelsMessage(const std::string& what, int64_t width, int64_t height) {
  return what + " would be " + std::to_string(width) + " x " + std::to_string(height) +
         " pixels, more than the PNG limit of " + std::to_string(kMaxFigurePixels) +
         " pixels (about 11585 x 11585): use a smaller scale, or export CSV or NPY";
}

bool IsPng(std::string_view bytes) { return bytes.substr(0, 8) == kPngSignature; }

std::string EncodePng(const Image& image) {
  const int64_t w = image.width, h = image.height;
  if (w < 1 || h < 1 || static_cast<int64_t>(image.rgb.size()) != w * h * 3)
    throw std::invalid_argument("PNG: the image is empty or its pixels do not match its size");
  if (w * h > kMaxFigurePixels) throw std::invalid_argument(TooManyPixelsMessage("the PNG", w, h));
  // Everything libpng's longjmp could skip is made before setjmp.
  std::string out;
  std::vector<png_bytep> rows(static_cast<size_t>(h));
  for (int64_t y = 0; y < h; ++y)
    rows[y] = const_cast<png_bytep>(&image.rgb[static_cast<size_t>(y * w * 3)]);
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw std::runtime_error("PNG: libpng could not encode a " + std::to_string(w) + " x " +
                             std::to_string(h) + " image (out of memory?)");
  }
  png_set_write_fn(png, &out, AppendPng, nullptr);
  png_set_IHDR(png, info, static_cast<png_uint_32>(w), static_cast<png_uint_32>(h), 8,
               PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  // zlib level 3 with the Sub and Up filters: a T = 2048 figure (4 M pixels, mostly grid)
  // encodes in about a tenth of a second, a little larger than at level 9.
  png_set_compression_level(png, 3);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB | PNG_FILTER_UP);
  png_write_info(png, info);
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

std::string EmbedPngText(const std::string& png, const std::string& keyword,
                         const std::string& text) {
  if (text.empty()) return png;
  if (keyword.empty() || keyword.size() > 79 || keyword.find('\0') != std::string::npos)
    throw std::invalid_argument("PNG text keyword must be 1..79 bytes");
  const std::string_view iend("\0\0\0\0IEND\xae\x42\x60\x82", 12);
  if (png.size() < 20 || std::string_view(png).substr(png.size() - 12) != iend)
    throw std::invalid_argument("PNG: no IEND chunk at the end");
  std::string data = keyword;
  data += std::string("\0\0\0\0\0", 5);  // keyword end, no compression, method, no language
  data += text;                          // (and no translated keyword)
  return png.substr(0, png.size() - 12) + Chunk("iTXt", data) + std::string(iend);
}

std::string SetPngDpi(const std::string& png, double dpi) {
  const std::string_view b(png);
  if (b.substr(0, 8) != kPngSignature || b.size() < 33 || b.substr(12, 4) != "IHDR")
    throw std::invalid_argument("PNG: no IHDR chunk at the start");
  if (!(dpi > 0 && dpi < 1e6)) throw std::invalid_argument("PNG: dpi must be in (0, 1e6)");
  const uint32_t per_metre = static_cast<uint32_t>(std::lround(dpi / 0.0254));
  std::string data;
  PutU32(data, per_metre);
  PutU32(data, per_metre);
  data += '\x01';  // unit: the metre
  return png.substr(0, 33) + Chunk("pHYs", data) + png.substr(33);
}

std::optional<std::string> PngText(const std::string& png, const std::string& keyword) {
  const std::string_view b(png);
  if (b.substr(0, 8) != kPngSignature) return std::nullopt;
  for (size_t at = 8; at + 12 <= b.size();) {
    const size_t len = GetU32(b, at);
    if (len > b.size() - at - 12) return std::nullopt;  // truncated
    const std::string_view type = b.substr(at + 4, 4), data = b.substr(at + 8, len);
    if (type == "IEND") return std::nullopt;
    if (type == "iTXt" && data.size() > keyword.size() + 2 &&
        data.substr(0, keyword.size() + 1) ==
            std::string_view(keyword.c_str(), keyword.size() + 1)) {
      std::string_view rest = data.substr(keyword.size() + 1);
      if (rest[0] != 0) return std::nullopt;  // compressed: never written by Attention Lab
      rest.remove_prefix(2);
      for (int field = 0; field < 2; ++field) {  // language tag, translated keyword
        const size_t z = rest.find('\0');
        if (z == std::string_view::npos) return std::nullopt;
        rest.remove_prefix(z + 1);
      }
      return std::string(rest);
    }
    at += len + 12;
  }
  return std::nullopt;
}

}  // namespace attnlab
