// NVIDIA NPP's filters that match kperf's apps, timed with CUDA events on the same card
// (scripts/peers/npp_peers.py builds and runs it, and turns its lines into rows).
//
//   npp_peers --warmup N --reps N --outputs DIR [--input W H FILE.npy TIMED CHECKED]...
//
// Prints one tab-separated line per fact, never JSON (the Python side writes the documents):
//   version KEY VALUE
//   row LIBRARY APP FUNCTION BORDER REGION W H STATUS REASON SAMPLES_NS(comma-separated)
//   check LIBRARY APP FUNCTION REGION W H STATUS REASON OUTPUT_FILE
// A function that fails is a row with its status and NPP's or CUDA's words; the rest go on.
#include <cuda_runtime.h>
#include <npp.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#ifndef KPERF_NPP_MEDIAN_BORDER
#define KPERF_NPP_MEDIAN_BORDER 1  // nppiFilterMedianBorder (NPP 12.x and later); 0 without
#endif

namespace {

struct Input {
  int w = 0, h = 0;
  std::string path;
  bool timed = false, checked = false;
};

struct Options {
  int warmup = 10, reps = 50;
  std::string outputs;
  std::vector<Input> inputs;
};

// What one launch of a function does: "" on success, else why it failed.
using Launch = std::function<std::string(const float* in, float* out, int w, int h)>;

// The name is shared with the launch, which may change how it runs (and so its name).
struct Function {
  const char* library;
  const char* app;
  std::shared_ptr<std::string> name;
  const char* border;
  const char* region;
  Launch launch;
};

Function make_function(const char* library, const char* app, const std::string& name,
                       const char* border, const char* region, Launch launch) {
  return {library, app, std::make_shared<std::string>(name), border, region, std::move(launch)};
}

std::string clean(std::string s) {
  for (char& c : s)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return s.empty() ? "-" : s;
}

std::string npp_error(const char* what, NppStatus st) {
  return st < 0 ? std::string(what) + " returned NppStatus " + std::to_string(st) : "";
}

std::string cuda_error(const char* what, cudaError_t err) {
  return err == cudaSuccess ? ""
                            : std::string(what) + ": " + cudaGetErrorName(err) + " (" +
                                  cudaGetErrorString(err) + ")";
}

// ------------------------------------------------------------------ .npy files

bool read_npy(const std::string& path, int w, int h, std::vector<float>& out, std::string& why) {
  std::ifstream f(path, std::ios::binary);
  char magic[8];
  if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    why = path + ": not a .npy file";
    return false;
  }
  unsigned len = 0;
  unsigned char b[4] = {0, 0, 0, 0};
  const int width = magic[6] == 1 ? 2 : 4;
  f.read(reinterpret_cast<char*>(b), width);
  for (int i = width - 1; i >= 0; --i) len = len * 256 + b[i];
  std::string header(len, ' ');
  f.read(&header[0], len);
  const std::string shape = "(" + std::to_string(h) + ", " + std::to_string(w) + ")";
  if (header.find("'<f4'") == std::string::npos || header.find("False") == std::string::npos ||
      header.find(shape) == std::string::npos) {
    why = path + ": expected a C-order float32 array of shape " + shape + ", header " + header;
    return false;
  }
  out.resize(static_cast<size_t>(w) * h);
  if (!f.read(reinterpret_cast<char*>(out.data()), out.size() * sizeof(float))) {
    why = path + ": truncated";
    return false;
  }
  return true;
}

bool write_npy(const std::string& path, int w, int h, const std::vector<float>& data) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(h) +
                       ", " + std::to_string(w) + "), }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  const unsigned char len[2] = {static_cast<unsigned char>(header.size() & 255),
                                static_cast<unsigned char>(header.size() >> 8)};
  f.write("\x93NUMPY\x01\x00", 8);
  f.write(reinterpret_cast<const char*>(len), 2);
  f << header;
  f.write(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(float));
  return static_cast<bool>(f);
}

// ------------------------------------------------------------------ NPP's functions

NppStreamContext stream_context() {
  NppStreamContext ctx;
  std::memset(&ctx, 0, sizeof ctx);  // fields a later NPP adds stay zero
  cudaDeviceProp p;
  cudaGetDevice(&ctx.nCudaDeviceId);
  cudaGetDeviceProperties(&p, ctx.nCudaDeviceId);
  ctx.hStream = 0;
  ctx.nMultiProcessorCount = p.multiProcessorCount;
  ctx.nMaxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
  ctx.nMaxThreadsPerBlock = p.maxThreadsPerBlock;
  ctx.nSharedMemPerBlock = p.sharedMemPerBlock;
  ctx.nCudaDevAttrComputeCapabilityMajor = p.major;
  ctx.nCudaDevAttrComputeCapabilityMinor = p.minor;
  return ctx;
}

