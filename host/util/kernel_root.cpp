// Finds the kernel directory relative to the binary, never the working directory.
#include "kernel_root.hpp"

#include <cstdlib>

namespace fs = std::filesystem;

namespace kperf {

fs::path executable_path() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : self;
}

fs::path executable_dir() {
  const fs::path self = executable_path();
  return self.empty() ? fs::current_path() : self.parent_path();
}

fs::path default_kernel_root() {
  const fs::path exe = executable_dir();
  for (const fs::path &candidate : {exe, exe / "..", exe / ".." / "share" / "kperf"})
    if (fs::is_directory(candidate / "kernels") && fs::is_directory(candidate / "schemes"))
      return candidate.lexically_normal();
  return exe;
}

fs::path user_cache_dir() {
  auto set = [](const char *name) {
    const char *value = std::getenv(name);
    return value && *value ? fs::path(value) : fs::path();
  };
  if (const fs::path own = set("KPERF_CACHE_DIR"); !own.empty()) return own;
  if (const fs::path xdg = set("XDG_CACHE_HOME"); !xdg.empty()) return xdg / "kperf";
  if (const fs::path home = set("HOME"); !home.empty()) return home / ".cache" / "kperf";
  return {};
}

}  // namespace kperf
