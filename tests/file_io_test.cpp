// file_io_test.cpp: atomic writes leave either the old file or the new one, never half.
#include "attnlab/file_io.h"

#include <gtest/gtest.h>

#include <filesystem>

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

}  // namespace
}  // namespace attnlab
