// median: 3x3 median by the Paeth / Devillard selection (opt_med9) with its first stage shared:
// each window column of three is sorted once per output row and serves the three outputs that
// cover it (and two of its rows, sorted once, serve two output rows); an output's median is then
// med3(max of the column minima, med3 of the column medians, min of the column maxima). The same
// selection as the 19 compare-exchange network with the window transposed, so it returns the
// same element, in about 18 min/max per output instead of 38 (on GPUs median is bound by min/max
// throughput). On halves, where the device has packed half min/max, two outputs share each one.
//
// @name median
// @radius 1
// @metric mre
// @summary 3x3 median filter
#define RADIUS 1
#include "kperf_tile.cl"
#include "half_pairs.cl"

// The selection runs on pairs of halves where the device has packed half min/max and a
// work-item computes an even number of outputs along x: lane 0 takes a row's outputs
// 0 .. VEC/2 - 1 and lane 1 outputs VEC/2 .. VEC - 1, so window column c of lane 0 sits beside
// column c + VEC/2 of lane 1, and every min/max serves two outputs. The stored outputs are the
// float selection's, bit for bit, in two cases:
// - every window element is a half value (half input, no interpolated input lines): packing is
//   exact and a selection returns one of its elements;
// - outputs are stored as half and go straight to the store (no output interpolation): rounding
//   to nearest even is monotone, so the median of the rounded elements is the rounded median.
// -DMEDIAN_EXPECT_PAIRS=0/1 makes a build fail where the choice differs (tests).
#if defined(KPERF_OUT_HALF) && !(OUT_LI && (OUT_KX > 1 || OUT_KY > 1))
#define MEDIAN_ROUNDING_COMMUTES 1
#else
#define MEDIAN_ROUNDING_COMMUTES 0
#endif
#if KPERF_HALF_PAIR_OPS && VEC % 2 == 0 && !KPERF_FP64_TRUTH && \
    ((defined(KPERF_IN_HALF) && !RECON_LI) || MEDIAN_ROUNDING_COMMUTES)
#define MEDIAN_PAIRS 1
#define MED_T kperf_half_pair
#define med_min kperf_pair_min
#define med_max kperf_pair_max
#define MED_VEC (VEC / 2)
#else
#define MEDIAN_PAIRS 0
#define MED_T float
#define med_min fmin
#define med_max fmax
#define MED_VEC VEC
#endif
#define MED_WIN_W (MED_VEC + 2 * RADIUS)
#if defined(MEDIAN_EXPECT_PAIRS) && MEDIAN_EXPECT_PAIRS != MEDIAN_PAIRS
#error "median: the packed-half selection is not the one expected (MEDIAN_EXPECT_PAIRS)"
#endif

inline MED_T median_med3(MED_T a, MED_T b, MED_T c) {
  return med_max(med_min(a, b), med_min(med_max(a, b), c));
}

// Output row p's column triples are window rows p..p+2; rows p+1 and p+2 form a pair that serves
// output rows p and p+1 (inserting a third element into a sorted pair takes 4 min/max, a sort of
// three 6). median_block calls this twice with the same pair; after unrolling the compiler
// computes the pair's min/max once. Where window rows repeat (kperf_window_row_id: rows:2 nn) a
// triple holds one value twice and the identities below take 3 or 4 min/max: the compiler finds
// them in float code but not through the packed ops' assembly. They hold for NaN too.
inline void median_columns(const MED_T* win, int pair_row, int other_row, MED_T* lo, MED_T* mid,
                           MED_T* hi) {
  const int pair_id = kperf_window_row_id(pair_row), other_id = kperf_window_row_id(other_row);
  const bool pair_same = pair_id == kperf_window_row_id(pair_row + 1);
  const bool other_in_pair = other_id == pair_id || other_id == kperf_window_row_id(pair_row + 1);
#pragma unroll
  for (int c = 0; c < MED_WIN_W; ++c) {
    const MED_T a = win[pair_row * MED_WIN_W + c], b = win[(pair_row + 1) * MED_WIN_W + c];
    const MED_T x = win[other_row * MED_WIN_W + c];
    if (pair_same) {  // (a, a, x)
      lo[c] = med_min(a, x);
      hi[c] = med_max(a, x);
      mid[c] = med_max(a, lo[c]);
      continue;
    }
    const MED_T s0 = med_min(a, b), s1 = med_max(a, b);
    lo[c] = other_in_pair ? s0 : med_min(s0, x);  // min(min(a, b), a) = min(a, b)
    hi[c] = other_in_pair ? s1 : med_max(s1, x);
    mid[c] = med_max(s0, med_min(s1, x));
  }
}

