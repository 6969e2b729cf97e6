// font.h: the figure font (DejaVu Sans, or the file $ATTNLAB_FONT names), found by fontconfig and
// shaped by pango (raster.cpp): the error when it is missing, and the text it cannot draw.
#pragma once

#include <stdexcept>
#include <string>

namespace attnlab {

/// A font could not be found or read; what() says where it looked and which package to install.
class FontError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// How many glyphs of `text` no installed font has (drawn as pango's replacement boxes): 0 for
/// any text the figures draw correctly. Errors: FontError.
int MissingGlyphs(const std::string& text);

}  // namespace attnlab
