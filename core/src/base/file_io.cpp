// file_io.cpp: see file_io.h.
//
// [SECTION] Helpers: a staged file, signals, descriptors, paths, temporaries
// [SECTION] ReadFile
// [SECTION] Interrupted writes
// [SECTION] AtomicFileSet: stage, stream, commit
// [SECTION] WriteFileAtomic, SameFile
#include "attnlab/base/file_io.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <mutex>
#include <ostream>
#include <set>
#include <sstream>
#include <streambuf>
#include <vector>

namespace attnlab {

// ---------------------------------------------------------------------------------------------
// [SECTION] Helpers: a staged file, signals, descriptors, paths, temporaries
// ---------------------------------------------------------------------------------------------

/// One staged file: where it goes and how it gets there.
struct AtomicFileSet::Pending {
  std::string path;    // as the caller named it, for messages
  std::string target;  // `path` with symlinks followed
  std::string tmp;     // the temporary next to `target`; empty for a direct write
  std::string bytes;   // kept only for a direct write (a device or a FIFO)
  bool existed = false;
  bool renamed = false;
  bool streamed = false;  // a device or FIFO AddStream wrote at once: nothing left for Commit()
};

namespace {

std::string Reason(int err) { return std::strerror(err); }

// InterruptWritesOnSignals: the temporaries that exist (the signal handler's question) and the
// signal noted while some did. Both are lock-free, so the handler may touch them.
std::atomic<int> g_temporaries{0};
volatile std::sig_atomic_t g_interrupt = 0;
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void OnWriteSignal(int signal) {
  if (g_temporaries.load() == 0) {  // nothing half-written: end as the signal says
    ::signal(signal, SIG_DFL);
    ::raise(signal);
    return;
  }
  g_interrupt = signal;
}

// Throws WriteInterrupted when a signal was noted (the caller's unwinding removes the temporary).
void CheckInterrupt(const std::string& path) {
  if (g_interrupt != 0) throw WriteInterrupted(path, g_interrupt);
}

// After the set's temporaries are gone: a signal noted meanwhile now has its default effect.
void RaiseNotedSignal() {
  if (g_interrupt != 0 && g_temporaries.load() == 0) {
    ::signal(g_interrupt, SIG_DFL);
    ::raise(g_interrupt);
  }
}

// A stream buffer that writes to a file descriptor in 64 KiB pieces; remembers the first write
// error (the stream then fails).
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
    // A noted signal stops the writing: the stream goes bad, so what `produce` still writes
    // costs nothing, and AddStream throws WriteInterrupted once it returns. (Throwing here
    // would go through the stream's own handling, which may end in std::terminate.)
    if (g_interrupt != 0 && error_ == 0) error_ = EINTR;
    const char* p = pbase();
    size_t n = static_cast<size_t>(pptr() - pbase());
    while (n > 0 && error_ == 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        error_ = errno;
        break;
      }
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

[[noreturn]] void Fail(const std::string& path, const char* what, int err) {
  throw FileError(path + ": " + what + " (" + Reason(err) + ")");
}

const char* KindName(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string Parent(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// `path` with every symlink in its last component followed (a dangling link gives the path it
// points to, which is then created). Links in the folders are left to the kernel.
std::string FollowLinks(std::string path) {
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
    if (n < 0) return path;
    const std::string link(buf, static_cast<size_t>(n));
    path = link[0] == '/' ? link : Parent(path) + "/" + link;
  }
  throw FileError(path + ": cannot write (" + Reason(ELOOP) + ")");
}

void WriteAll(int fd, const std::string& bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    CheckInterrupt(path);
    const size_t piece = std::min<size_t>(bytes.size() - done, 1 << 16);
    const ssize_t n = ::write(fd, bytes.data() + done, piece);
    if (n < 0) {
      if (errno == EINTR) continue;
      Fail(path, "cannot write", errno);
    }
    done += static_cast<size_t>(n);
  }
}

// The permission bits a new file gets: 0666 minus the umask.
mode_t NewFileMode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

// Writes the bytes to the open temporary `fd`, gives it the mode (and owner) the target should
// have, syncs and closes it. Closes `fd` in every case.
void FillTemporary(int fd, const std::string& bytes, const struct stat* old,
                   const std::string& path) {
  try {
    WriteAll(fd, bytes, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  // mkstemp creates 0600: keep the replaced file's mode (and owner, which only root can give).
  ::fchmod(fd, old ? old->st_mode & 0777 : NewFileMode());
  if (old && ::geteuid() == 0) {
    if (::fchown(fd, old->st_uid, old->st_gid) == 0) ::fchmod(fd, old->st_mode & 0777);
  }
  try {
    CheckInterrupt(path);  // before fsync, which can take seconds for a large file
  } catch (...) {
    ::close(fd);
    throw;
  }
  const bool synced = ::fsync(fd) == 0;
  const int sync_errno = errno;
  const bool closed = ::close(fd) == 0;
  if (!synced) Fail(path, "cannot write", sync_errno);
  if (!closed) Fail(path, "cannot write", errno);
}

void WriteDirect(const std::string& target, const std::string& bytes, const std::string& path) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) Fail(path, "cannot write", errno);
  try {
    WriteAll(fd, bytes, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) Fail(path, "cannot write", errno);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] ReadFile
// ---------------------------------------------------------------------------------------------

std::string ReadFile(const std::string& path) { return ReadFile(path, UINT64_MAX, "a file"); }

std::string ReadFile(const std::string& path, uint64_t max_bytes, const std::string& what) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer before fstat can refuse it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) Fail(path, "cannot read", errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    Fail(path, "cannot read", err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw FileError(path + ": cannot read (" + KindName(st.st_mode) + ", not a regular file)");
  }
  auto too_large = [&](uint64_t size) {
    ::close(fd);
    throw FileError(path + ": " + std::to_string(size) + " bytes, more than the " +
                    std::to_string(max_bytes) + " (" + std::to_string(max_bytes >> 20) + " MiB) " +
                    what + " may have");
  };
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) too_large(size);  // refused before a byte is read
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      Fail(path, "read error", err);
    }
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) too_large(out.size());  // it grew while being read
  }
  ::close(fd);
  return out;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Interrupted writes
