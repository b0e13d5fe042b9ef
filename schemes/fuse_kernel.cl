// The kernel of a fused program (fuse_contract.cl), after every stage's app file: the host's text
// ends with KPERF_FUSE_KERNEL_BEGIN, KPERF_FUSE_MIDDLE(k, source) for every stage but the last
// (the first reading kperf_fuse_tile, each later one the region before it, kperf_fuse_inter_K),
// then KPERF_FUSE_LAST(N, source). Named kperf_app, with kperf_app's arguments, as every app kernel.
#ifndef KPERF_FUSE_KERNEL_CL
#define KPERF_FUSE_KERNEL_CL

// The launch's shape again (the stages' views redefined it).
#undef RADIUS
#undef VEC
#undef PY
#define RADIUS KPERF_FUSE_HALO_0
#define VEC KPERF_FUSE_LAUNCH_VEC
#define PY KPERF_FUSE_LAUNCH_PY

// The tile of the first stage's input, filled under its input scheme (ending with a barrier).
#define KPERF_FUSE_KERNEL_BEGIN                                                                \
  __kernel KPERF_WG_ATTR void kperf_app(KPERF_INPUT_PARAM in, __global KPERF_OUT_T* out,      \
                                        int width, int height) {                              \
    __local float kperf_fuse_tile[kperf_fuse_tile_elems] __attribute__((aligned(16)));        \
    kperf_fuse_clear_padding(kperf_fuse_tile, width);                                         \
    kperf_fill_tile(kperf_fuse_tile, in, width, height);

// Stage k's outputs over the block and its halo, from `source` into kperf_fuse_inter_k.
#define KPERF_FUSE_MIDDLE(k, source)                                                          \
  __local float kperf_fuse_inter_##k[KPERF_FUSE_INTER_H(KPERF_FUSE_HALO_##k) *               \
                                     KPERF_FUSE_INTER_STRIDE(KPERF_FUSE_HALO_##k)]            \
      __attribute__((aligned(16)));                                                           \
  kperf_fuse_step_##k(source, kperf_fuse_inter_##k, width, height);

// The last stage: each work-item's PY x VEC outputs, stored as every app kernel stores them.
#define KPERF_FUSE_LAST(k, source)                                                            \
  {                                                                                           \
    float result[PY * VEC];                                                                   \
    kperf_fuse_compute_##k(source, (int)get_local_id(1) * PY, (int)get_local_id(0) * VEC,     \
                           true, result);                                                     \
    kperf_store_at(out, width, height, kperf_out_y0(), kperf_out_x0(), result);               \
  }                                                                                           \
  }

#endif  // KPERF_FUSE_KERNEL_CL