// Filter taps in managed memory: NPP's documents do not say for every function whether its
// coefficients live on the host or the device, and managed memory is both.
const float* managed_taps(const std::vector<float>& taps) {
  float* p = nullptr;
  if (cudaMallocManaged(&p, taps.size() * sizeof(float)) != cudaSuccess) return nullptr;
  std::memcpy(p, taps.data(), taps.size() * sizeof(float));
  cudaDeviceSynchronize();
  return p;
}

std::vector<float> binomial(int taps) {
  return taps == 3 ? std::vector<float>{0.25f, 0.5f, 0.25f}
                   : std::vector<float>{1 / 16.f, 4 / 16.f, 6 / 16.f, 4 / 16.f, 1 / 16.f};
}

std::vector<float> outer(const std::vector<float>& a) {
  std::vector<float> k;
  for (float y : a)
    for (float x : a) k.push_back(y * x);
  return k;
}

// A scratch buffer NPP asks for, asked once per grid size so that no host work falls between a
// timed launch's events.
struct Scratch {
  Npp8u* p = nullptr;
  size_t bytes = 0;
  int w = 0, h = 0;
  bool sized(int width, int height) const { return w == width && h == height; }
  std::string reserve(size_t need, int width, int height) {
    w = width;
    h = height;
    if (need <= bytes) return "";
    if (p) cudaFree(p);
    p = nullptr;
    bytes = 0;
    const std::string why = cuda_error("cudaMalloc (scratch)", cudaMalloc(&p, need));
    if (why.empty()) bytes = need;
    return why;
  }
};

// The size query's output type is NPP's (Npp32u in some versions, size_t in others).
template <typename R, typename A, typename B, typename N, typename... Rest, typename... Args>
std::string query_size(R (*fn)(A, B, N*, Rest...), size_t& need, A a, B b, Args... args) {
  N n = 0;
  const std::string why = npp_error("buffer size query", fn(a, b, &n, args...));
  need = static_cast<size_t>(n);
  return why;
}

void gauss_functions(std::vector<Function>& fns, NppStreamContext ctx) {
  const NppiPoint zero = {0, 0};
  for (int taps : {3, 5}) {
    const char* app = taps == 3 ? "gaussian3" : "gaussian5";
    const NppiMaskSize mask = taps == 3 ? NPP_MASK_SIZE_3_X_3 : NPP_MASK_SIZE_5_X_5;
    fns.push_back(make_function(
        "NPP", app, std::string("nppiFilterGaussBorder ") + (taps == 3 ? "3x3" : "5x5"),
        "replicate", "all", [=](const float* in, float* out, int w, int h) {
          const NppiSize size = {w, h};
          return npp_error(
              "nppiFilterGaussBorder_32f_C1R_Ctx",
              nppiFilterGaussBorder_32f_C1R_Ctx(in, w * 4, size, zero, out, w * 4, size, mask,
                                                NPP_BORDER_REPLICATE, ctx));
        }));
    const float* row = managed_taps(binomial(taps));
    fns.push_back(make_function("NPP", app, "nppiFilterGaussAdvancedBorder binomial taps",
                                "replicate", "all", [=](const float* in, float* out, int w, int h) {
                                  if (!row)
                                    return std::string("cudaMallocManaged failed for the taps");
                                  const NppiSize size = {w, h};
                                  return npp_error("nppiFilterGaussAdvancedBorder_32f_C1R_Ctx",
                                                   nppiFilterGaussAdvancedBorder_32f_C1R_Ctx(
                                                       in, w * 4, size, zero, out, w * 4, size,
                                                       taps, row, NPP_BORDER_REPLICATE, ctx));
                                }));
    const float* square = managed_taps(outer(binomial(taps)));
    fns.push_back(make_function("NPP", app, "nppiFilterBorder 2-D binomial weights", "replicate",
                                "all", [=](const float* in, float* out, int w, int h) {
                                  if (!square)
                                    return std::string("cudaMallocManaged failed for the weights");
                                  const NppiSize size = {w, h}, ksize = {taps, taps};
                                  const NppiPoint anchor = {taps / 2, taps / 2};
                                  return npp_error(
                                      "nppiFilterBorder_32f_C1R_Ctx",
                                      nppiFilterBorder_32f_C1R_Ctx(
                                          in, w * 4, size, zero, out, w * 4, size, square, ksize,
                                          anchor, NPP_BORDER_REPLICATE, ctx));
                                }));
  }
}

