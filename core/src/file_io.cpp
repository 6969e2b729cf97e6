// file_io.cpp: see file_io.h.
#include "attnlab/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <streambuf>
#include <vector>

namespace attnlab {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError(path + ": cannot read (" + std::strerror(errno) + ")");
  std::ostringstream os;
  os << in.rdbuf();
  if (in.bad()) throw FileError(path + ": read error");
  return os.str();
}

namespace {

// A stream buffer that writes to a file descriptor; remembers the first write error.
class FdBuf : public std::streambuf {
 public:
  explicit FdBuf(int fd) : fd_(fd), buf_(1 << 16) { setp(buf_.data(), buf_.data() + buf_.size()); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (sync() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override {
    const char* p = pbase();
    size_t n = static_cast<size_t>(pptr() - pbase());
    while (n > 0 && error_ == 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) error_ = errno;
      if (w < 0) break;
      p += w;
      n -= static_cast<size_t>(w);
    }
    setp(buf_.data(), buf_.data() + buf_.size());
    return error_ == 0 ? 0 : -1;
  }

 private:
  int fd_;
  std::vector<char> buf_;
  int error_ = 0;
};

}  // namespace

void WriteFileAtomic(const std::string& path, const std::string& bytes) {
  WriteFileAtomic(path, [&bytes](std::ostream& out) {
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  });
}

void WriteFileAtomic(const std::string& path, const std::function<void(std::ostream&)>& produce) {
  std::string tmpl = path + ".tmp-XXXXXX";
  const int fd = mkstemp(tmpl.data());
  if (fd < 0) throw FileError(path + ": cannot write (" + std::strerror(errno) + ")");
  int write_errno = 0;
  try {
    FdBuf buf(fd);
    std::ostream out(&buf);
    produce(out);
    out.flush();
    write_errno = buf.error() ? buf.error() : out ? 0 : EIO;
  } catch (...) {
    ::close(fd);
    std::remove(tmpl.c_str());
    throw;
  }
  if (write_errno != 0) {
    ::close(fd);
    std::remove(tmpl.c_str());
    throw FileError(path + ": cannot write (" + std::strerror(write_errno) + ")");
  }
  // mkstemp creates 0600; a saved scenario or figure should be readable like any other file.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  const bool synced = ::fsync(fd) == 0;
  const int sync_errno = errno;
  const bool closed = ::close(fd) == 0;
  if (!synced || !closed) {
    const std::string why = std::strerror(synced ? errno : sync_errno);
    std::remove(tmpl.c_str());
    throw FileError(path + ": cannot write (" + why + ")");
  }
  if (std::rename(tmpl.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmpl.c_str());
    throw FileError(path + ": cannot write (" + why + ")");
  }
}

}  // namespace attnlab
