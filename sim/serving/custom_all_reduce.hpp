#pragma once
// vLLM's custom all-reduce (csrc/custom_all_reduce.cuh, vllm/distributed/device_communicators/
// custom_all_reduce.py): for a tensor-parallel group of 2, 4, 6 or 8 GPUs of one node that NVLink
// connects all to all, and messages under 8 MiB, vLLM reduces with its own one-shot / two-shot kernels
// over peer memory instead of NCCL (whose per-call latency dominates a decode step's small
// all-reduces). Timed by the kernels' physics with a latency and a peer-read bandwidth fitted on the
// measured latencies in calibration/data/published/custom_allreduce_latency.json (custom_all_reduce.cpp).
#include "topologies/cluster_spec.hpp"

namespace clustersim {

// vLLM's limit (CustomAllreduce's default max_size, 8192 x 1024 bytes; should_custom_ar takes sizes
// below it): at and above it NCCL's plan.
inline constexpr double kCustomAllReduceMaxBytes = 8192.0 * 1024.0;
// The largest size measured (the fit's domain). Above it, to vLLM's limit, the fitted line is an
// extrapolation at the eager test's bandwidth; vLLM keeps its kernels there because they are not
// slower than NCCL (an assumption read from its 8 MiB limit), so a replica takes the shorter of the
// line and NCCL's plan there (replica_links.cpp).
inline constexpr double kCustomAllReduceMeasuredBytes = 1048576.0;

// The two kernels: one-shot (cross_device_reduce_1stage: every GPU reads the whole buffer of each of its
// N - 1 peers and reduces) and two-shot (cross_device_reduce_2stage: a reduce-scatter then an
// all-gather, each reading (N - 1) / N of the buffer from the peers).
enum class CustomAllReduceKernel { one_shot, two_shot };

// vLLM's choice (custom_all_reduce.cuh): one-shot for 2 GPUs, for <= 4 GPUs under 512 KiB and for
// <= 8 GPUs under 256 KiB; two-shot otherwise.
CustomAllReduceKernel custom_all_reduce_kernel(int tp, double bytes);
// The bytes one GPU reads from its peers: (N - 1) x bytes one-shot, 2 (N - 1) / N x bytes two-shot.
double custom_all_reduce_peer_bytes(int tp, double bytes);

// Whether vLLM would take its custom all-reduce for `bytes` over the first `tp` GPUs of `cluster` and
// the fit applies: tp in {2, 4, 6, 8}, the GPUs on one node whose scale-up is an NVSwitch of NVLink 4
// (the generation measured: H100 / H200 SXM), bytes a positive multiple of 16 under 8 MiB (vLLM's rule).
bool custom_all_reduce_applies(const ClusterSpec& cluster, int tp, double bytes);
// Its time: the kernel's fitted latency plus its peer bytes over the fitted peer-read bandwidth.
double custom_all_reduce_s(int tp, double bytes);

}  // namespace clustersim
