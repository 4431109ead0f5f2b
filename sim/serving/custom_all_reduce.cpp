// vLLM's custom all-reduce timed from measurements (custom_all_reduce.hpp).
//
// The table: sgl-project/sglang pull request #2904 (2025-01-15), "unit test performance in H100 (without
// cuda graph)", the rows of vLLM's custom all-reduce (copied with their source into
// calibration/data/published/custom_allreduce_latency.json; tests/cpp/serving/custom_all_reduce_test.cpp
// checks this table against that file). Eager launches with the input copied into the registered
// buffer: under a CUDA graph vLLM reduces in place, so these are upper bounds for graph-captured decode
// steps. The kernels switch from one-shot to two-shot at 512 KiB (tp <= 4) or 256 KiB (tp 8): the
// table's slope changes there, hence interpolation between the measured sizes rather than a line.
// Above 1 MiB (not measured; vLLM takes its kernels to 8 MiB) NCCL's plan is kept: the eager figures'
// slope there (59 GB/s at tp 2, copy included) would be an extrapolation slower than NCCL's bandwidth.
#include "sim/serving/custom_all_reduce.hpp"

#include <array>
#include <cstddef>

namespace clustersim {
namespace {

constexpr std::array<double, 6> kBytes{512, 4096, 32768, 262144, 524288, 1048576};
// latency in seconds at kBytes, tp 2, 4, 8
constexpr std::array<std::array<double, 6>, 3> kLatency_s{{
    {9.5e-6, 8.8e-6, 8.7e-6, 12.9e-6, 17.7e-6, 26.6e-6},
    {9.1e-6, 8.5e-6, 9.2e-6, 20.6e-6, 26.9e-6, 40.2e-6},
    {10.1e-6, 9.3e-6, 11.8e-6, 24.1e-6, 30.4e-6, 45.0e-6},
}};

std::size_t row_of(int tp) {
  return tp == 2 ? 0 : tp == 4 ? 1 : 2;  // tp 6 and 8: tp 8's row
}

}  // namespace

bool custom_all_reduce_applies(const ClusterSpec& cluster, int tp, double bytes) {
  const bool supported = tp == 2 || tp == 4 || tp == 6 || tp == 8;
  return supported && tp <= cluster.node.gpus && cluster.node.scale_up.type == "nvswitch" &&
         cluster.node.scale_up.generation == "nvlink4" && bytes > 0.0 && bytes < kCustomAllReduceMaxBytes &&
         bytes <= kCustomAllReduceMeasuredBytes;
}

double custom_all_reduce_s(int tp, double bytes) {
  const auto& t = kLatency_s[row_of(tp)];
  if (bytes <= kBytes.front()) return t.front();
  std::size_t i = 1;
  while (i + 1 < kBytes.size() && bytes > kBytes[i])
    ++i;
  const double slope = (t[i] - t[i - 1]) / (kBytes[i] - kBytes[i - 1]);
  return t[i - 1] + slope * (bytes - kBytes[i - 1]);
}

}  // namespace clustersim
