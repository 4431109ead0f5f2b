// l2_bandwidth: copies whose working set fits in L2, back to back, as clustersim measurement JSON.
//
// Buffers of 1/16 .. 1/4 of the L2 size (input and output together at most half of it) are copied with
// the streaming copy kernel: after the first pass both stay in L2, so the time is the L2 bandwidth
// plus the launch. Each record: kernel "elementwise", role "copy", bytes = 2 x size, time_s,
// repetitions; the fit reads them as kernels whose bytes fit in L2 (the model's l2_reuse).
#include "bench_common.hpp"
#include "copy_kernel.cuh"

namespace {

using namespace clustersim_bench;

const char* kUsage =
    "usage: l2_bandwidth [--out FILE] [--device N] [--reps N]\n\n"
    "Times back-to-back copies whose input and output fit in L2 together (buffers of 1/16 .. 1/4 of the\n"
    "L2 size each) and writes clustersim measurement JSON (calibration/README.md). Feed the file to\n"
    "`clustersim calibrate` with copy_bandwidth's to fit the L2 reuse of memory-bound kernels.\n";

int measure(const Options& o, const cudaDeviceProp& prop, MeasurementWriter& writer) {
  const size_t l2 = size_t(prop.l2CacheSize);
  const CopyBuffers buffers(l2);
  void* const in = buffers.in;
  void* const out = buffers.out;
  for (size_t size = l2 / 16; size <= l2 / 4; size *= 2) {
    const size_t bytes = size / sizeof(float4) * sizeof(float4);
    auto call = [&] { launch_copy(in, out, bytes, prop.multiProcessorCount); };
    const Timing t = time_repeated(call, o.repetitions, 0.1, 100, 10);
    writer.add(copy_record(double(bytes), t.time_s, t.repetitions,
                           ", \"library\": \"copy_kernel\", \"note\": \"working set in L2\""));
    std::fprintf(stderr, "%12zu bytes  %8.2f us  %8.1f GB/s\n", bytes, t.time_s * 1e6, 2.0 * bytes / t.time_s / 1e9);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_single_gpu_benchmark(argc, argv, "l2_bandwidth", kUsage, measure);
}
