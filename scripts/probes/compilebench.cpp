// Compile-time probe: each line of JOBS is "FILE<TAB>OPTIONS"; compiles FILE's text with OPTIONS
// on the first NVIDIA device (else the first device), one program at a time, and prints the
// milliseconds of clCreateProgramWithSource and clBuildProgram. Run with CUDA_CACHE_DISABLE=1.
// With no jobs it times a process's start (its context). Not part of kperf's build:
//   g++ -O2 -o compilebench scripts/probes/compilebench.cpp -lOpenCL
// results/nvidia-h200/probes/program-costs.md has what it measured.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "probe_device.hpp"
int main(int argc, char** argv) {
  const ProbeDevice probe = probe_device();
  cl_device_id dev = probe.device;
  cl_context ctx = probe.context;
  cl_int err = CL_SUCCESS;
  std::ifstream jobs(argv[1]);
  std::string line;
  while (std::getline(jobs, line)) {
    auto tab = line.find('\t');
    std::string file = line.substr(0, tab), opts = line.substr(tab + 1);
    std::ifstream in(file);
    std::string src((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const char* s = src.c_str();
    auto t0 = std::chrono::steady_clock::now();
    cl_program prog = clCreateProgramWithSource(ctx, 1, &s, nullptr, &err);
    err = clBuildProgram(prog, 1, &dev, opts.c_str(), nullptr, nullptr);
    double ms = 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    size_t bs = 0;
    clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof bs, &bs, nullptr);
    std::printf("%8.1f ms rc %d ptx %zu  %s %s\n", ms, err, bs, file.c_str(),
                opts.substr(opts.size() > 90 ? opts.size() - 90 : 0).c_str());
    std::fflush(stdout);
    clReleaseProgram(prog);
  }
}