// Adjacent outputs v and v + 1 (v even) share window columns v + 1 and v + 2: the max of their
// minima, min of their maxima and the sorted pair of their medians are taken once for both
// (med3(a, b, c) with b <= c sorted is max(b, min(c, a))), 10 min/max per output instead of 12.
inline void median_row(const MED_T* lo, const MED_T* mid, const MED_T* hi, MED_T* result) {
#pragma unroll
  for (int v = 0; v + 1 < MED_VEC; v += 2) {
    const MED_T lo_pair = med_max(lo[v + 1], lo[v + 2]), hi_pair = med_min(hi[v + 1], hi[v + 2]);
    const MED_T mid_lo = med_min(mid[v + 1], mid[v + 2]), mid_hi = med_max(mid[v + 1], mid[v + 2]);
    result[v] = median_med3(med_max(lo[v], lo_pair), med_max(mid_lo, med_min(mid_hi, mid[v])),
                            med_min(hi[v], hi_pair));
    result[v + 1] =
        median_med3(med_max(lo_pair, lo[v + 3]), med_max(mid_lo, med_min(mid_hi, mid[v + 3])),
                    med_min(hi_pair, hi[v + 3]));
  }
#if MED_VEC % 2
  {
    const int v = MED_VEC - 1;
    const MED_T max_lo = med_max(med_max(lo[v], lo[v + 1]), lo[v + 2]);
    const MED_T min_hi = med_min(med_min(hi[v], hi[v + 1]), hi[v + 2]);
    result[v] = median_med3(max_lo, median_med3(mid[v], mid[v + 1], mid[v + 2]), min_hi);
  }
#endif
}

// The PY x MED_VEC results of a MED_WIN_W-wide window.
inline void median_select(const MED_T* win, MED_T* result) {
#pragma unroll
  for (int p = 0; p < PY; p += 2) {
    MED_T lo[MED_WIN_W], mid[MED_WIN_W], hi[MED_WIN_W];
    median_columns(win, p + 1, p, lo, mid, hi);
    median_row(lo, mid, hi, &result[p * MED_VEC]);
    if (p + 1 < PY) {
      median_columns(win, p + 1, p + 3, lo, mid, hi);
      median_row(lo, mid, hi, &result[(p + 1) * MED_VEC]);
    }
  }
}

inline void median_block(const float* win, float* result) {
#if MEDIAN_PAIRS
  MED_T pairs[KPERF_WIN_H * MED_WIN_W], selected[PY * MED_VEC];
#pragma unroll
  for (int r = 0; r < KPERF_WIN_H; ++r)
#pragma unroll
    for (int c = 0; c < MED_WIN_W; ++c)
      pairs[r * MED_WIN_W + c] =
          kperf_pair_pack(win[r * KPERF_WIN_W + c], win[r * KPERF_WIN_W + c + MED_VEC]);
  median_select(pairs, selected);
#pragma unroll
  for (int p = 0; p < PY; ++p)
#pragma unroll
    for (int v = 0; v < MED_VEC; ++v) {
      const float2 lanes = kperf_pair_unpack(selected[p * MED_VEC + v]);
      result[p * VEC + v] = lanes.x;
      result[p * VEC + v + MED_VEC] = lanes.y;
    }
#else
  median_select(win, result);
#endif
}

// Where the input and outputs are stored as halves and the global load path reads the window's
// rows wide, the pairs are packed from the stored bits and the outputs stored as bits: no
// conversion to float and back (the same elements, so the same outputs as median_block). Under
// rows:2 li a rebuilt row is the mean of two kept rows' pairs (kperf_pair_mid), the half that
// median_block's float window rounds to when it packs its pairs. Other work-items (the grid's
// edges) take median_block, so the selection is compiled twice. Measured on an H200 at 8192^2
// (f16, each at its best of 24 shapes with VEC 8): rows:2 nn 65.5 -> 62.3 us, accurate unchanged
// (78.2 us); with float outputs (f16in) it was 1-2 % slower, so f16in keeps the float window. On
// an H100, rows:2 li 79.9 -> 79.3 us (results/README).
// -DMEDIAN_STORED_BITS=0 turns it off.
#ifndef MEDIAN_STORED_BITS
#define MEDIAN_STORED_BITS 1
#endif
#if MEDIAN_STORED_BITS && MEDIAN_PAIRS && defined(KPERF_IN_HALF) && defined(KPERF_OUT_HALF) && \
    defined(KPERF_GLOBAL_BITS_ROWS) && !KPERF_LOAD_TILE && OUT_KY == 1 && OUT_KX == 1 &&      \
    !KPERF_PROBE_LOADS_ONLY
