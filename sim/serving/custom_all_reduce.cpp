// vLLM's custom all-reduce as physics (custom_all_reduce.hpp).
//
// The kernels (vllm-project/vllm csrc/custom_all_reduce.cuh at commit 036bb685581dbedcd6cf7fc845fe87268c7d1191,
// CustomAllreduce::allreduce; the size rule of vllm/distributed/device_communicators/custom_all_reduce.py
// at commit 00d618aab60448acdf3fac3e9c4e2e22d0c6c753, should_custom_ar: 2 GPUs or fully connected,
// size a multiple of 16 bytes and below max_size = 8192 x 1024):
//   one-shot  (cross_device_reduce_1stage; always at 2 GPUs, else under 512 KiB at <= 4 GPUs and under
//             256 KiB at <= 8): a barrier, then each GPU reads all N - 1 peers' buffers over NVLink and
//             sums them:            t = alpha_1 + (N - 1) S / B_1
//   two-shot  (cross_device_reduce_2stage): a barrier, each GPU reduces its 1/N slice from the N - 1
//             peers into its buffer, a barrier, each GPU gathers the N - 1 other reduced slices:
//                                   t = alpha_2 + 2 (N - 1) / N x S / B_2
// alpha (launch, barriers) and B (one GPU's peer-read bandwidth) per kernel are the least-squares fit
// of these lines to the 18 measured latencies (sgl-project/sglang pull request #2904, H100, tp 2, 4,
// 8, 512 B to 1 MiB; calibration/data/published/custom_allreduce_latency.json), each point assigned to
// the kernel vLLM's rule picks for it (one-shot 13 points, two-shot 5):
//   one-shot: alpha_1 = 8.718 us, B_1 = 61.31 GB/s; residual RMS 0.70 us, worst -13.1 % (tp 8, 512 B:
//             10.1 us measured, 8.78 modelled), +12.2 % (tp 4, 32 KiB)
//   two-shot: alpha_2 = 16.00 us, B_2 = 64.33 GB/s; residual RMS 0.77 us, worst +4.9 % (tp 4, 512 KiB)
// tests/cpp/serving/custom_all_reduce_test.cpp re-fits from the file and checks these figures. The
// measurements are eager launches with the input copied into the registered buffer (at HBM speed, a few
// percent of the peer reads); under a CUDA graph vLLM reduces in place, so these are upper bounds for
// graph-captured decode steps. Above 1 MiB (not measured, up to vLLM's 8 MiB) the lines are the
// kernels' physics extrapolated: the peer reads grow with the bytes at the fitted bandwidth.
#include "sim/serving/custom_all_reduce.hpp"

#include <cmath>

namespace clustersim {
namespace {

constexpr double kOneShotLatency_s = 8.7185e-6;
constexpr double kOneShotPeerBandwidth_Bps = 61.314e9;
constexpr double kTwoShotLatency_s = 16.0013e-6;
constexpr double kTwoShotPeerBandwidth_Bps = 64.330e9;
constexpr double kOneShotMaxBytesUpTo4 = 512.0 * 1024.0;  // world_size <= 4 && bytes < 512 KiB
constexpr double kOneShotMaxBytesUpTo8 = 256.0 * 1024.0;  // world_size <= 8 && bytes < 256 KiB
constexpr double kSizeMultipleBytes = 16.0;               // should_custom_ar: inp_size % 16 == 0

}  // namespace

CustomAllReduceKernel custom_all_reduce_kernel(int tp, double bytes) {
  if (tp == 2 || (tp <= 4 && bytes < kOneShotMaxBytesUpTo4) || (tp <= 8 && bytes < kOneShotMaxBytesUpTo8))
    return CustomAllReduceKernel::one_shot;
  return CustomAllReduceKernel::two_shot;
}

double custom_all_reduce_peer_bytes(int tp, double bytes) {
  const double n = tp;
  return custom_all_reduce_kernel(tp, bytes) == CustomAllReduceKernel::one_shot ? (n - 1.0) * bytes
                                                                                : 2.0 * (n - 1.0) / n * bytes;
}

bool custom_all_reduce_applies(const ClusterSpec& cluster, int tp, double bytes) {
  const bool supported = tp == 2 || tp == 4 || tp == 6 || tp == 8;
  return supported && tp <= cluster.node.gpus && cluster.node.scale_up.type == "nvswitch" &&
         cluster.node.scale_up.generation == "nvlink4" && bytes > 0.0 && bytes < kCustomAllReduceMaxBytes &&
         std::fmod(bytes, kSizeMultipleBytes) == 0.0;
}

double custom_all_reduce_s(int tp, double bytes) {
  const double peer_bytes = custom_all_reduce_peer_bytes(tp, bytes);
  if (custom_all_reduce_kernel(tp, bytes) == CustomAllReduceKernel::one_shot)
    return kOneShotLatency_s + peer_bytes / kOneShotPeerBandwidth_Bps;
  return kTwoShotLatency_s + peer_bytes / kTwoShotPeerBandwidth_Bps;
}

}  // namespace clustersim
