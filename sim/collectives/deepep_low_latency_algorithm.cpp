// DeepEP's low-latency kernels (github.com/deepseek-ai/DeepEP, docs/legacy.md "Low-latency kernels with
// pure RDMA"; csrc/kernels/internode_ll.cu at commit ebfe47e), the decoding-time dispatch and combine:
//   - one message per token copy: a token goes to each of its top_k experts' GPUs once per expert
//     (no deduplication per node or per GPU, unlike the normal kernels, deepep_algorithm.cpp), FP8
//     dispatch messages of hidden + hidden / 128 x 4 + 16 bytes (tests/test_low_latency.py);
//   - no forwarding: the sending GPU posts every copy to its destination itself (IBGDA, GPU-initiated
//     RDMA), so every pair is direct and a copy for the GPU itself never leaves it;
//   - between GPUs of one node: the NIC in the first release (2025-02, "pure RDMA"), NVLink since
//     2025-06 (DeepEP PR #173, `allow_nvlink_for_low_latency_mode`, "leverage NVLink as much as
//     possible"). This plan takes NVLink for them (the cluster routes same-node pairs over NVLink); the
//     pure-RDMA release is the same plan on GPUs that each sit behind their own NIC (one GPU per node).
// For an all-to-all of S bytes per rank (the caller's copies, top_k per token) spread evenly over
// N = G M ranks (G per node, M nodes), per GPU:
//   RDMA out   (N - G) S / N                 NVLink out   (G - 1) S / N
// one phase, both fabrics at once, t = max(RDMA bytes / B_nic, NVLink bytes / B_nvlink) + the hop
// latency. What it changes against "direct": nothing in the bytes; it is not NCCL (never chosen by
// "auto", no NCCL protocol latency) and it ignores the routing's deduplication on purpose: a MoE
// layer's decoding dispatch named `ep=deepep_low_latency` sends every copy.
//
// Checked against both published tables on H800 (one 400 Gb/s CX7 per GPU), 128 tokens per GPU, hidden
// 7168, top-8 (calibration/data/published/deepep_low_latency.json, tests/cpp/sim/deepep_algorithm_test.cpp).
#include "sim/collectives/deepep_low_latency_algorithm.hpp"

#include "sim/collectives/direct_algorithm.hpp"

namespace clustersim {

// The transfers are the direct all-to-all's (every pair at once, pipelined when even); what differs is
// the phase's description and that "auto" never picks it (its registry entry).
CollectivePlan plan_deepep_low_latency(const CollectiveContext& ctx, const CollectiveRequest& request) {
  CollectivePlan plan = plan_direct(ctx, request);
  for (CollectivePhase& phase : plan.phases)
    phase.name = "token copies to their experts' GPUs (RDMA across nodes, NVLink inside)";
  return plan;
}

}  // namespace clustersim
