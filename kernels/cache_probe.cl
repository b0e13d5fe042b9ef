// cache_probe: reads a buffer `passes` times in one launch, so that the launch's own cost
// vanishes and what the device's last-level cache holds is read at that cache's speed. Each pass
// starts `shift` elements further on (modulo the buffer), so that a work-item never reads what it
// read before and a per-core cache (NVIDIA's L1) cannot serve a later pass: only a cache that all
// cores share can. The sum is written so that no load can be dropped. Timed by
// host/measure/cache_probe.cpp.
__kernel void read_passes(__global const float4* in, __global float* out, int n4, int passes,
                          int shift) {
  const int gid = (int)get_global_id(0), items = (int)get_global_size(0);
  float4 acc = (float4)(0.0f);
  int offset = 0;
  for (int p = 0; p < passes; ++p) {
    for (int j = gid; j < n4; j += items) {
      int i = j + offset;
      if (i >= n4) i -= n4;
      acc += in[i];
    }
    offset += shift;
    if (offset >= n4) offset -= n4;
  }
  out[gid] = acc.x + acc.y + acc.z + acc.w;
}