// The magnitude alone (null gradient and angle images); where NPP refuses null destinations, the
// x and y gradients are written too, and the function's name says so.
void sobel_function(std::vector<Function>& fns, NppStreamContext ctx) {
  struct State {
    bool with_xy = false;
    float *gx = nullptr, *gy = nullptr;
    size_t cap = 0;
  };
  auto st = std::make_shared<State>();
  Function fn = make_function("NPP", "sobel3", "nppiGradientVectorSobelBorder 3x3 L2 magnitude",
                              "replicate", "all", nullptr);
  std::shared_ptr<std::string> name = fn.name;
  fn.launch = [=](const float* in, float* out, int w, int h) {
    const NppiSize size = {w, h};
    const NppiPoint zero = {0, 0};
    const size_t need = static_cast<size_t>(w) * h;
    if (st->with_xy && st->cap < need) {
      cudaFree(st->gx);
      cudaFree(st->gy);
      st->gx = st->gy = nullptr;
      st->cap = 0;
      std::string why = cuda_error("cudaMalloc", cudaMalloc(&st->gx, need * 4));
      if (why.empty()) why = cuda_error("cudaMalloc", cudaMalloc(&st->gy, need * 4));
      if (!why.empty()) return why;
      st->cap = need;
    }
    const NppStatus s = nppiGradientVectorSobelBorder_32f_C1R_Ctx(
        in, w * 4, size, zero, st->gx, st->gx ? w * 4 : 0, st->gy, st->gy ? w * 4 : 0, out, w * 4,
        nullptr, 0, size, NPP_MASK_SIZE_3_X_3, nppiNormL2, NPP_BORDER_REPLICATE, ctx);
    if (s < 0 && !st->with_xy) {
      st->with_xy = true;
      *name += " (NPP refused null gradients: x and y written too)";
      return std::string("retry");
    }
    return npp_error("nppiGradientVectorSobelBorder_32f_C1R_Ctx", s);
  };
  fns.push_back(fn);
}

void median_functions(std::vector<Function>& fns, NppStreamContext ctx) {
  const NppiSize mask = {3, 3};
  const NppiPoint anchor = {1, 1};
#if KPERF_NPP_MEDIAN_BORDER
  auto border_scratch = std::make_shared<Scratch>();
  fns.push_back(make_function("NPP", "median", "nppiFilterMedianBorder 3x3", "replicate", "all",
                              [=](const float* in, float* out, int w, int h) {
                                const NppiSize size = {w, h};
                                const NppiPoint zero = {0, 0};
                                Scratch& s = *border_scratch;
                                if (!s.sized(w, h)) {
                                  size_t need = 0;
                                  std::string why =
                                      query_size(nppiFilterMedianBorderGetBufferSize_32f_C1R_Ctx,
                                                 need, size, mask, NPP_BORDER_REPLICATE, ctx);
                                  if (why.empty()) why = s.reserve(need, w, h);
                                  if (!why.empty()) return why;
                                }
                                return npp_error("nppiFilterMedianBorder_32f_C1R_Ctx",
                                                 nppiFilterMedianBorder_32f_C1R_Ctx(
                                                     in, w * 4, size, zero, out, w * 4, size, mask,
                                                     anchor, s.p, NPP_BORDER_REPLICATE, ctx));
                              }));
#endif
  // Without border control NPP reads the mask's whole footprint: the interior alone, the frame
  // of one element left as it was.
  auto scratch = std::make_shared<Scratch>();
  fns.push_back(make_function(
      "NPP", "median", "nppiFilterMedian 3x3 (interior)", "none", "interior",
      [=](const float* in, float* out, int w, int h) {
        const NppiSize roi = {w - 2, h - 2};
        Scratch& s = *scratch;
        if (!s.sized(w, h)) {
          size_t need = 0;
          std::string why =
              query_size(nppiFilterMedianGetBufferSize_32f_C1R_Ctx, need, roi, mask, ctx);
          if (why.empty()) why = s.reserve(need, w, h);
          if (!why.empty()) return why;
        }
        return npp_error("nppiFilterMedian_32f_C1R_Ctx",
                         nppiFilterMedian_32f_C1R_Ctx(in + w + 1, w * 4, out + w + 1, w * 4, roi,
                                                      mask, anchor, s.p, ctx));
      }));
}

