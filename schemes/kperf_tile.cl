// kperf tile contract: geometry shared by every app kernel and every perforation scheme.
//
// A work-group of WG_X x WG_Y work-items computes WG_X x WG_Y outputs from a local tile of
// TILE_H x TILE_W floats whose element (ty, tx) stands for the global element
// (group_y * WG_Y + ty - RADIUS, group_x * WG_X + tx - RADIUS), clamped to the grid.
// The scheme file named by KPERF_SCHEME_FILE defines kperf_fill_tile(), which loads the
// elements the scheme keeps, reconstructs the others in local memory and returns after a
// barrier with every tile element valid. Every macro has a default so each file compiles alone.
#ifndef KPERF_TILE_CL
#define KPERF_TILE_CL

#ifndef WG_X
#define WG_X 16
#endif
#ifndef WG_Y
#define WG_Y 8
#endif
#ifndef RADIUS
#define RADIUS 1
#endif
#ifndef SKIP
#define SKIP 2  // rows:k / cols:k keep one line of every SKIP
#endif
#ifndef RECON_LI
#define RECON_LI 0  // 0: nearest neighbour, 1: linear interpolation
#endif
#ifndef KPERF_SCHEME_FILE
#define KPERF_SCHEME_FILE scheme_accurate.cl
#endif

#define TILE_W (WG_X + 2 * RADIUS)
#define TILE_H (WG_Y + 2 * RADIUS)
#define TILE_STRIDE TILE_W
#define TILE_ELEMS (TILE_H * TILE_STRIDE)
#define WG_SIZE (WG_X * WG_Y)
#define TILE_AT(tile, ty, tx) (tile)[(ty) * TILE_STRIDE + (tx)]

#define KPERF_WG_ATTR __attribute__((reqd_work_group_size(WG_X, WG_Y, 1)))

// Linear id of the work-item inside its group, used to stride cooperative loops.
inline int kperf_local_linear_id(void) { return (int)(get_local_id(1) * WG_X + get_local_id(0)); }

// Global coordinates of tile element (0, 0) of this work-group.
inline int kperf_tile_origin_y(void) { return (int)(get_group_id(1) * WG_Y) - RADIUS; }
inline int kperf_tile_origin_x(void) { return (int)(get_group_id(0) * WG_X) - RADIUS; }

// Clamp-to-edge read of the global input grid.
inline float kperf_load(__global const float* in, int width, int height, int gy, int gx) {
  return in[clamp(gy, 0, height - 1) * width + clamp(gx, 0, width - 1)];
}

#define KPERF_STR_(x) #x
#define KPERF_STR(x) KPERF_STR_(x)
#include KPERF_STR(KPERF_SCHEME_FILE)

// Neighbour (dy, dx) of the output whose tile element `c` points at.
#define KPERF_AT(c, dy, dx) (c)[(dy) * TILE_STRIDE + (dx)]

// The kernel of an image app: fill the tile with the selected scheme, then one output per
// work-item from point_fn(__local const float* c). Padded work-items join the barriers and
// write nothing. Every app kernel is named kperf_app so the host needs no per-app names.
#define KPERF_IMAGE_KERNEL(point_fn)                                                        \
  __kernel KPERF_WG_ATTR void kperf_app(__global const float* in, __global float* out,     \
                                        int width, int height) {                           \
    __local float tile[TILE_ELEMS];                                                        \
    kperf_fill_tile(tile, in, width, height);                                              \
    const int x = (int)get_global_id(0);                                                   \
    const int y = (int)get_global_id(1);                                                   \
    if (x < width && y < height) {                                                         \
      out[y * width + x] =                                                                 \
          point_fn(&TILE_AT(tile, (int)get_local_id(1) + RADIUS, (int)get_local_id(0) + RADIUS)); \
    }                                                                                      \
  }

#endif  // KPERF_TILE_CL
