// launch_latency: the fixed cost of a kernel, as clustersim measurement JSON.
//
// An empty kernel launched back to back on one stream (the time per launch the GPU sees, which is what
// the model's kernel_launch_us is), and the round trip of launch + synchronize measured on the host
// (reported in the record's note: it adds the host's wake-up). Record: kernel "launch", time_s,
// repetitions.
#include "bench_common.hpp"

namespace {

using namespace clustersim_bench;

const char* kUsage =
    "usage: launch_latency [--out FILE] [--device N] [--reps N]\n\n"
    "Times an empty kernel launched back to back (default 10000 times) and writes clustersim measurement\n"
    "JSON (calibration/README.md): the fixed time every kernel pays. Feed it to `clustersim calibrate`.\n";

__global__ void empty_kernel() {}

int measure(const Options& o, const cudaDeviceProp&, MeasurementWriter& writer) {
  const int reps = o.repetitions > 0 ? o.repetitions : 10000;
  auto launch = [] { empty_kernel<<<1, 1>>>(); };
  const double back_to_back = time_per_call_s(launch, reps, 100);
  // host round trip: launch and wait, many times
  const int round_trips = reps / 10 > 10 ? reps / 10 : 10;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < round_trips; ++i) {
    launch();
    BENCH_CHECK_CUDA(cudaDeviceSynchronize());
  }
  const double round_trip = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / round_trips;
  writer.add(
      "\"kernel\": \"launch\", \"time_s\": " + number(back_to_back) + ", \"repetitions\": " + std::to_string(reps) +
      ", \"note\": " +
      json_string("back-to-back empty kernels; launch + synchronize round trip " + number(round_trip * 1e6) + " us"));
  std::fprintf(stderr, "back to back %.2f us per launch; launch + synchronize %.2f us\n", back_to_back * 1e6,
               round_trip * 1e6);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_single_gpu_benchmark(argc, argv, "launch_latency", kUsage, measure);
}