#define MEDIAN_BITS 1
#else
#define MEDIAN_BITS 0
#endif
#if defined(MEDIAN_EXPECT_BITS) && MEDIAN_EXPECT_BITS != MEDIAN_BITS
#error "median: the selection on stored bits is not the one expected (MEDIAN_EXPECT_BITS)"
#endif

#if MEDIAN_BITS
// The pair of window row r's columns c and c + MED_VEC, from their stored bits.
inline MED_T median_bits_pair(const ushort* bits, int r, int c) {
  return (uint)bits[r * KPERF_WIN_W + c] | ((uint)bits[r * KPERF_WIN_W + c + MED_VEC] << 16);
}

// Output column j's half from the selected pairs of one output row (lane j / MED_VEC).
inline uint median_output_bits(const MED_T* selected, int j) {
  const MED_T pair = selected[j % MED_VEC];
  return j < MED_VEC ? pair & 0xffffu : pair >> 16;
}

// One output row's VEC halves as one aligned store at vector index i.
inline void median_store_bits(__global KPERF_OUT_T* out, int i, const MED_T* selected) {
  uint words[VEC / 2];
#pragma unroll
  for (int k = 0; k < VEC / 2; ++k)
    words[k] =
        median_output_bits(selected, 2 * k) | (median_output_bits(selected, 2 * k + 1) << 16);
#if VEC == 8
  ((__global uint4*)out)[i] = (uint4)(words[0], words[1], words[2], words[3]);
#else
  ((__global uint2*)out)[i] = (uint2)(words[0], words[1]);
#endif
}

__kernel KPERF_WG_ATTR void kperf_app(KPERF_INPUT_PARAM in, __global KPERF_OUT_T* out, int width,
                                      int height) {
  ushort bits[KPERF_WIN_H * KPERF_WIN_W], below[KPERF_BITS_BELOW_ELEMS];
  bool mixes[KPERF_WIN_H];
  if (kperf_gather_window_bits(in, width, height, bits, below, mixes, (int)get_group_id(1),
                               (int)get_group_id(0), kperf_item_row(0), kperf_item_col(0))) {
    MED_T pairs[KPERF_WIN_H * MED_WIN_W], selected[PY * MED_VEC];
#pragma unroll
    for (int r = 0; r < KPERF_WIN_H; ++r)
#pragma unroll
      for (int c = 0; c < MED_WIN_W; ++c) {
        pairs[r * MED_WIN_W + c] = median_bits_pair(bits, r, c);
#if RECON_LI
        // rows:2 li: the mean rounded to half, as the float window's pair packing rounds it.
        const MED_T mixed = kperf_pair_mid(pairs[r * MED_WIN_W + c], median_bits_pair(below, r, c));
        pairs[r * MED_WIN_W + c] = mixes[r] ? mixed : pairs[r * MED_WIN_W + c];
#endif
      }
    median_select(pairs, selected);
    // The row lies inside the grid along x (wide rows), so each output row is one aligned store;
    // where every row lies inside along y too (most blocks), without a test per row.
    const int y0 = kperf_out_y0(), x0 = kperf_out_x0();
    const int i0 = KPERF_UDIV(y0 * width + x0, VEC), row_step = KPERF_UDIV(width, VEC);
    if (y0 + PY <= height) {
#pragma unroll
      for (int p = 0; p < PY; ++p)
        median_store_bits(out, i0 + p * row_step, &selected[p * MED_VEC]);
    } else {
#pragma unroll
      for (int p = 0; p < PY; ++p)
        if (y0 + p < height) median_store_bits(out, i0 + p * row_step, &selected[p * MED_VEC]);
    }
    return;
  }
  KPERF_BODY(median_block, in, out, width, height);
}
#else
KPERF_IMAGE_KERNEL_BLOCK(median_block)
#endif