// ---------------------------------------------------------------------------------------------

WriteInterrupted::WriteInterrupted(const std::string& path, int signal)
    : FileError(path + ": not written (interrupted by " +
                (signal == SIGINT    ? "SIGINT"
                 : signal == SIGTERM ? "SIGTERM"
                 : signal == SIGHUP  ? "SIGHUP"
                                     : "signal " + std::to_string(signal)) +
                ")"),
      signal_(signal) {}

void InterruptWritesOnSignals() {
  struct sigaction sa {};
  sa.sa_handler = OnWriteSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &sa, nullptr);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] AtomicFileSet: stage, stream, commit
// ---------------------------------------------------------------------------------------------

AtomicFileSet::AtomicFileSet() = default;

AtomicFileSet::~AtomicFileSet() { RemoveTemporaries(); }

void RemoveStaleTemporaries(const std::string& dir) {
  static std::mutex mutex;
  static std::set<std::string> done;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (!done.insert(dir).second) return;
  }
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  const std::string prefix = ".attnlab-";
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    // ".attnlab-<pid>-XXXXXX": mkstemp's six characters after the pid's dash.
    const size_t dash = name.find('-', prefix.size());
    if (dash == std::string::npos || dash == prefix.size() || name.size() != dash + 7) continue;
    const std::string digits = name.substr(prefix.size(), dash - prefix.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::stol(digits);
    if (pid <= 0 || pid == static_cast<long>(::getpid())) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // runs, or unknown
    struct stat st;
    const std::string path = dir + "/" + name;
    if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::unlink(path.c_str());
  }
  ::closedir(d);
}

void AtomicFileSet::RemoveTemporaries() noexcept {
  for (Pending& p : pending_) {
    if (!p.tmp.empty() && !p.renamed) {
      ::unlink(p.tmp.c_str());
      --g_temporaries;
    }
  }
  pending_.clear();
}

