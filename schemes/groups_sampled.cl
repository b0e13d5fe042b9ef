// Work-groups "sampled": the launch computes only the
// blocks of a canary's sample (host/measure/device_canary.cpp), one group in each cell of the
// stratified lattice of canary_groups (host/model/input_canary.cpp), and every group id that the
// contract, the schemes and the app read is the sampled group's, so each block is computed as the
// whole launch computes it. A function of the contract sees no kernel argument, so the launch
// itself carries the sample: its groups along x and y are the lattice's cells, and its global
// offset holds the grid's groups along x and y and the sample's group key (canary_group_key) in
// dimensions 0, 1 and 2 (each below 2^16: PoCL 3.1 reads bits 16 and up of an offset as 0;
// DeviceCanary::launch_offset). The group of each cell is drawn as canary_groups draws it, in
// the same integers.
// Along an output scheme's axis the fused and shared fills store a block's first lines from the
// group before it; dimension 2 launches that group too (0: the sampled group, then the one above,
// the one to the left, and under center:K the diagonal), which writes the same values there.
// Every other group id and size reads as that of the whole launch.
// The device canary puts this file before the app's text (no program of a run includes it), so
// that every later use of a group id is the sampled group's; the host refuses what it cannot
// sample (DeviceCanary::problem: the pipelined tile, overlapping blocks, the separate fill) and
// says with KPERF_SAMPLED_UP / KPERF_SAMPLED_LEFT whether an output scheme's fill needs the group
// above / to the left (OUT_KY > 1 / OUT_KX > 1, which the contract defines only later).
#if !defined(KPERF_SAMPLED_UP) || !defined(KPERF_SAMPLED_LEFT)
#error "sampled groups: -DKPERF_SAMPLED_UP and -DKPERF_SAMPLED_LEFT say which neighbours to launch"
#endif

// splitmix64, as input_canary.cpp's mix().
inline ulong kperf_sample_mix(ulong x) {
  x += 0x9e3779b97f4a7c15UL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9UL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebUL;
  return x ^ (x >> 31);
}

// The grid's groups along dimension d (0 or 1) from the global offset.
inline long kperf_sampled_groups(uint d) { return (long)get_global_offset(d); }

// The group drawn in cell c of n cells over g groups, [c g / n, (c + 1) g / n), by r.
inline long kperf_sample_pick(long c, long n, long g, ulong r) {
  const long lo = c * g / n, hi = (c + 1) * g / n;
  return lo + (long)(r % (ulong)(hi - lo));
}

inline size_t kperf_sampled_group_id(uint d) {
  if (d > 1) return 0;
  const ulong key = (ulong)get_global_offset(2);
  const long cx = (long)get_group_id(0), cy = (long)get_group_id(1);
  const ulong r = kperf_sample_mix(key ^ kperf_sample_mix((ulong)(cy * (long)get_num_groups(0) + cx)));
  const int z = (int)get_group_id(2);
  long g;
  if (d == 1) {
    g = kperf_sample_pick(cy, (long)get_num_groups(1), kperf_sampled_groups(1), r >> 32);
    g -= KPERF_SAMPLED_UP ? (z & 1) : 0;
  } else {
    g = kperf_sample_pick(cx, (long)get_num_groups(0), kperf_sampled_groups(0), r & 0xffffffffUL);
    g -= KPERF_SAMPLED_LEFT ? (z >> KPERF_SAMPLED_UP) & 1 : 0;
  }
  return (size_t)max(g, 0L);  // before the first group: the group itself again
}

inline size_t kperf_sampled_num_groups(uint d) {
  return d > 1 ? (size_t)1 : (size_t)kperf_sampled_groups(d);
}

#undef get_group_id
#undef get_num_groups
#undef get_global_offset
#undef get_global_id
#undef get_global_size
#define get_group_id(d) kperf_sampled_group_id(d)
#define get_num_groups(d) kperf_sampled_num_groups(d)
#define get_global_offset(d) ((size_t)0)
#define get_global_id(d) (get_group_id(d) * get_local_size(d) + get_local_id(d))
#define get_global_size(d) (get_num_groups(d) * get_local_size(d))
