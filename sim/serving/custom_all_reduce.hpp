#pragma once
// vLLM's custom all-reduce (csrc/custom_all_reduce.cuh, vllm/distributed/device_communicators/
// custom_all_reduce.py): for a tensor-parallel group of 2, 4, 6 or 8 GPUs of one node that NVLink
// connects all to all, and messages under 8 MiB, vLLM reduces with its own one-shot / two-shot kernels
// over peer memory instead of NCCL (whose per-call latency dominates a decode step's small
// all-reduces). Timed from the measured table in calibration/data/published/custom_allreduce_latency.json
// (custom_all_reduce.cpp).
#include "topologies/cluster_spec.hpp"

namespace clustersim {

// vLLM's limit (CustomAllreduce's default max_size, 8192 x 1024 bytes), and the largest size measured:
// above it (not measured) NCCL's plan is kept.
inline constexpr double kCustomAllReduceMaxBytes = 8192.0 * 1024.0;
inline constexpr double kCustomAllReduceMeasuredBytes = 1048576.0;

// Whether vLLM would take its custom all-reduce for `bytes` over the first `tp` GPUs of `cluster` and
// the table applies: tp in {2, 4, 6, 8}, the GPUs on one node whose scale-up is an NVSwitch of NVLink 4
// (the generation measured: H100 / H200 SXM), bytes <= 1 MiB (measured; vLLM's own limit is 8 MiB).
bool custom_all_reduce_applies(const ClusterSpec& cluster, int tp, double bytes);
// Its time: the measured latency at tp (2, 4, 8; tp 6 takes tp 8's), linear between the measured
// sizes, the smallest size's below them (defined to 1 MiB, the largest measured).
double custom_all_reduce_s(int tp, double bytes);

}  // namespace clustersim
