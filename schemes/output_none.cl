// Output scheme "none" (default): every output is computed and stored by its work-item.
#define KPERF_STORE(out, width, height, values) kperf_store(out, width, height, values)
