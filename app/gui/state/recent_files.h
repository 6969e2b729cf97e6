// recent_files.h: File > Open Recent. The last kRecentFiles scenario files opened or saved,
// newest first, as absolute paths in $XDG_CONFIG_HOME/attention-lab/recent.json (next to the
// last session), written atomically.
#pragma once

#include <string>
#include <vector>

namespace attnlab::gui {

inline constexpr size_t kRecentFiles = 8;

/// Where the list is kept; "" when neither XDG_CONFIG_HOME nor HOME is set.
std::string RecentFilesPath();

/// The list as stored; empty when there is none or it cannot be read (never an error: a broken
/// file only loses the list).
std::vector<std::string> LoadRecentFiles();

/// `path` moved (or added) to the front of `files`, the list cut to kRecentFiles.
std::vector<std::string> WithRecentFile(std::vector<std::string> files, const std::string& path);

/// Writes the list; returns "" or what went wrong.
std::string SaveRecentFiles(const std::vector<std::string>& files);

}  // namespace attnlab::gui
