// Disaggregated prefill / decode pools (DistServe, Splitwise): the KV bytes moved are the closed form,
// a one-request timeline worked by hand, the transfer over the fabric, the spec's keys and errors.
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "serving_test_support.hpp"
#include "sim/serving/kv_transfer.hpp"
#include "sim/serving/serving_engine.hpp"
#include "topologies/cluster_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {
namespace {

using testing::LinearIterationModel;
using testing::test_serving_spec;

// A transfer of latency_s + bytes / bandwidth_Bps, whatever the replicas.
class LinearTransfer final : public KvTransfer {
 public:
  LinearTransfer(double latency_s, double bandwidth_Bps) : latency_s_(latency_s), bandwidth_Bps_(bandwidth_Bps) {}
  double transfer_s(int, int, double bytes) const override { return latency_s_ + bytes / bandwidth_Bps_; }

 private:
  double latency_s_, bandwidth_Bps_;
};

// A model of 2 layers, 2 KV heads of dimension 4 (hidden 16 over 4 heads): per token in bf16
// 2 (K, V) x 2 layers x 2 heads x 4 x 2 bytes = 64 bytes.
ServingSpec tiny_disaggregated(const char* scheduler, int prefill_replicas, int decode_replicas) {
  ServingSpec s = test_serving_spec(scheduler, 1000, 8, 16);
  s.model.layers = 2;
  s.model.hidden = 16;
  s.model.heads = 4;
  s.model.kv_heads = 2;
  s.prefill_pool.replicas = prefill_replicas;
  s.replicas = decode_replicas;
  return s;
}

TEST(DisaggregatedServing, KvBytesPerTokenIsTheClosedForm) {
  // Llama-2-70B: 2 x 80 layers x 8 KV heads x 128 x 2 bytes (bf16) = 327,680 bytes per token; fp8 half.
  EXPECT_EQ(kv_cache_bytes_per_token(testing::llama2(true), ServingDtype::bf16, 128), 327680.0);
  EXPECT_EQ(kv_cache_bytes_per_token(testing::llama2(true), ServingDtype::fp8, 128), 163840.0);
  // Llama-2-7B (MHA): 2 x 32 x 32 x 128 x 2 = 524,288.
  EXPECT_EQ(kv_cache_bytes_per_token(testing::llama2(false), ServingDtype::bf16, 128), 524288.0);
  EXPECT_EQ(kv_cache_bytes_per_token(tiny_disaggregated("continuous", 1, 1).model, ServingDtype::bf16, 128), 64.0);
  // DeepSeek-V3's multi-head latent attention caches the latent and the rotary key: 61 layers x (512 +
  // 64) x 2 bytes = 70,272 bytes per token, 1/7.5 of Llama-2-70B's with twice the layers' width.
  const ModelSpec deepseek = load_workload_spec("deepseek-v3").model;
  EXPECT_EQ(kv_cache_bytes_per_token(deepseek, ServingDtype::bf16, 128), 70272.0);
  EXPECT_EQ(kv_cache_bytes_per_token(deepseek, ServingDtype::fp8, 128), 35136.0);
}

// One request, arrival 1 s, prompt 100, output 3; prefill model 10 ms + 1 ms per token, decode model
// 20 ms per iteration; transfer 5 ms + bytes / 1 GB/s.
//   1.000: prefill of 100 tokens on prefill replica 0: 10 + 100 ms -> 1.110, first token (TTFT 0.110).
//   1.110: 100 x 64 = 6,400 bytes move: 5 ms + 6.4 us = 5.0064 ms -> 1.1150064 at decode replica 1.
//   1.1150064: admitted (its prompt computed): one token, 20 ms -> 1.1350064, token 2 (gap 25.0064 ms).
//   1.1350064: one token, 20 ms -> 1.1550064, token 3: finished (E2E 155.0064 ms).
TEST(DisaggregatedServing, OneRequestTimelineByHand) {
  for (const char* scheduler : {"continuous", "chunked_prefill", "inflight", "static"}) {
    SCOPED_TRACE(scheduler);
    const LinearIterationModel prefill(0.010, 0.001, 1000);
    const LinearIterationModel decode(0.020, 0.0, 1000);
    const LinearTransfer transfer(0.005, 1e9);
    const std::vector<RequestArrival> one = {{1.0, 100, 3}};
    const ServingResult r =
        run_serving(tiny_disaggregated(scheduler, 1, 1), ServingModels{decode, &prefill, &transfer}, one);
    ASSERT_EQ(r.summary.finished, 1);
    const ServedRequest& q = r.requests[0];
    EXPECT_NEAR(q.first_token_s, 1.110, 1e-12);
    EXPECT_NEAR(q.finish_s, 1.1550064, 1e-12);
    EXPECT_NEAR(q.tbt_max_s, 0.0250064, 1e-12);
    EXPECT_NEAR(q.tbt_sum_s, 0.0450064, 1e-12);
    EXPECT_EQ(q.replica, 1);  // the decode pool's first replica (the prefill pool is replica 0)
    EXPECT_EQ(r.kv_transfers.transfers, 1);
    EXPECT_EQ(r.kv_transfers.bytes, 6400.0);
    EXPECT_NEAR(r.kv_transfers.max_s, 0.0050064, 1e-15);
    EXPECT_EQ(r.summary.iterations, 3);
    // Busy GPU-seconds over GPU-seconds: (110 + 20 + 20 ms) / (2 GPUs x 1.1550064 s).
    EXPECT_NEAR(r.summary.gpu_busy_fraction, 0.150 / (2 * 1.1550064), 1e-12);
  }
}

// Conservation: over a Poisson run every request that needs more than its first token moves exactly
// prompt x 64 bytes, once; one-token requests move nothing; every request finishes; same bytes twice.
TEST(DisaggregatedServing, MovesExactlyTheClosedFormBytes) {
  TrafficSpec t;
  t.rate_rps = 50;
  t.requests = 2000;
  t.seed = 7;
  t.prompt = {"uniform", 0.0, 0.0, 1, 900};
  t.output = {"uniform", 0.0, 0.0, 1, 40};
  const std::vector<RequestArrival> arrivals = make_traffic(t);
  const LinearIterationModel prefill(0.004, 0.00002, 4000);  // tight KV: the prefill pool waits for moves
  const LinearIterationModel decode(0.008, 0.00001, 6000);
  const LinearTransfer transfer(0.002, 2e8);
  const ServingSpec spec = tiny_disaggregated("chunked_prefill", 2, 3);
  const ServingResult r = run_serving(spec, ServingModels{decode, &prefill, &transfer}, arrivals);
  std::int64_t moved = 0;
  double bytes = 0.0;
  for (const RequestArrival& a : arrivals)
    if (a.output_tokens > 1) {
      ++moved;
      bytes += 64.0 * a.prompt_tokens;
    }
  EXPECT_EQ(r.summary.finished, 2000);
  EXPECT_EQ(r.kv_transfers.transfers, moved);
  EXPECT_EQ(r.kv_transfers.bytes, bytes);
  for (const ServedRequest& q : r.requests) {
    if (q.output_tokens > 1) {
      EXPECT_GE(q.replica, 2) << "decoded in the decode pool";
    }
  }
  const ServingResult again = run_serving(spec, ServingModels{decode, &prefill, &transfer}, arrivals);
  EXPECT_EQ(again.summary.e2e.p99_s, r.summary.e2e.p99_s);
  EXPECT_EQ(again.summary.tbt_p99_s, r.summary.tbt_p99_s);
}

// Over the DGX H100 SuperPOD's fabric: NVLink 450 GB/s per direction inside a node, one 400 Gb/s
// (50 GB/s) NIC per GPU across nodes. The time is affine in the bytes; 1 GB from GPU 0 to GPU 1 (same
// node) takes at least 1 / 450 s, to GPU 8 (next node) at least 1 / 50 s.
TEST(DisaggregatedServing, TransferOverTheFabric) {
  const ClusterSpec pod = load_cluster_spec("dgx-h100-superpod");
  const auto near = make_fabric_kv_transfer(pod, {1, 1, 1}, {7, 1, 1});  // GPU 0 -> GPUs 1..7
  const auto far = make_fabric_kv_transfer(pod, {8, 1, 1}, {1, 1, 1});   // GPUs 0..7 -> GPU 8
  const double nvlink = near->transfer_s(0, 0, 1e9);
  const double nic = far->transfer_s(0, 0, 1e9);
  EXPECT_GE(nvlink, 1e9 / 450e9);
  EXPECT_GE(nic, 1e9 / 50e9);
  EXPECT_LT(nvlink * 4, nic);
  EXPECT_NEAR(nic - far->transfer_s(0, 0, 0.5e9), far->transfer_s(0, 0, 1.5e9) - nic,
              1e-12);  // affine: each half gigabyte takes the same time
  std::printf("1 GB: NVLink %.6f s, NIC %.6f s\n", nvlink, nic);
  // tp 8 -> tp 8 across nodes: 64 flows over 8 NICs a side carry an eighth of the bytes each.
  const auto wide = make_fabric_kv_transfer(pod, {1, 8, 1}, {1, 8, 1});
  const double wide_s = wide->transfer_s(0, 0, 1e9);
  std::printf("1 GB tp 8 -> tp 8 across nodes: %.6f s\n", wide_s);
  // Measured 2026-11-27: NVLink 2.893 ms (346 GB/s), NIC 21.078 ms (47.4 GB/s), tp 8 -> tp 8 2.659 ms: an
  // eighth of the NIC time within 2 % (the cross-rail flows take the spine: a longer route's latency).
  EXPECT_GE(wide_s, 1e9 / 8 / 50e9);
  EXPECT_NEAR(wide_s * 8, nic, 0.02 * nic);
  // Too many GPUs: refused naming the cluster's nodes.
  const SpecError e = testing::spec_error_of([&] { make_fabric_kv_transfer(pod, {200, 1, 1}, {100, 1, 1}); });
  EXPECT_EQ(e.json_path(), "/nodes");
}

TEST(DisaggregatedServing, SpecKeys) {
  const std::string traffic =
      R"("traffic": {"rate_rps": 2, "duration_s": 10, "prompt": {"mean": 100}, "output": {"mean": 10}})";
  const ServingSpec s = parse_serving_spec(
      R"({"model": "llama2-7b", "replica": {"tp": 2, "replicas": 3}, "prefill_pool": {"replicas": 2, "tp": 4}, )" +
          traffic + "}",
      "s.json");
  EXPECT_TRUE(s.disaggregated());
  EXPECT_EQ(s.prefill_tp(), 4);
  EXPECT_EQ(s.prefill_pp(), 1);
  EXPECT_EQ(s.gpus(), 3 * 2 + 2 * 4);
  EXPECT_EQ(prefill_replica_config(s).tp, 4);
  EXPECT_EQ(serving_path_of_prefill_replica_path(s, "/tp"), "/prefill_pool/tp");
  EXPECT_EQ(serving_path_of_prefill_replica_path(s, "/pp"), "/replica/pp");
  const ServingSpec colocated = parse_serving_spec(R"({"model": "llama2-7b", )" + traffic + "}", "s.json");
  EXPECT_FALSE(colocated.disaggregated());
  EXPECT_EQ(colocated.gpus(), 1);
  const SpecError e = testing::spec_error_of(
      [&] { parse_serving_spec(R"({"model": "llama2-7b", "prefill_pool": {"tp": 2}, )" + traffic + "}", "s.json"); });
  EXPECT_EQ(e.file(), "s.json");
  EXPECT_EQ(e.json_path(), "/prefill_pool/tp");
  const SpecError neg = testing::spec_error_of([&] {
    parse_serving_spec(R"({"model": "llama2-7b", "prefill_pool": {"replicas": -1}, )" + traffic + "}", "s.json");
  });
  EXPECT_EQ(neg.json_path(), "/prefill_pool/replicas");
}

}  // namespace
}  // namespace clustersim