int AtomicFileSet::Stage(const std::string& path, struct stat* st, bool* existed) {
  Pending p;
  p.path = path;
  p.target = path;
  *existed = false;
  if (::stat(path.c_str(), st) == 0) {
    if (S_ISCHR(st->st_mode) || S_ISFIFO(st->st_mode)) {
      // A device or a pipe (/dev/stdout too): written at Commit(), not replaced.
      pending_.push_back(std::move(p));
      return -1;
    }
    if (!S_ISREG(st->st_mode))
      throw FileError(path + ": cannot write (" + KindName(st->st_mode) + ", not a regular file)");
    p.existed = *existed = true;
  } else if (errno != ENOENT) {
    Fail(path, "cannot write", errno);
  }
  p.target = FollowLinks(path);  // the link stays a link: its target is replaced
  // A short name: "<target>.tmp-XXXXXX" would not fit next to a 245-byte file name. The pid
  // tells a later writer whether this temporary's writer still runs.
  RemoveStaleTemporaries(Parent(p.target));
  std::string tmpl =
      Parent(p.target) + "/.attnlab-" + std::to_string(static_cast<long>(::getpid())) + "-XXXXXX";
  ++g_temporaries;  // before it exists: a signal from here on is only noted
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) {
    const int err = errno;
    --g_temporaries;
    Fail(path, "cannot write", err);
  }
  p.tmp = tmpl;
  pending_.push_back(std::move(p));  // from here on, the destructor removes the temporary
  try {
    CheckInterrupt(path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  return fd;
}

void AtomicFileSet::Add(const std::string& path, const std::string& bytes) {
  struct stat st;
  bool existed = false;
  const int fd = Stage(path, &st, &existed);
  if (fd < 0) {
    pending_.back().bytes = bytes;
    return;
  }
  FillTemporary(fd, bytes, existed ? &st : nullptr, path);
}

namespace {

/// Runs `produce` on a stream into fd; the write error (errno), or 0. Closes fd only when
/// `produce` throws.
int StreamInto(int fd, const std::function<void(std::ostream&)>& produce) {
  try {
    FdBuf buf(fd);
    std::ostream out(&buf);
    produce(out);
    out.flush();
    return buf.error() ? buf.error() : out ? 0 : EIO;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

}  // namespace

void AtomicFileSet::AddStream(const std::string& path,
                              const std::function<void(std::ostream&)>& produce) {
  struct stat st;
  bool existed = false;
  const int fd = Stage(path, &st, &existed);
  if (fd < 0) {
    // A device or a pipe cannot be written all or nothing anyway: stream to it at once rather
    // than hold the whole text (a T = 11000 dump to /dev/null would take gigabytes).
    const int out_fd = ::open(pending_.back().target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (out_fd < 0) Fail(path, "cannot write", errno);
    int err = StreamInto(out_fd, produce);
    if (::close(out_fd) != 0 && err == 0) err = errno;
    CheckInterrupt(path);
    if (err != 0) Fail(path, "cannot write", err);
    pending_.back().streamed = true;
    return;
  }
  const int err = StreamInto(fd, produce);
  if (err != 0) {
    ::close(fd);
    CheckInterrupt(path);  // the error is the signal's: say so (the set removes the temporary)
    Fail(path, "cannot write", err);
  }
  FillTemporary(fd, std::string(), existed ? &st : nullptr, path);
}

void AtomicFileSet::Commit() {
  for (Pending& p : pending_)
    if (!p.tmp.empty()) CheckInterrupt(p.path);  // none renamed yet: all stay as they were
  for (Pending& p : pending_) {
    if (p.tmp.empty()) continue;
    if (::rename(p.tmp.c_str(), p.target.c_str()) != 0) {
      const int err = errno;
      for (Pending& q : pending_)  // undo what can be undone: the files this set created
        if (q.renamed && !q.existed) ::unlink(q.target.c_str());
      RemoveTemporaries();
      Fail(p.path, "cannot write", err);
    }
    p.renamed = true;
    --g_temporaries;
  }
  RaiseNotedSignal();  // every file is whole: a signal that came meanwhile ends the process now
  std::vector<Pending> direct;
  direct.swap(pending_);
  for (const Pending& p : direct)
    if (p.tmp.empty() && !p.streamed) WriteDirect(p.target, p.bytes, p.path);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] WriteFileAtomic, SameFile
// ---------------------------------------------------------------------------------------------

void WriteFileAtomic(const std::string& path, const std::string& bytes) {
  AtomicFileSet set;
  set.Add(path, bytes);
  set.Commit();
}

void WriteFileAtomic(const std::string& path, const std::function<void(std::ostream&)>& produce) {
  AtomicFileSet set;
  set.AddStream(path, produce);
  set.Commit();
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace attnlab
