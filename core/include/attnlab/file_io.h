// file_io.h: reading files and writing them atomically (a crash never leaves half a file).
#pragma once

#include <functional>
#include <iosfwd>
#include <stdexcept>
#include <string>

namespace attnlab {

/// A file that could not be read or written; what() names the path and the reason.
class FileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The whole file as bytes. Errors: FileError naming the path ("no such file", ...).
std::string ReadFile(const std::string& path);

/// Writes `bytes` to `path` atomically: a temporary file in the same folder, flushed, then
/// renamed over `path`. On any error the temporary is removed, `path` is left as it was, and
/// FileError names the path and the reason.
void WriteFileAtomic(const std::string& path, const std::string& bytes);

/// The same for text written by `produce` to the stream it is given, in pieces (the dump of a
/// large scenario is never held whole in memory). An exception from `produce` removes the
/// temporary and propagates.
void WriteFileAtomic(const std::string& path, const std::function<void(std::ostream&)>& produce);

}  // namespace attnlab
