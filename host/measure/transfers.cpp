// --transfers: a configuration timed end to end (transfers.hpp).
#include "transfers.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "device_input.hpp"
#include "storage.hpp"

namespace kperf {

namespace {

// Host memory allocated by the runtime (CL_MEM_ALLOC_HOST_PTR) and mapped once, for as long as
// the object lives.
class PinnedMemory {
 public:
  PinnedMemory(const cl::Context& context, cl::CommandQueue& queue, std::size_t bytes)
      : queue_(queue), buffer_(context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes) {
    data_ = static_cast<unsigned char*>(
        queue_.enqueueMapBuffer(buffer_, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes));
  }
  ~PinnedMemory() {
    try {
      queue_.enqueueUnmapMemObject(buffer_, data_);
      queue_.finish();
    } catch (const cl::Error&) {
    }
  }
  PinnedMemory(const PinnedMemory&) = delete;
  PinnedMemory& operator=(const PinnedMemory&) = delete;
  unsigned char* data() const { return data_; }

 private:
  cl::CommandQueue& queue_;
  cl::Buffer buffer_;
  unsigned char* data_ = nullptr;
};

}  // namespace

void time_transfers(ClEnv& env, Core& core, const BoundInput& w, const Prepared& p, int reps,
                    ResultRow& row) {
  const Variant& v = p.chain.front().variant;
  const SampleLaunches& sample = p.launches.front().sample;
  const DeviceUpload& input = *p.input;
  const AppDescriptor& app = *p.chain.front().app;
  auto& q = env.queue();
  auto& ctx = env.context();
  // An iterated app uploads into its first output buffer; a second input (power) follows.
  const bool iterated = app.traits.iterated, second = app.traits.second_input;
  const StorageType& in_type = *v.precision_info().in;
  const StorageType& out_type = *v.precision_info().out;
  const std::size_t n = static_cast<std::size_t>(w.width) * w.height;
  const std::size_t up_bytes = input.host.size();
  const std::size_t power_bytes = second ? n * in_type.bytes : 0;
  const std::size_t down_bytes = n * out_type.bytes;
  // Pinned host memory, as a GPU user would transfer from.
  const PinnedMemory pinned_up(ctx, q, up_bytes + power_bytes), pinned_down(ctx, q, down_bytes);
  unsigned char *up = pinned_up.data(), *down = pinned_down.data();

  // f32 on the device: the input already sits in pinned memory, nothing to prepare per
  // repetition. Otherwise the host packs and/or converts it there each repetition, timed.
  const bool prepares = v.host_perforate || !in_type.is_float();
  auto prepare = [&] {
    write_input(v, app.radius, w.input, up);
    if (second && !in_type.is_float())
      in_type.encode(w.power->data.data(), up + up_bytes, n);
    else if (second)
      std::memcpy(up + up_bytes, w.power->data.data(), power_bytes);
  };
  if (!prepares) prepare();
  const cl::Buffer& upload_target = iterated ? core.outputs(0).view(in_type, 0) : input.buffer;
  const cl::Buffer& final_output = p.launches.front().output;
  auto duration = [](cl::Event& ev) {
    return ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
           ev.getProfilingInfo<CL_PROFILING_COMMAND_START>();
  };
  constexpr int kWarmup = 2;
  for (int rep = -kWarmup; rep < reps; ++rep) {
    if (interrupt_requested()) throw Abandoned{};
    // The packing's yardstick: a plain memcpy of the bytes it writes, into the same memory.
    // Its floor: the grid lines it must read, read alone (no packing of them takes less).
    std::uint64_t copy_ns = 0, read_lines_ns = 0;
    std::size_t read_bytes = 0;
    if (prepares) {
      auto since = [](std::chrono::steady_clock::time_point t) {
        return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              std::chrono::steady_clock::now() - t)
                                              .count());
      };
      const auto c0 = std::chrono::steady_clock::now();
      parallel_memcpy(up, w.input.data.data(), std::min(up_bytes + power_bytes, n * sizeof(float)));
      copy_ns = since(c0);
      float sink = 0;
      const auto r0 = std::chrono::steady_clock::now();
      read_bytes = read_source_lines(v, app.radius, w.input, &sink);
      read_lines_ns = since(r0);
      volatile float keep = sink;  // the loads feed a value that is kept
      (void)keep;
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (prepares) prepare();
    const auto t1 = std::chrono::steady_clock::now();
    std::vector<cl::Event> writes(second ? 2 : 1), kernels;
    cl::Event read;
    if (v.load_path().reads_image)
      q.enqueueWriteImage(*input.image, CL_FALSE, {0, 0, 0},
                          {static_cast<std::size_t>(input.layout.width),
                           static_cast<std::size_t>(input.layout.height), 1},
                          0, 0, up, nullptr, &writes[0]);
    else
      q.enqueueWriteBuffer(upload_target, CL_FALSE, 0, up_bytes, up, nullptr, &writes[0]);
    if (second)
      q.enqueueWriteBuffer(core.power(w, in_type), CL_FALSE, 0, power_bytes, up + up_bytes, nullptr,
                           &writes[1]);
    sample.enqueue(q, &kernels);
    q.enqueueReadBuffer(final_output, CL_FALSE, 0, down_bytes, down, nullptr, &read);
    q.finish();
    if (rep < 0) continue;
    const std::uint64_t pack =
        prepares ? static_cast<std::uint64_t>(
                       std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count())
                 : 0;
    std::uint64_t write = 0, kernel = 0;
    for (auto& ev : writes) write += duration(ev);
    for (auto& ev : kernels) kernel += duration(ev);
    const std::uint64_t read_ns = duration(read);
    row.transfer_samples.write.push_back(write);
    row.transfer_samples.read.push_back(read_ns);
    row.transfer_samples.host_pack.push_back(pack);
    if (prepares) {
      row.transfer_samples.host_memcpy.push_back(copy_ns);
      row.transfer_samples.host_bytes = std::min(up_bytes + power_bytes, n * sizeof(float));
      row.transfer_samples.host_read_lines.push_back(read_lines_ns);
      row.transfer_samples.host_read_bytes = read_bytes;
    }
    row.transfer_samples.kernel.push_back(kernel);
    row.transfer_samples.end_to_end.push_back(pack + write + kernel + read_ns);
  }
}

}  // namespace kperf
