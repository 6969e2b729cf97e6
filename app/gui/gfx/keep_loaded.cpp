// keep_loaded.cpp: see keep_loaded.h.
#include "gui/gfx/keep_loaded.h"

#include <dlfcn.h>
#include <link.h>

#include <string>
#include <vector>

namespace attnlab::gui {

void KeepLoadedLibrariesMapped() {
  std::vector<std::string> paths;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        // The main program and the vDSO have no path (or not a file's): nothing to pin.
        if (info->dlpi_name && info->dlpi_name[0] == '/')
          static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
        return 0;
      },
      &paths);
  for (const std::string& path : paths) {
    // RTLD_NOLOAD: only a reference to what is loaded already (nothing new is loaded);
    // RTLD_NODELETE: that reference makes the object stay mapped until exit. The handle is
    // deliberately never closed.
    dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  }
}

}  // namespace attnlab::gui
