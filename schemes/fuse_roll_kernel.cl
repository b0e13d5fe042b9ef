// The kernel of a rolling fused program (fuse_roll.cl), after every stage's app file. The host's
// text ends with
//   KPERF_ROLL_KERNEL_BEGIN
//   KPERF_ROLL_DECLARE(k)        for every stage but the last: its ring and its registers
//   KPERF_ROLL_DECLARE_LAST(N)
//   KPERF_ROLL_STEP_BEGIN
//   KPERF_ROLL_MIDDLE(k, kperf_roll_mine_<k-1>)   for every stage but the last
//   KPERF_ROLL_LAST(N, kperf_roll_mine_<N-1>)
//   KPERF_ROLL_KERNEL_END
// kperf_roll_mine_k is the calling row of work-items' part of ring k (0: the input ring). Named
// kperf_app, with kperf_app's arguments, as every app kernel.
#ifndef KPERF_FUSE_ROLL_KERNEL_CL
#define KPERF_FUSE_ROLL_KERNEL_CL

// The launch's shape again (the stages' views redefined it).
#undef RADIUS
#undef VEC
#undef PY
#define RADIUS KPERF_FUSE_HALO_0
#define VEC KPERF_FUSE_LAUNCH_VEC
#define PY KPERF_FUSE_LAUNCH_PY

// The input ring, zeroed, and where this row of work-items streams.
#define KPERF_ROLL_KERNEL_BEGIN                                                                \
  __kernel KPERF_WG_ATTR void kperf_app(KPERF_INPUT_PARAM in, __global KPERF_OUT_T* out,      \
                                        int width, int height) {                              \
    __local float kperf_roll_ring_0[WG_Y * KPERF_ROLL_IN_ELEMS] __attribute__((aligned(16)));  \
    kperf_roll_clear(kperf_roll_ring_0, WG_Y * KPERF_ROLL_IN_ELEMS);                          \
    __local float* kperf_roll_mine_0 =                                                        \
        kperf_roll_ring_0 + (int)get_local_id(1) * KPERF_ROLL_IN_ELEMS;                       \
    const int kperf_roll_y = kperf_roll_y0();                                                 \
    const bool kperf_roll_vec = kperf_roll_vector_loads(width);                               \
    float4 kperf_roll_staged[PY * KPERF_ROLL_IN_ROUNDS];

// Stage k's ring in local memory (zeroed) and its ring of row-pass values in registers (zeroed:
// the rows before a strip's first hold defined values).
#define KPERF_ROLL_DECLARE(k)                                                                 \
  __local float kperf_roll_ring_##k[WG_Y * KPERF_ROLL_INTER_ELEMS(KPERF_FUSE_HALO_##k)]       \
      __attribute__((aligned(16)));                                                           \
  kperf_roll_clear(kperf_roll_ring_##k, WG_Y * KPERF_ROLL_INTER_ELEMS(KPERF_FUSE_HALO_##k));  \
  __local float* kperf_roll_mine_##k =                                                        \
      kperf_roll_ring_##k + (int)get_local_id(1) * KPERF_ROLL_INTER_ELEMS(KPERF_FUSE_HALO_##k); \
  KPERF_ROLL_DECLARE_LAST(k)
#define KPERF_ROLL_DECLARE_LAST(k)                                                            \
  float kperf_roll_h_##k[kperf_roll_h_len_##k];                                               \
  for (int i = 0; i < kperf_roll_h_len_##k; ++i) kperf_roll_h_##k[i] = 0.0f;

// One barrier a step, then the next rows' loads issued.
#define KPERF_ROLL_STEP_BEGIN                                                                 \
  for (int s = 0; s < KPERF_ROLL_STEPS; ++s) {                                                \
    barrier(CLK_LOCAL_MEM_FENCE);                                                             \
    kperf_roll_issue(kperf_roll_staged, in, width, height, s, kperf_roll_y, kperf_roll_vec);

#define KPERF_ROLL_MIDDLE(k, source)                                                          \
  kperf_roll_middle_##k(kperf_roll_h_##k, source, kperf_roll_mine_##k, s, kperf_roll_y, width, \
                        height);

#define KPERF_ROLL_LAST(k, source)                                                            \
  kperf_roll_last_##k(kperf_roll_h_##k, source, out, s, kperf_roll_y, width, height);

// The loads committed into the input ring, read by the first stage in the next step.
#define KPERF_ROLL_KERNEL_END                                                                 \
  kperf_roll_commit(kperf_roll_staged, kperf_roll_mine_0, s, kperf_roll_y);                   \
  }                                                                                           \
  }

#endif  // KPERF_FUSE_ROLL_KERNEL_CL
