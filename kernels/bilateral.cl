// bilateral: OpenCV bilateralFilter with d = 5 (SPEC 11): the round window dy^2 + dx^2 <= 4 (13
// taps), weights exp(-(dy^2 + dx^2) / (2 S^2)) * exp(-(I(q) - I(p))^2 / (2 C^2)), the output
// their normalised sum. Compute-heavy where the other apps are memory-bound.
//
// @name bilateral
// @radius 2
// @metric mre
// @summary 5x5 round-window bilateral filter (OpenCV semantics)
#define RADIUS 2
#include "kperf_tile.cl"

#ifndef BILATERAL_SIGMA_COLOR
#define BILATERAL_SIGMA_COLOR 25.0f
#endif
#ifndef BILATERAL_SIGMA_SPACE
#define BILATERAL_SIGMA_SPACE 2.0f
#endif
// 1: spatial weights from a table indexed by dy^2 + dx^2 (SagivTech phases 2-4; the host passes
// the entries for its sigma), 0: computed by exp() at every tap (phase 1).
#ifndef BILATERAL_TABLE
#define BILATERAL_TABLE 1
#endif
#ifndef BILATERAL_SPACE_W0  // exp(-d2 / (2 * 2^2)) for d2 = 0, 1, 2, 4
#define BILATERAL_SPACE_W0 1.0f
#define BILATERAL_SPACE_W1 0.882496903f
#define BILATERAL_SPACE_W2 0.778800783f
#define BILATERAL_SPACE_W4 0.606530660f
#endif
// Intra-window loop perforation: 2 visits every other tap in row-major order (7 of 13: the
// centre's row and column); the normalisation by the visited weights renormalises.
#ifndef KPERF_LOOP_SKIP
#define KPERF_LOOP_SKIP 1
#endif

#define BILATERAL_COLOR_COEF (0.5f / (BILATERAL_SIGMA_COLOR * BILATERAL_SIGMA_COLOR))

#if BILATERAL_TABLE
__constant float kBilateralSpace[5] = {BILATERAL_SPACE_W0, BILATERAL_SPACE_W1, BILATERAL_SPACE_W2,
                                       0.0f, BILATERAL_SPACE_W4};
#define BILATERAL_SPACE(d2) kBilateralSpace[d2]
#else
#define BILATERAL_SPACE(d2) \
  exp(-(float)(d2) * (0.5f / (BILATERAL_SIGMA_SPACE * BILATERAL_SIGMA_SPACE)))
#endif

// The window's taps in row-major order: (dy, dx, index).
#define BILATERAL_TAPS(X)                                                               \
  X(-2, 0, 0) X(-1, -1, 1) X(-1, 0, 2) X(-1, 1, 3) X(0, -2, 4) X(0, -1, 5) X(0, 0, 6) \
  X(0, 1, 7) X(0, 2, 8) X(1, -1, 9) X(1, 0, 10) X(1, 1, 11) X(2, 0, 12)

inline float bilateral_point(const float* c) {
  const float center = KPERF_AT(c, 0, 0);
  float sum = 0.0f, norm = 0.0f;
#define BILATERAL_TAP(dy, dx, index)                                                    \
  if ((index) % KPERF_LOOP_SKIP == 0) {                                                 \
    const float q = KPERF_AT(c, dy, dx), d = q - center;                                \
    const float w = BILATERAL_SPACE((dy) * (dy) + (dx) * (dx)) * exp(-d * d * BILATERAL_COLOR_COEF); \
    sum += w * q;                                                                        \
    norm += w;                                                                           \
  }
  BILATERAL_TAPS(BILATERAL_TAP)
#undef BILATERAL_TAP
  return sum / norm;
}

KPERF_IMAGE_KERNEL(bilateral_point)
