// copy_bandwidth: device-to-device copy times over sizes (HBM bandwidth), as clustersim measurement JSON.
//
// For each size from 1 MiB to --max-bytes (default 4 GiB, at most a quarter of the memory), two kernels:
// a streaming copy kernel (copy_kernel.cuh) and cudaMemcpyAsync device to device. Each record: kernel
// "elementwise", role "copy", bytes = 2 x size (read + write), time_s, repetitions, library.
#include "bench_common.hpp"
#include "copy_kernel.cuh"

namespace {

using namespace clustersim_bench;

const char* kUsage =
    "usage: copy_bandwidth [--out FILE] [--device N] [--max-bytes B] [--reps N]\n\n"
    "Times device-to-device copies of 1 MiB .. B bytes (default 4 GiB) with a streaming copy kernel and\n"
    "with cudaMemcpyAsync, and writes clustersim measurement JSON (calibration/README.md): the HBM\n"
    "bandwidth memory-bound kernels reach. Feed the file to `clustersim calibrate`.\n";

int measure(const Options& o, const cudaDeviceProp& prop, MeasurementWriter& writer) {
  double max_bytes = o.max_bytes > 0 ? o.max_bytes : 4.0 * (1ull << 30);
  if (max_bytes > prop.totalGlobalMem / 4.0) max_bytes = prop.totalGlobalMem / 4.0;
  const CopyBuffers buffers{static_cast<size_t>(max_bytes)};
  void* const in = buffers.in;
  void* const out = buffers.out;
  for (double size = double(1 << 20); size <= max_bytes; size *= 2.0) {
    const size_t bytes = size_t(size);
    struct Variant {
      const char* library;
      bool kernel;
    };
    for (const Variant v : {Variant{"copy_kernel", true}, Variant{"cudaMemcpyAsync", false}}) {
      auto call = [&] {
        if (v.kernel)
          launch_copy(in, out, bytes, prop.multiProcessorCount);
        else
          BENCH_CHECK_CUDA(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice));
      };
      const Timing t = time_repeated(call, o.repetitions);
      writer.add(copy_record(size, t.time_s, t.repetitions, ", \"library\": " + json_string(v.library)));
      std::fprintf(stderr, "%-16s %12.0f bytes  %10.2f us  %8.1f GB/s\n", v.library, size, t.time_s * 1e6,
                   2.0 * size / t.time_s / 1e9);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_single_gpu_benchmark(argc, argv, "copy_bandwidth", kUsage, measure);
}
