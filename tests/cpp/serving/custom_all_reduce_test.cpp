// vLLM's custom all-reduce (sim/serving/custom_all_reduce.hpp): the fit is the published table's least
// squares, vLLM's kernel choice, the closed form by hand, where it applies, and the decode iteration's
// all-reduces timed by it.
#include "sim/serving/custom_all_reduce.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../published_table.hpp"
#include "serving_test_support.hpp"
#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/serving/iteration_model.hpp"
#include "sim/serving/replica_links.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {
namespace {

// The constants are the least-squares lines of the published table (custom_all_reduce.cpp): re-fitted
// here from calibration/data/published/custom_allreduce_latency.json, each row on the kernel vLLM picks
// for it, time against the bytes one GPU reads from its peers; the model agrees with the refit to the
// constants' rounding, and its residual is the one stated there (RMS 0.70 us one-shot, 0.77 us
// two-shot, every row within 13.1 %).
TEST(CustomAllReduce, TheFitIsTheLeastSquaresLineOfThePublishedTable) {
  const nlohmann::json rows = testing::published_table("custom_allreduce_latency.json");
  ASSERT_EQ(rows.size(), 18u);
  struct Sums {
    double n = 0, x = 0, y = 0, xx = 0, xy = 0, squared_error = 0;
  };
  std::array<Sums, 2> sums{};
  for (const auto& row : rows) {
    const int tp = row["tp"];
    const double bytes = row["bytes"], latency_s = 1e-3 * row["latency_ms"].get<double>();
    auto& s = sums[custom_all_reduce_kernel(tp, bytes) == CustomAllReduceKernel::one_shot ? 0 : 1];
    const double x = custom_all_reduce_peer_bytes(tp, bytes);
    s.n += 1;
    s.x += x;
    s.y += latency_s;
    s.xx += x * x;
    s.xy += x * latency_s;
    s.squared_error += std::pow(custom_all_reduce_s(tp, bytes) - latency_s, 2);
    EXPECT_LE(std::abs(custom_all_reduce_s(tp, bytes) / latency_s - 1.0), 0.132) << row["id"];
  }
  EXPECT_EQ(sums[0].n, 13);  // one-shot: tp 2 at every size, tp 4 below 512 KiB, tp 8 below 256 KiB
  EXPECT_EQ(sums[1].n, 5);
  for (const Sums& s : sums) {
    const double slope = (s.n * s.xy - s.x * s.y) / (s.n * s.xx - s.x * s.x);
    const double intercept = (s.y - slope * s.x) / s.n;
    // the model's line through the same two sizes (its kernel's: one-shot at tp 2, two-shot at tp 8)
    const int tp = &s == &sums[0] ? 2 : 8;
    const double small = &s == &sums[0] ? 4096 : 262144, large = 1048576;
    const double dx = custom_all_reduce_peer_bytes(tp, large) - custom_all_reduce_peer_bytes(tp, small);
    const double model_slope = (custom_all_reduce_s(tp, large) - custom_all_reduce_s(tp, small)) / dx;
    const double model_intercept =
        custom_all_reduce_s(tp, small) - model_slope * custom_all_reduce_peer_bytes(tp, small);
    EXPECT_NEAR(model_slope / slope, 1.0, 1e-4);
    EXPECT_NEAR(model_intercept / intercept, 1.0, 1e-4);
  }
  EXPECT_NEAR(std::sqrt(sums[0].squared_error / sums[0].n), 0.70e-6, 0.01e-6);
  EXPECT_NEAR(std::sqrt(sums[1].squared_error / sums[1].n), 0.77e-6, 0.01e-6);
}

// vLLM's kernel choice (csrc/custom_all_reduce.cuh): one-shot always at 2 GPUs; at 4 below 512 KiB, at
// 6 and 8 below 256 KiB; two-shot above. The peer bytes: one-shot (N - 1) S, two-shot 2 (N - 1) / N S.
TEST(CustomAllReduce, VllmsKernelChoiceAndItsPeerReads) {
  using K = CustomAllReduceKernel;
  EXPECT_EQ(custom_all_reduce_kernel(2, 8e6), K::one_shot);
  EXPECT_EQ(custom_all_reduce_kernel(4, 524272), K::one_shot);
  EXPECT_EQ(custom_all_reduce_kernel(4, 524288), K::two_shot);
  EXPECT_EQ(custom_all_reduce_kernel(6, 262128), K::one_shot);
  EXPECT_EQ(custom_all_reduce_kernel(8, 262144), K::two_shot);
  EXPECT_DOUBLE_EQ(custom_all_reduce_peer_bytes(4, 262144), 3.0 * 262144);
  EXPECT_DOUBLE_EQ(custom_all_reduce_peer_bytes(8, 1048576), 2.0 * 7.0 / 8.0 * 1048576);
}

// The closed form, by hand from the fitted constants: tp 2 at 512 KiB, one-shot:
// 8.7185 us + 524,288 B / 61.314 GB/s = 17.269 us; tp 8 at 4 MiB (above the measured sizes), two-shot:
// 16.0013 us + 2 x 7/8 x 4,194,304 B = 7,340,032 B / 64.330 GB/s = 130.10 us; tp 6 is timed as 6 GPUs.
TEST(CustomAllReduce, TimeIsLatencyPlusPeerBytesOverBandwidth) {
  EXPECT_NEAR(custom_all_reduce_s(2, 524288), 17.269e-6, 0.001e-6);
  EXPECT_NEAR(custom_all_reduce_s(8, 4194304), 130.10e-6, 0.01e-6);
  EXPECT_NEAR(custom_all_reduce_s(6, 4194304), 16.0013e-6 + 2.0 * 5.0 / 6.0 * 4194304 / 64.330e9, 1e-12);
  EXPECT_LT(custom_all_reduce_s(8, 4096), custom_all_reduce_s(8, 8192));  // more bytes never take less
}

// vLLM's rule: 2, 4, 6 or 8 GPUs of one fully NVLinked node, sizes a multiple of 16 bytes under 8 MiB;
// fitted on H100 (NVLink 4 through NVSwitch): other generations keep NCCL.
TEST(CustomAllReduce, WhereItApplies) {
  const ClusterSpec h100 = load_cluster_spec("dgx-h100");
  const ClusterSpec a100 = load_cluster_spec("dgx-a100-superpod");
  EXPECT_TRUE(custom_all_reduce_applies(h100, 2, 1e6));
  EXPECT_TRUE(custom_all_reduce_applies(h100, 8, 1048576));
  EXPECT_TRUE(custom_all_reduce_applies(h100, 8, 8388608 - 16));  // above the measured 1 MiB: the physics
  EXPECT_FALSE(custom_all_reduce_applies(h100, 8, 8388608));      // vLLM's max_size
  EXPECT_FALSE(custom_all_reduce_applies(h100, 8, 1048577));      // not a multiple of 16 bytes
  EXPECT_FALSE(custom_all_reduce_applies(h100, 0, 1e3));
  EXPECT_FALSE(custom_all_reduce_applies(h100, 3, 1e6));
  EXPECT_FALSE(custom_all_reduce_applies(h100, 16, 1e6));
  EXPECT_FALSE(custom_all_reduce_applies(a100, 2, 1e6));
}

// A replica's all-reduce: the fitted line up to the measured 1 MiB; above it, to vLLM's 8 MiB, the
// shorter of the line and NCCL's plan (custom_all_reduce.hpp); at 8 MiB and above NCCL's plan.
TEST(CustomAllReduce, AboveTheMeasuredSizesTheShorterOfTheLineAndNccl) {
  const ClusterSpec h100 = load_cluster_spec("dgx-h100");
  for (const int tp : {2, 8}) {
    SCOPED_TRACE(tp);
    const ReplicaLinks custom(h100, tp, 1, 0, true), nccl(h100, tp, 1, 0, false);
    EXPECT_DOUBLE_EQ(custom.all_reduce_s(1048576), custom_all_reduce_s(tp, 1048576));
    for (const double bytes : {2097152.0, 4194304.0, 8388592.0})
      EXPECT_DOUBLE_EQ(custom.all_reduce_s(bytes), std::min(custom_all_reduce_s(tp, bytes), nccl.all_reduce_s(bytes)));
    EXPECT_DOUBLE_EQ(custom.all_reduce_s(8388608), nccl.all_reduce_s(8388608));
  }
}

// Llama-3-8B at tp 2 decoding 64 requests: 2 x 32 + 1 all-reduces of 64 x 4096 x 2 = 524,288 B, each
// 17.269 us (one-shot, above) instead of NCCL's plan; the logits' all-gather is NCCL's either way.
TEST(CustomAllReduce, DecodeAllReducesTakeIt) {
  const GpuSpec gpu = testing::calibrated_gpu("h100-sxm5-80gb");
  const ClusterSpec cluster = load_cluster_spec("dgx-h100");
  ReplicaConfig r;
  r.model = testing::llama3_8b();
  r.tp = 2;
  const std::vector<IterationEntry> batch(64, IterationEntry{1, 1000});
  const auto custom = make_iteration_model(r, gpu, cluster);
  r.custom_all_reduce = false;
  const auto nccl = make_iteration_model(r, gpu, cluster);
  const ReplicaLinks links(cluster, 2, 1, 0, false);
  const double gather = links.all_gather_s(64.0 * 64128 * 2);
  EXPECT_NEAR(custom->iteration_time(batch).communication_s, 65 * 17.269e-6 + gather, 65 * 0.001e-6);
  EXPECT_NEAR(nccl->iteration_time(batch).communication_s, 65 * links.all_reduce_s(524288.0) + gather, 1e-12);
  EXPECT_LT(custom->iteration_time(batch).communication_s, nccl->iteration_time(batch).communication_s);
  EXPECT_DOUBLE_EQ(custom->iteration_time(batch).compute_s, nccl->iteration_time(batch).compute_s);
}

}  // namespace
}  // namespace clustersim