std::vector<Function> functions() {
  const NppStreamContext ctx = stream_context();
  std::vector<Function> fns;
  fns.push_back(make_function("CUDA", "copy", "cudaMemcpy device to device", "-", "all",
                              [](const float* in, float* out, int w, int h) {
                                return cuda_error(
                                    "cudaMemcpyAsync",
                                    cudaMemcpyAsync(out, in, static_cast<size_t>(w) * h * 4,
                                                    cudaMemcpyDeviceToDevice, 0));
                              }));
  gauss_functions(fns, ctx);
  sobel_function(fns, ctx);
  median_functions(fns, ctx);
  return fns;
}

// ------------------------------------------------------------------ timing and lines

// Spins for `cycles` clock cycles. Launched before each timed launch, it holds the GPU while the
// host makes its NPP call, so that the events time the device's work alone, as kperf's profiling
// events do (NVIDIA's NVBench holds the GPU with a blocking kernel for the same reason).
__global__ void hold(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}
const long long kHoldCycles = 2000000;  // about 1 ms
bool g_hold = false;                    // set where the hold kernel runs here

// Whether the hold kernel launches and finishes here (its PTX may not JIT for this GPU): where
// it does not, launches are timed without it, and the version lines say so.
std::string probe_hold() {
  hold<<<1, 1>>>(1000);
  std::string why = cuda_error("hold kernel", cudaGetLastError());
  if (why.empty()) why = cuda_error("hold kernel", cudaDeviceSynchronize());
  g_hold = why.empty();
  return g_hold ? "a spinning kernel" : "none: " + why;
}

std::string finish(std::string why) {
  if (why.empty()) why = cuda_error("after the launch", cudaStreamSynchronize(0));
  if (why.empty()) why = cuda_error("after the launch", cudaGetLastError());
  return why;
}

// One launch, retried once where the function changed how it runs ("retry").
std::string launch_once(Function& fn, const float* in, float* out, int w, int h) {
  std::string why = fn.launch(in, out, w, h);
  if (why == "retry") why = fn.launch(in, out, w, h);
  return finish(why);
}

