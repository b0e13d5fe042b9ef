// The end of one stage's part of a fused program (fuse_stage_end.cl, fuse_roll_stage.cl): the
// host's per-stage macros undefined, so that the next stage defines its own. Not include-guarded.
#undef KPERF_FUSE_STAGE
#undef KPERF_FUSE_STAGE_VEC
#undef KPERF_FUSE_STAGE_PY
#undef KPERF_FUSE_STAGE_RADIUS
#undef KPERF_FUSE_STAGE_HALO
#undef KPERF_FUSE_STAGE_IN_HALF
#undef KPERF_FUSE_STAGE_OUT_HALF
#undef KPERF_FUSE_STAGE_RECON_LI
#undef KPERF_FUSE_STAGE_ROUND
