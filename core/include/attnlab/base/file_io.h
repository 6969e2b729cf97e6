// file_io.h: reading files and writing them atomically (a crash never leaves half a file), one
// file or a set of files all or nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

struct stat;

namespace attnlab {

/// A file that could not be read or written; what() names the path and the reason.
class FileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The whole file as bytes. Only regular files (symlinks to them included) are read: a FIFO, a
/// device or a folder would block or never end, and is refused. Errors: FileError naming the
/// path and the reason ("cannot read (No such file or directory)", "not a regular file (a FIFO)").
std::string ReadFile(const std::string& path);

/// ReadFile, refusing a file larger than `max_bytes` before reading it (its size from fstat;
/// a file that grows past it while being read is refused too). Errors: FileError
/// "<path>: N bytes, more than the M (<M in MiB> MiB) <what> may have".
std::string ReadFile(const std::string& path, uint64_t max_bytes, const std::string& what);

/// A write stopped by SIGINT, SIGTERM or SIGHUP (InterruptWritesOnSignals): its temporaries
/// were removed and its targets left as they were. what(): "<path>: not written (interrupted
/// by SIGTERM)"; signal(): the signal's number (the command line exits with 128 + it).
class WriteInterrupted : public FileError {
 public:
  WriteInterrupted(const std::string& path, int signal);
  int signal() const { return signal_; }

 private:
  int signal_;
};

/// Makes SIGINT, SIGTERM and SIGHUP end a process without leaving half a file: while an
/// AtomicFileSet holds a temporary, the handler only notes the signal, and the writer, at its
/// next 64 KiB piece or step, removes its temporaries and throws WriteInterrupted; a signal
/// that comes when no temporary exists has its default effect (the process ends at once), as
/// does one noted during a Commit() once its renames are done. For the command line; the
/// window handles these signals itself (it saves the session on the way out).
void InterruptWritesOnSignals();

/// Removes the temporaries that writers killed mid-write (SIGKILL, a power cut) left in folder
/// `dir`: hidden files ".attnlab-<pid>-XXXXXX" whose process no longer runs. Done at most once
/// per folder per process (AtomicFileSet calls it for every folder it writes into; the window
/// for its settings folder at start). Never fails: what cannot be read or removed stays.
void RemoveStaleTemporaries(const std::string& dir);

/// Files written all or nothing. Add() writes each file's bytes to a temporary in the target's
/// folder (a short hidden name, ".attnlab-<pid>-XXXXXX", so a 255-byte file name still fits and
/// a temporary left by a killed writer can be recognised: RemoveStaleTemporaries); Commit()
/// renames every temporary over its target. If an Add() or the Commit() fails, or the set is
/// destroyed without a Commit() (an exception), every temporary is removed and no target is
/// touched (a rename failing half-way through Commit() removes the targets it had created).
///
/// Targets: a symlink is written through (the link stays, its target is replaced); an existing
/// file keeps its permission bits (not set-id bits; and its owner, when run as root), a new one
/// gets 0666 minus the umask; a character device or a FIFO (/dev/null, /dev/stdout, a pipe) is
/// written directly at Commit(), never replaced; a folder or any other kind of file is refused with
/// a FileError.
class AtomicFileSet {
 public:
  AtomicFileSet();
  ~AtomicFileSet();
  AtomicFileSet(const AtomicFileSet&) = delete;
  AtomicFileSet& operator=(const AtomicFileSet&) = delete;

  /// Stages `bytes` for `path`. Errors: FileError naming `path` and the reason.
  void Add(const std::string& path, const std::string& bytes);

  /// Stages the text `produce` writes to the stream it is given, in pieces (a large dump is never
  /// held whole in memory; a device or FIFO target, which has no all-or-nothing, is written at
  /// once as it comes, rather than at Commit()). An exception from
  /// `produce` removes the temporary and propagates. Errors as Add.
  void AddStream(const std::string& path, const std::function<void(std::ostream&)>& produce);

  /// Moves every staged file into place. Errors: FileError naming the path that failed.
  void Commit();

 private:
  struct Pending;
  std::vector<Pending> pending_;
  void RemoveTemporaries() noexcept;
  /// Checks `path` and opens its temporary (returns its fd), or returns -1 for a direct write
  /// (the pending entry then waits for its bytes); *old gets the target's stat if it exists.
  int Stage(const std::string& path, struct stat* old, bool* existed);
};

/// Writes `bytes` to `path` atomically (an AtomicFileSet of one file): `path` ends up with the
/// old bytes or the new ones, never half; see AtomicFileSet for symlinks, devices and modes.
/// Errors: FileError names the path and the reason.
void WriteFileAtomic(const std::string& path, const std::string& bytes);

/// The same for text written by `produce` to the stream it is given, in pieces (the dump of a
/// large scenario is never held whole in memory). An exception from `produce` removes the
/// temporary and propagates.
void WriteFileAtomic(const std::string& path, const std::function<void(std::ostream&)>& produce);

/// True when `a` and `b` name the same existing file (same device and inode, links followed).
bool SameFile(const std::string& a, const std::string& b);

}  // namespace attnlab
