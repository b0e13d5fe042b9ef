// The device both probes use: the first NVIDIA platform's first device, else the first
// platform's, with a context on it (header-only: the probes are built by hand, one file each).
#pragma once
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <string>
#include <vector>

struct ProbeDevice {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
};

inline ProbeDevice probe_device() {
  cl_uint count = 0;
  clGetPlatformIDs(0, nullptr, &count);
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);
  cl_platform_id chosen = platforms.at(0);
  for (cl_platform_id p : platforms) {
    char name[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    if (std::string(name).find("NVIDIA") != std::string::npos) chosen = p;
  }
  ProbeDevice d;
  clGetDeviceIDs(chosen, CL_DEVICE_TYPE_ALL, 1, &d.device, nullptr);
  cl_int err = CL_SUCCESS;
  d.context = clCreateContext(nullptr, 1, &d.device, nullptr, nullptr, &err);
  return d;
}
