// Device inputs by layout, and the half-image probe (device_upload.hpp).
#include "device_upload.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "storage.hpp"

namespace kperf {

namespace {

// The packed lines depend on the app's radius (packed_lines): apps of a command share an input's
// uploads (DeviceResidency).
std::string layout_key(const Variant& v, int radius) {
  return std::string(v.precision_info().in->name) +
         (v.host_perforate ? "/host:" + v.canonical() + "/r" + std::to_string(radius)
                           : std::string());
}

// Why the device cannot hold `v`'s input of `layout` as an image, or "" after making it.
std::string make_image(ClEnv& env, const Variant& v, DeviceUpload& up,
                       const std::function<const std::string&()>& half_image_problem) {
  const DeviceInfo& dev = env.info();
  if (!dev.image_support) return "device has no image support (CL_DEVICE_IMAGE_SUPPORT is false)";
  if (static_cast<std::size_t>(up.layout.width) > dev.image2d_max_width ||
      static_cast<std::size_t>(up.layout.height) > dev.image2d_max_height)
    return "input of " + std::to_string(up.layout.width) + "x" + std::to_string(up.layout.height) +
           " exceeds CL_DEVICE_IMAGE2D_MAX_WIDTH/HEIGHT " + std::to_string(dev.image2d_max_width) +
           "x" + std::to_string(dev.image2d_max_height);
  const StorageType& in = *v.precision_info().in;
  if (in.image_channel_type == CL_HALF_FLOAT && !half_image_problem().empty())
    return half_image_problem();
  try {
    up.image = cl::Image2D(env.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                           cl::ImageFormat(CL_R, in.image_channel_type),
                           static_cast<std::size_t>(up.layout.width),
                           static_cast<std::size_t>(up.layout.height), 0, up.host.data());
  } catch (const cl::Error& e) {
    return std::string("creating a CL_R image of ") + in.name + ": " + describe(e);
  }
  return "";
}

}  // namespace

DeviceUpload& device_upload(ClEnv& env, DeviceUploads& uploads, const Variant& v, int radius,
                            const Grid& input, bool upload_buffer,
                            const std::function<const std::string&()>& half_image_problem) {
  const std::string key = layout_key(v, radius);
  auto it = uploads.find(key);
  if (it == uploads.end()) {
    DeviceUpload up;
    up.layout = input_layout(v, radius, input.width, input.height);
    up.host = make_input(v, radius, input);
    it = uploads.emplace(key, std::move(up)).first;
  }
  DeviceUpload& up = it->second;
  if (upload_buffer && !up.buffer()) {  // an iterated app's bytes may be there without one
    // Kept only once written: a failed write leaves no buffer for a later pass to trust.
    cl::Buffer buffer(env.context(), CL_MEM_READ_ONLY, up.host.size());
    env.queue().enqueueWriteBuffer(buffer, CL_TRUE, 0, up.host.size(), up.host.data());
    up.buffer = buffer;
  }
  if (v.load_path().reads_image && !up.image_tried) {
    up.image_tried = true;
    up.image_problem = make_image(env, v, up, half_image_problem);
  }
  return up;
}

std::string probe_half_images(ClEnv& env, const std::string& kernel_root) {
  const float probe[8] = {1.5f,    -2.0f, 0.333251953125f, 65504.0f, 5.9604644775390625e-8f,
                          100.25f, 21.0f, 234.0f};
  std::uint16_t halves[8];
  floats_to_halves(probe, halves, 8);
  try {
    cl::Program program = env.build(
        read_file(
            (std::filesystem::path(kernel_root) / "kernels" / "probe_half_image.cl").string()),
        "-cl-std=CL1.2");
    cl::Image2D image(env.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                      cl::ImageFormat(CL_R, CL_HALF_FLOAT), 4, 2, 0, halves);
    cl::Buffer out(env.context(), CL_MEM_WRITE_ONLY, sizeof probe);
    cl::Kernel k(program, "kperf_probe_half_image");
    k.setArg(0, image);
    k.setArg(1, out);
    k.setArg(2, static_cast<cl_int>(4));
    env.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(4, 2), cl::NullRange);
    float got[8];
    env.queue().enqueueReadBuffer(out, CL_TRUE, 0, sizeof got, got);
    for (int i = 0; i < 8; ++i)
      if (std::memcmp(&got[i], &probe[i], sizeof got[i]) != 0) {
        char text[256];
        std::snprintf(text, sizeof text,
                      "the device lists CL_R/CL_HALF_FLOAT images but reads them wrong (probe "
                      "pixel %d: %.9g, expected %.9g)",
                      i, static_cast<double>(got[i]), static_cast<double>(probe[i]));
        return text;
      }
  } catch (const cl::Error& e) {
    return "probing a CL_R/CL_HALF_FLOAT image: " + describe(e);
  } catch (const BuildError& e) {
    return std::string("probing a CL_R/CL_HALF_FLOAT image: ") + e.what();
  }
  return "";
}

}  // namespace kperf
