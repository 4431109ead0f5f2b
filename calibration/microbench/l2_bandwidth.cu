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

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv, kUsage);
  const cudaDeviceProp prop = select_device(o);
  const size_t l2 = size_t(prop.l2CacheSize);
  const CopyBuffers buffers(l2);
  void* const in = buffers.in;
  void* const out = buffers.out;
  MeasurementWriter writer("l2_bandwidth", device_json(o.device));
  for (size_t size = l2 / 16; size <= l2 / 4; size *= 2) {
    const size_t bytes = size / sizeof(float4) * sizeof(float4);
    auto call = [&] { launch_copy(in, out, bytes, prop.multiProcessorCount); };
    const int reps = repetitions_for(time_per_call_s(call, 1), o.repetitions, 0.1, 100);
    const double t = time_per_call_s(call, reps, 10);
    writer.add(copy_record(double(bytes), t, reps, ", \"library\": \"copy_kernel\", \"note\": \"working set in L2\""));
    std::fprintf(stderr, "%12zu bytes  %8.2f us  %8.1f GB/s\n", bytes, t * 1e6, 2.0 * bytes / t / 1e9);
  }
  writer.write(o.out);
  return 0;
}
