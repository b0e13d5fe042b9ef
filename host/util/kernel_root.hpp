// Where the binary finds its kernels and keeps its caches: kernels/ and schemes/ beside it (the
// build copies them there), one level up (test binaries), or an installed share/kperf.
#pragma once

#include <filesystem>

namespace kperf {

// This binary (empty where /proc/self/exe is unavailable), and its directory.
std::filesystem::path executable_path();
std::filesystem::path executable_dir();
// The first of the places above that holds kernels/ and schemes/, else the binary's directory.
std::filesystem::path default_kernel_root();
// kperf's per-user cache: $KPERF_CACHE_DIR, else $XDG_CACHE_HOME/kperf, else ~/.cache/kperf; empty
// when none of them is set.
std::filesystem::path user_cache_dir();

}  // namespace kperf
