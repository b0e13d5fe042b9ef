// Load-time probe: builds from binary every file of DIR in [BEGIN, END) (a kperf binary cache) on
// the first NVIDIA device (else the first device) and prints the wall time per program. OPTS (build
// options), THREADS (loading threads), ALLOC_GB (device memory filled first) and SRCOBJ (a source
// program object made beside each) vary the conditions. Not part of kperf's build:
//   g++ -O2 -o loadbench scripts/probes/loadbench.cpp -lOpenCL -pthread
// results/nvidia-h200/probes/program-costs.md has what it measured.
#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "probe_device.hpp"
int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: loadbench DIR BEGIN END\n");
    return 2;
  }
  std::string dir = argv[1];
  long begin = std::atol(argv[2]), end = std::atol(argv[3]);
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  for (dirent* e; (e = readdir(d));)
    if (e->d_name[0] != '.') files.push_back(dir + "/" + e->d_name);
  closedir(d);
  std::sort(files.begin(), files.end());
  end = std::min<long>(end, files.size());
  const ProbeDevice probe = probe_device();
  cl_device_id dev = probe.device;
  cl_context ctx = probe.context;
  cl_int err = CL_SUCCESS;
  const char* opts = std::getenv("OPTS") ? std::getenv("OPTS") : "";
  int threads = std::getenv("THREADS") ? std::atoi(std::getenv("THREADS")) : 1;
  double alloc_gb = std::getenv("ALLOC_GB") ? std::atof(std::getenv("ALLOC_GB")) : 0;
  bool srcobj = std::getenv("SRCOBJ") != nullptr;
  std::vector<cl_mem> mems;
  for (double g = 0; g < alloc_gb; g += 0.5) {
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 512ul << 20, nullptr, &err);
    if (err == CL_SUCCESS) mems.push_back(m);
  }
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, nullptr, &err);
  for (auto m : mems) {
    float z = 0;
    clEnqueueFillBuffer(q, m, &z, 4, 0, 512ul << 20, 0, nullptr, nullptr);
  }
  clFinish(q);
  auto t0 = std::chrono::steady_clock::now();
  std::atomic<long> ok{0}, kernels{0}, bytes{0}, next{begin};
  auto work = [&] {
    for (long i = next++; i < end; i = next++) {
      std::ifstream in(files[i], std::ios::binary);
      std::vector<unsigned char> b((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
      const unsigned char* ptr = b.data();
      size_t len = b.size();
      cl_int st, e2;
      bytes += len;
      if (srcobj) {
        const char* src = "__kernel void k(){}";
        cl_program sp = clCreateProgramWithSource(ctx, 1, &src, nullptr, &e2);
        clReleaseProgram(sp);
      }
      cl_program prog = clCreateProgramWithBinary(ctx, 1, &dev, &len, &ptr, &st, &e2);
      if (e2 != CL_SUCCESS) {
        std::fprintf(stderr, "create %s: %d\n", files[i].c_str(), e2);
        continue;
      }
      e2 = clBuildProgram(prog, 1, &dev, opts, nullptr, nullptr);
      if (e2 != CL_SUCCESS) {
        size_t ls = 0;
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &ls);
        std::string log(ls, 0);
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, ls, &log[0], nullptr);
        std::fprintf(stderr, "build %s: %d %s\n", files[i].c_str(), e2, log.substr(0, 300).c_str());
        clReleaseProgram(prog);
        continue;
      }
      cl_uint nk = 0;
      clCreateKernelsInProgram(prog, 0, nullptr, &nk);
      kernels += nk;
      ++ok;
    }
  };
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) ts.emplace_back(work);
  for (auto& t : ts) t.join();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "files %ld ok %ld kernels %ld bytes %ld wall_s %.3f ms_per_program %.2f ms_per_kernel %.2f\n",
      end - begin, ok.load(), kernels.load(), bytes.load(), s, 1e3 * s / std::max(1L, ok.load()),
      1e3 * s / std::max(1L, kernels.load()));
  return 0;
}
