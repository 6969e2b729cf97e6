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

namespace attnlab {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError(path + ": cannot read (" + std::strerror(errno) + ")");
  std::ostringstream os;
  os << in.rdbuf();
  if (in.bad()) throw FileError(path + ": read error");
  return os.str();
}

void WriteFileAtomic(const std::string& path, const std::string& bytes) {
  std::string tmpl = path + ".tmp-XXXXXX";
  const int fd = mkstemp(tmpl.data());
  if (fd < 0) throw FileError(path + ": cannot write (" + std::strerror(errno) + ")");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = std::strerror(errno);
      ::close(fd);
      std::remove(tmpl.c_str());
      throw FileError(path + ": cannot write (" + why + ")");
    }
    done += static_cast<size_t>(n);
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
