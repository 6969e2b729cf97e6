// recent_files.cpp: see recent_files.h.
#include "gui/state/recent_files.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "attnlab/base/file_io.h"
#include "gui/state/session.h"

namespace attnlab::gui {

namespace {
constexpr const char* kRecentFormat = "attention-lab/recent@1";
}  // namespace

std::string RecentFilesPath() {
  const std::string last = LastSessionPath();
  if (last.empty()) return "";
  return (std::filesystem::path(last).parent_path() / "recent.json").string();
}

std::vector<std::string> LoadRecentFiles() {
  std::vector<std::string> files;
  const std::string path = RecentFilesPath();
  std::error_code ec;
  if (path.empty() || !std::filesystem::is_regular_file(path, ec)) return files;
  try {
    const nlohmann::json j = ReadConfigJson(path);
    if (j.value("format", "") != kRecentFormat) return files;
    for (const nlohmann::json& f : j.at("files"))
      if (f.is_string() && !f.get<std::string>().empty()) files.push_back(f.get<std::string>());
  } catch (const std::exception&) {
    files.clear();  // a broken list is dropped, never shown half
  }
  if (files.size() > kRecentFiles) files.resize(kRecentFiles);
  return files;
}

std::vector<std::string> WithRecentFile(std::vector<std::string> files, const std::string& path) {
  files.erase(std::remove(files.begin(), files.end(), path), files.end());
  files.insert(files.begin(), path);
  if (files.size() > kRecentFiles) files.resize(kRecentFiles);
  return files;
}

std::string SaveRecentFiles(const std::vector<std::string>& files) {
  const std::string path = RecentFilesPath();
  if (path.empty()) return "no place for recent files: neither XDG_CONFIG_HOME nor HOME is set";
  const nlohmann::json j = {{"format", kRecentFormat}, {"files", files}};
  return WriteConfigFile(path, j.dump(2) + "\n", "recent files");
}

}  // namespace attnlab::gui