std::string time_function(Function& fn, const float* in, float* out, int w, int h,
                          const Options& opt, std::vector<double>& samples) {
  cudaEvent_t start, stop;
  std::string why = cuda_error("cudaEventCreate", cudaEventCreate(&start));
  if (why.empty()) why = cuda_error("cudaEventCreate", cudaEventCreate(&stop));
  for (int i = 0; why.empty() && i < opt.warmup; ++i) why = fn.launch(in, out, w, h);
  why = finish(why);
  for (int i = 0; why.empty() && i < opt.reps; ++i) {
    if (g_hold) hold<<<1, 1>>>(kHoldCycles);
    cudaEventRecord(start, 0);
    why = fn.launch(in, out, w, h);
    cudaEventRecord(stop, 0);
    if (why.empty()) why = cuda_error("cudaEventSynchronize", cudaEventSynchronize(stop));
    float ms = 0;
    if (why.empty())
      why = cuda_error("cudaEventElapsedTime", cudaEventElapsedTime(&ms, start, stop));
    samples.push_back(ms * 1e6);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return finish(why);
}

void print_row(const Function& fn, int w, int h, const std::string& why,
               const std::vector<double>& samples) {
  std::ostringstream s;
  for (size_t i = 0; i < samples.size() && why.empty(); ++i)
    s << (i ? "," : "") << static_cast<long long>(samples[i] + 0.5);
  std::printf("row\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", fn.library, fn.app,
              clean(*fn.name).c_str(), fn.border, fn.region, w, h, why.empty() ? "ok" : "failed",
              clean(why).c_str(), clean(s.str()).c_str());
  std::fflush(stdout);
}

// The output of one launch into a poisoned (NaN) buffer, saved for scripts/peers/merge.py.
void check_function(Function& fn, const float* in, float* out, const Input& input,
                    const Options& opt, std::string why) {
  const size_t n = static_cast<size_t>(input.w) * input.h;
  std::vector<float> host(why.empty() ? n : 0, std::nanf(""));
  if (why.empty())
    why = cuda_error("cudaMemcpy", cudaMemcpy(out, host.data(), n * 4, cudaMemcpyHostToDevice));
  if (why.empty()) why = launch_once(fn, in, out, input.w, input.h);
  if (why.empty())
    why = cuda_error("cudaMemcpy", cudaMemcpy(host.data(), out, n * 4, cudaMemcpyDeviceToHost));
  std::string safe;
  for (char c : *fn.name) safe += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  const std::string size = std::to_string(input.w) + "x" + std::to_string(input.h);
  const std::string rel = std::string(fn.library) + "/" + fn.app + "." + safe + "." + size + ".npy";
  if (why.empty() && !write_npy(opt.outputs + "/" + rel, input.w, input.h, host))
    why = "cannot write " + opt.outputs + "/" + rel;
  std::printf("check\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", fn.library, fn.app,
              clean(*fn.name).c_str(), fn.region, input.w, input.h, why.empty() ? "ok" : "failed",
              clean(why).c_str(), rel.c_str());
  std::fflush(stdout);
}

void run_input(std::vector<Function>& fns, const Input& input, const Options& opt) {
  std::vector<float> host;
  std::string why;
  float *in = nullptr, *out = nullptr;
  const size_t bytes = static_cast<size_t>(input.w) * input.h * 4;
  if (read_npy(input.path, input.w, input.h, host, why)) {
    why = cuda_error("cudaMalloc", cudaMalloc(&in, bytes));
    if (why.empty()) why = cuda_error("cudaMalloc", cudaMalloc(&out, bytes));
    if (why.empty())
      why = cuda_error("cudaMemcpy", cudaMemcpy(in, host.data(), bytes, cudaMemcpyHostToDevice));
  }
  for (Function& fn : fns) {
    if (fn.app == std::string("copy") && !input.timed) continue;
    if (input.checked && fn.app != std::string("copy"))
      check_function(fn, in, out, input, opt, why);
    if (!input.timed) continue;
    std::vector<double> samples;
    std::string failed = why;
    if (failed.empty()) failed = launch_once(fn, in, out, input.w, input.h);
    if (failed.empty()) failed = time_function(fn, in, out, input.w, input.h, opt, samples);
    print_row(fn, input.w, input.h, failed, samples);
  }
  cudaFree(in);
  cudaFree(out);
}

bool parse(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--warmup" && i + 1 < argc) {
      opt.warmup = std::atoi(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      opt.reps = std::atoi(argv[++i]);
    } else if (a == "--outputs" && i + 1 < argc) {
      opt.outputs = argv[++i];
    } else if (a == "--input" && i + 5 < argc) {
      Input in;
      in.w = std::atoi(argv[i + 1]);
      in.h = std::atoi(argv[i + 2]);
      in.path = argv[i + 3];
      in.timed = std::string(argv[i + 4]) == "1";
      in.checked = std::string(argv[i + 5]) == "1";
      i += 5;
      if (in.w < 3 || in.h < 3) return false;
      opt.inputs.push_back(in);
    } else {
      return false;
    }
  }
  return opt.reps > 0 && opt.warmup >= 0 && !opt.outputs.empty() && !opt.inputs.empty();
}

void print_versions() {
  const NppLibraryVersion* v = nppGetLibVersion();
  int runtime = 0, driver = 0, dev = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  cudaDeviceProp p;
  cudaGetDevice(&dev);
  cudaGetDeviceProperties(&p, dev);
  std::printf("version\tnpp\t%d.%d.%d\n", v->major, v->minor, v->build);
  std::printf("version\tcuda_runtime\t%d.%d\n", runtime / 1000, (runtime % 1000) / 10);
  std::printf("version\tcuda_driver\t%d.%d\n", driver / 1000, (driver % 1000) / 10);
  std::printf("version\tdevice\t%s\n", clean(p.name).c_str());
  std::printf("version\tmedian_border\t%d\n", KPERF_NPP_MEDIAN_BORDER);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!parse(argc, argv, opt)) {
    std::fprintf(stderr,
                 "usage: npp_peers --warmup N --reps N --outputs DIR "
                 "[--input W H FILE.npy TIMED(0|1) CHECKED(0|1)]...\n");
    return 2;
  }
  const std::string why = cuda_error("cudaFree(0)", cudaFree(0));
  if (!why.empty()) {
    std::fprintf(stderr, "npp_peers: no CUDA device: %s\n", why.c_str());
    return 3;
  }
  print_versions();
  std::printf("version\thold\t%s\n", clean(probe_hold()).c_str());
  std::vector<Function> fns = functions();
  for (const Input& input : opt.inputs) run_input(fns, input, opt);
  return 0;
}
