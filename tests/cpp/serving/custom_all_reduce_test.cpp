// vLLM's custom all-reduce (sim/serving/custom_all_reduce.hpp): the table is the published one, where
// it applies, hand-worked interpolation, and the decode iteration's all-reduces timed by it.
#include "sim/serving/custom_all_reduce.hpp"

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "serving_test_support.hpp"
#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/serving/iteration_model.hpp"
#include "sim/serving/replica_links.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {
namespace {

TEST(CustomAllReduce, TheTableIsThePublishedOne) {
  std::ifstream in(std::string(CLUSTERSIM_SOURCE_DIR) + "/calibration/data/published/custom_allreduce_latency.json");
  ASSERT_TRUE(in);
  const nlohmann::json rows = nlohmann::json::parse(in);
  ASSERT_EQ(rows.size(), 18u);
  for (const auto& row : rows)  // at the measured sizes the interpolation returns the measurement
    EXPECT_NEAR(custom_all_reduce_s(row["tp"], row["bytes"]), 1e-3 * row["latency_ms"].get<double>(), 1e-12)
        << row["id"];
}

// Between measured sizes, linear: tp 2 at 18,432 B (midway between 4,096 B, 8.8 us, and 32,768 B,
// 8.7 us) takes 8.75 us; tp 8 at 786,432 B (midway between 524,288 B, 30.4 us, and 1 MiB, 45.0 us)
// 37.7 us; below 512 B the 512 B figure. tp 6 takes tp 8's row.
TEST(CustomAllReduce, InterpolatedBetweenTheMeasuredSizes) {
  EXPECT_NEAR(custom_all_reduce_s(2, 18432), 8.75e-6, 1e-12);
  EXPECT_NEAR(custom_all_reduce_s(4, 100), 9.1e-6, 1e-12);
  EXPECT_NEAR(custom_all_reduce_s(8, 786432), 37.7e-6, 1e-12);
  EXPECT_DOUBLE_EQ(custom_all_reduce_s(6, 300000), custom_all_reduce_s(8, 300000));
}

// vLLM's rule: 2, 4, 6 or 8 GPUs of one fully NVLinked node, under 8 MiB; the table was measured on
// H100 (NVLink 4 through NVSwitch) up to 1 MiB: other generations and larger messages keep NCCL.
TEST(CustomAllReduce, WhereItApplies) {
  const ClusterSpec h100 = load_cluster_spec("dgx-h100");
  const ClusterSpec a100 = load_cluster_spec("dgx-a100-superpod");
  EXPECT_TRUE(custom_all_reduce_applies(h100, 2, 1e6));
  EXPECT_TRUE(custom_all_reduce_applies(h100, 8, 1048576));
  EXPECT_FALSE(custom_all_reduce_applies(h100, 8, 1048577));  // not measured above 1 MiB
  EXPECT_FALSE(custom_all_reduce_applies(h100, 0, 1e3));
  EXPECT_FALSE(custom_all_reduce_applies(h100, 3, 1e6));
  EXPECT_FALSE(custom_all_reduce_applies(h100, 16, 1e6));
  EXPECT_FALSE(custom_all_reduce_applies(a100, 2, 1e6));
}

// Llama-3-8B at tp 2 decoding 64 requests: 2 x 32 + 1 all-reduces of 64 x 4096 x 2 = 524,288 B, each
// 17.7 us (the table) instead of NCCL's plan; the logits' all-gather is NCCL's either way.
TEST(CustomAllReduce, DecodeAllReducesTakeIt) {
  const GpuSpec gpu = testing::calibrated_gpu("h100-sxm5-80gb");
  const ClusterSpec cluster = load_cluster_spec("dgx-h100");
  ReplicaConfig r;
  r.model.layers = 32;
  r.model.hidden = 4096;
  r.model.heads = 32;
  r.model.kv_heads = 8;
  r.model.ffn_hidden = 14336;
  r.model.seq_len = 8192;
  r.model.vocab = 128256;
  r.model.activation = "swiglu";
  r.tp = 2;
  const std::vector<IterationEntry> batch(64, IterationEntry{1, 1000});
  const auto custom = make_iteration_model(r, gpu, cluster);
  r.custom_all_reduce = false;
  const auto nccl = make_iteration_model(r, gpu, cluster);
  const ReplicaLinks links(cluster, 2, 1, 0, false);
  const double gather = links.all_gather_s(64.0 * 64128 * 2);
  EXPECT_NEAR(custom->iteration_time(batch).communication_s, 65 * 17.7e-6 + gather, 1e-12);
  EXPECT_NEAR(nccl->iteration_time(batch).communication_s, 65 * links.all_reduce_s(524288.0) + gather, 1e-12);
  EXPECT_LT(custom->iteration_time(batch).communication_s, nccl->iteration_time(batch).communication_s);
  EXPECT_DOUBLE_EQ(custom->iteration_time(batch).compute_s, nccl->iteration_time(batch).compute_s);
}

}  // namespace
}  // namespace clustersim
