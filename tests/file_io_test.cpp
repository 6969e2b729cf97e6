// file_io_test.cpp: atomic writes leave either the old file or the new one, never half.
#include "attnlab/base/file_io.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

namespace attnlab {
namespace {

namespace fs = std::filesystem;

TEST(WriteFileAtomic, ReplacesTheFileAndLeavesNoTemporary) {
  const fs::path dir = fs::temp_directory_path() / "attnlab_file_io_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "out.json").string();
  WriteFileAtomic(path, "first");
  WriteFileAtomic(path, "second");
  EXPECT_EQ(ReadFile(path), "second");
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
  fs::remove_all(dir);
}

TEST(WriteFileAtomic, UnwritablePathIsAClearErrorAndCreatesNothing) {
  const std::string path = "/nonexistent-dir/attnlab/out.json";
  try {
    WriteFileAtomic(path, "x");
    FAIL() << "wrote to " << path;
  } catch (const FileError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": cannot write (No such file or directory)");
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(ReadFile, MissingFileNamesThePath) {
  try {
    ReadFile("/nonexistent/scenario.json");
    FAIL();
  } catch (const FileError& e) {
    EXPECT_EQ(std::string(e.what()),
              "/nonexistent/scenario.json: cannot read (No such file or directory)");
  }
}

// A fresh folder per test (ctest -j runs tests side by side).
class FileIo : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("attnlab_file_io_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  // Every entry of the folder, temporaries (hidden files) included.
  std::vector<std::string> Entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }
  fs::path dir_;
};

TEST_F(FileIo, ReadingAFifoIsRefusedAtOnceInsteadOfWaitingForAWriter) {
  ASSERT_EQ(mkfifo(Path("in.json").c_str(), 0600), 0);
  auto read = std::async(std::launch::async, [&] {
    try {
      ReadFile(Path("in.json"));
      return std::string("read it");
    } catch (const FileError& e) {
      return std::string(e.what());
    }
  });
  ASSERT_EQ(read.wait_for(std::chrono::seconds(5)), std::future_status::ready) << "ReadFile hangs";
  EXPECT_EQ(read.get(), Path("in.json") + ": cannot read (a FIFO, not a regular file)");
}

TEST_F(FileIo, ReadingAFolderOrADeviceIsRefused) {
  try {
    ReadFile(dir_.string());
    FAIL();
  } catch (const FileError& e) {
    EXPECT_EQ(std::string(e.what()),
              dir_.string() + ": cannot read (a folder, not a regular file)");
  }
  EXPECT_THROW(ReadFile("/dev/zero"), FileError);  // would never end
}

TEST_F(FileIo, AFifoTargetIsWrittenThroughNotReplaced) {
  ASSERT_EQ(mkfifo(Path("out.json").c_str(), 0600), 0);
  auto reader = std::async(std::launch::async, [&] {
    std::ifstream in(Path("out.json"), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  });
  WriteFileAtomic(Path("out.json"), "through the pipe");
  ASSERT_EQ(reader.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(reader.get(), "through the pipe");
  EXPECT_TRUE(fs::is_fifo(Path("out.json")));
  EXPECT_EQ(Entries(), std::vector<std::string>{"out.json"});
}

// A stream to a FIFO (or a device) goes out as it is produced: the reader has the first 256 KiB
// before the producer ends. Collecting it first held a T = 11000 dump (gigabytes) in memory.
TEST_F(FileIo, AStreamToAFifoIsNotHeldInMemory) {
  ASSERT_EQ(mkfifo(Path("out.json").c_str(), 0600), 0);
  std::atomic<size_t> received{0};
  auto reader = std::async(std::launch::async, [&] {
    std::ifstream in(Path("out.json"), std::ios::binary);
    char chunk[4096];
    while (in.read(chunk, sizeof chunk) || in.gcount() > 0) received += in.gcount();
    return received.load();
  });
  bool arrived_before_the_end = false;
  WriteFileAtomic(Path("out.json"), [&](std::ostream& out) {
    out << std::string(256 << 10, 'x');
    out.flush();
    for (int i = 0; i < 1000 && received == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    arrived_before_the_end = received > 0;
    out << "end";
  });
  ASSERT_EQ(reader.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_TRUE(arrived_before_the_end);
  EXPECT_EQ(reader.get(), (256u << 10) + 3);
}

TEST_F(FileIo, ACharacterDeviceTargetIsWrittenNotReplaced) {
  if (geteuid() != 0) GTEST_SKIP() << "making a device node needs root";
  ASSERT_EQ(mknod(Path("null").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);  // like /dev/null
  WriteFileAtomic(Path("null"), "gone");
  EXPECT_TRUE(fs::is_character_file(Path("null")));
  EXPECT_EQ(Entries(), std::vector<std::string>{"null"});
  // The real /dev/null too; put it back if this ever replaces it.
  WriteFileAtomic("/dev/null", "gone");
  const bool still_device = fs::is_character_file("/dev/null");
  if (!still_device) {
    fs::remove("/dev/null");
    mknod("/dev/null", S_IFCHR | 0666, makedev(1, 3));
    chmod("/dev/null", 0666);
  }
  EXPECT_TRUE(still_device);
}

TEST_F(FileIo, ALongFileNameThatFitsTheFolderCanBeWritten) {
  const std::string name = std::string(250, 'a') + ".json";  // 255 bytes, the most ext4 allows
  WriteFileAtomic(Path(name), "long");
  EXPECT_EQ(ReadFile(Path(name)), "long");
  EXPECT_EQ(Entries(), std::vector<std::string>{name});
}

TEST_F(FileIo, OverwritingKeepsTheModeAndTheOwner) {
  WriteFileAtomic(Path("secret.json"), "first");
  ASSERT_EQ(chmod(Path("secret.json").c_str(), 0600), 0);
  const bool root = geteuid() == 0;
  if (root) {
    ASSERT_EQ(chown(Path("secret.json").c_str(), 1234, 5678), 0);
  }
  WriteFileAtomic(Path("secret.json"), "second");
  struct stat st;
  ASSERT_EQ(stat(Path("secret.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  if (root) {
    EXPECT_EQ(st.st_uid, 1234u);
    EXPECT_EQ(st.st_gid, 5678u);
  }
  EXPECT_EQ(ReadFile(Path("secret.json")), "second");
}

TEST_F(FileIo, ASymlinkIsWrittenThroughAndStaysALink) {
  fs::create_directories(dir_ / "real");
  WriteFileAtomic(Path("real/s.json"), "old");
  fs::create_symlink("real/s.json", dir_ / "link.json");
  WriteFileAtomic(Path("link.json"), "new");
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.json"));
  EXPECT_EQ(ReadFile(Path("real/s.json")), "new");
  EXPECT_EQ(Entries(), (std::vector<std::string>{"link.json", "real"}));
  // A dangling link creates the file it points to.
  fs::create_symlink("real/t.json", dir_ / "dangling.json");
  WriteFileAtomic(Path("dangling.json"), "made");
  EXPECT_TRUE(fs::is_symlink(dir_ / "dangling.json"));
  EXPECT_EQ(ReadFile(Path("real/t.json")), "made");
}

TEST_F(FileIo, AFolderTargetIsRefusedAndLeavesNoTemporary) {
  fs::create_directories(dir_ / "out.json");
  try {
    WriteFileAtomic(Path("out.json"), "x");
    FAIL();
  } catch (const FileError& e) {
    EXPECT_EQ(std::string(e.what()),
              Path("out.json") + ": cannot write (a folder, not a regular file)");
  }
  EXPECT_EQ(Entries(), std::vector<std::string>{"out.json"});
}

TEST_F(FileIo, AFileSetIsAllOrNothing) {
  WriteFileAtomic(Path("b.txt"), "old b");
  fs::create_directories(dir_ / "c.txt");  // cannot be written
  {
    AtomicFileSet set;
    set.Add(Path("a.txt"), "new a");
    set.Add(Path("b.txt"), "new b");
    EXPECT_THROW(set.Add(Path("c.txt"), "new c"), FileError);
  }  // destroyed without Commit: every temporary goes
  EXPECT_EQ(Entries(), (std::vector<std::string>{"b.txt", "c.txt"}));
  EXPECT_EQ(ReadFile(Path("b.txt")), "old b");
  AtomicFileSet set;
  set.Add(Path("a.txt"), "new a");
  set.Add(Path("b.txt"), "new b");
  EXPECT_EQ(Entries().size(), 4u);  // b.txt, c.txt and two temporaries; no a.txt yet
  set.Commit();
  EXPECT_EQ(Entries(), (std::vector<std::string>{"a.txt", "b.txt", "c.txt"}));
  EXPECT_EQ(ReadFile(Path("a.txt")), "new a");
  EXPECT_EQ(ReadFile(Path("b.txt")), "new b");
}

// A writer killed between writing its temporary and renaming it (SIGKILL) leaves
// ".attnlab-<pid>-XXXXXX"; the next write into that folder removes it, and only it: a running
// writer's temporary, files of other names and temporaries without a pid stay.
TEST_F(FileIo, TemporariesOfKilledWritersAreRemovedByTheNextWrite) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    AtomicFileSet set;
    set.Add(Path("big.json"), std::string(1 << 20, 'x'));
    ::raise(SIGKILL);  // before Commit(): the temporary stays behind
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  const std::string left_prefix = ".attnlab-" + std::to_string(child) + "-";
  std::vector<std::string> before = Entries();
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].rfind(left_prefix, 0), 0u) << before[0];
  EXPECT_EQ(before[0].size(), left_prefix.size() + 6);
  const std::string alive = ".attnlab-" + std::to_string(getppid()) + "-abcdef";
  for (const std::string& name : {alive, std::string(".attnlab-abcdef"), std::string("notes.txt")})
    std::ofstream(Path(name)) << "keep";
  WriteFileAtomic(Path("out.json"), "{}");
  std::vector<std::string> want = {alive, ".attnlab-abcdef", "notes.txt", "out.json"};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(Entries(), want);
}

}  // namespace
}  // namespace attnlab
