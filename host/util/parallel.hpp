// Splitting independent rows of host work (references, metrics) across the machine's cores.
#pragma once

#include <algorithm>
#include <thread>
#include <vector>

namespace kperf {

// Threads for host-side loops: the hardware's, capped at 16.
inline int host_threads() {
  return static_cast<int>(std::max(1u, std::min(16u, std::thread::hardware_concurrency())));
}

// Threads for a loop over `elements` independent elements: one below 2^16, where a thread costs
// more than it saves.
inline int host_threads_for(long elements) { return elements < (1L << 16) ? 1 : host_threads(); }

// Runs body(chunk, begin, end) over [0, n) split into `chunks` contiguous ranges, one thread
// each; chunk boundaries depend only on n and chunks, so per-chunk partial results merged in
// chunk order are reproducible.
template <typename Body>
void parallel_chunks(long n, int chunks, Body body) {
  chunks = static_cast<int>(std::max(1L, std::min<long>(chunks, n)));
  if (chunks == 1) {
    body(0, 0L, n);
    return;
  }
  std::vector<std::thread> pool;
  const long size = (n + chunks - 1) / chunks;
  for (int c = 0; c < chunks; ++c) {
    const long begin = c * size, end = std::min(n, begin + size);
    if (begin < end) pool.emplace_back(body, c, begin, end);
  }
  for (auto& t : pool) t.join();
}

}  // namespace kperf
