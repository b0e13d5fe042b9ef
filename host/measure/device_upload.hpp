// The input as the device receives it, made once per layout: the converted or packed bytes, their
// buffer and, for the image load path, an image (or why the device cannot have one). The runner's
// workloads and the pipeline's bound input share it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cl_env.hpp"
#include "device_input.hpp"
#include "io.hpp"
#include "schemes.hpp"

namespace kperf {

// The input as one layout of the device receives it: the payload bytes, their buffer and, for the
// image load path, an image made from them.
struct DeviceUpload {
  InputLayout layout;
  std::vector<unsigned char> host;
  cl::Buffer buffer;
  std::optional<cl::Image2D> image;
  std::string image_problem;  // why there is no image, once one was asked for
  bool image_tried = false;
};

// The uploads of one input, by layout (storage type, host packing).
using DeviceUploads = std::map<std::string, DeviceUpload>;

// The device input of variant `v` (radius `radius`) for `input`, made on first use: its bytes and,
// with `upload_buffer`, their buffer (an iterated app uploads into its own output instead). Under
// the image load path also its image, or why there is none; `half_image_problem` says why this
// device cannot read half images ("" when it can), asked only when one is needed.
DeviceUpload& device_upload(ClEnv& env, DeviceUploads& uploads, const Variant& v, int radius,
                            const Grid& input, bool upload_buffer,
                            const std::function<const std::string&()>& half_image_problem);

// Empty when the device reads CL_R / CL_HALF_FLOAT images correctly, else why not: probed with
// known values by kernels/probe_half_image.cl.
std::string probe_half_images(ClEnv& env, const std::string& kernel_root);

}  // namespace kperf
