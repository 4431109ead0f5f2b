// Optimizer-state offload to the host memory tier (training.optimizer_offload cpu:
// workloads/optimizer_offload.cpp, the memory model's host line, the generator's three host ops and
// their times in sim/hardware/kernel_model.cpp) against closed forms.
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "../transformer_fixture.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/host_memory_tier.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim/hardware/memory_model.hpp"
#include "sim/simulate.hpp"
#include "topologies/cluster_spec.hpp"
#include "workloads/transformer_generator.hpp"

namespace clustersim {
namespace {

using testing::spec_error_of;

// One GPU, no parallelism: h 1024, 8 heads, ffn 4096, seq 512, micro-batch 2, 2 layers, bf16 + Adam.
WorkloadSpec model(const std::string& offload) {
  WorkloadSpec s = testing::transformer_workload(
      "offload", {.layers = 2, .hidden = 1024, .heads = 8, .ffn_hidden = 4096, .seq_len = 512, .vocab = 1024}, 6, 2);
  s.parallelism.dp = 1;
  s.training.optimizer_offload = offload;
  return s;
}

const OpTable& ops_of(const ExecutionGraph& g) {
  return g.classes().at(0).ops;
}

bool has(const OpTable& ops, std::string_view name) {
  for (OpId i = 0; i < ops.size(); ++i)
    if (ops.name(i) == name) return true;
  return false;
}

OpId find(const OpTable& ops, std::string_view name) {
  for (OpId i = 0; i < ops.size(); ++i)
    if (ops.name(i) == name) return i;
  ADD_FAILURE() << "no op " << name;
  return 0;
}

// Mixed-precision Adam keeps 12 bytes per parameter of optimizer state (fp32 master weights + m + v):
// offloaded, the GPU's optimizer line becomes 0, the host line 12 P, every other GPU line is unchanged
// and so the peak drops by exactly 12 P.
TEST(OptimizerOffload, GpuMemoryDropsByExactlyTheOptimizerBytes) {
  const GpuSpec h100 = find_gpu("h100-sxm5-80gb", "t", "");
  const WorkloadSpec on_gpu = model("none"), on_host = model("cpu");
  const double P = stage_parameters(on_gpu, 0);
  const MemoryFootprint a = estimate_memory(on_gpu, h100), b = estimate_memory(on_host, h100);
  EXPECT_DOUBLE_EQ(a.optimizer_bytes, 12.0 * P);
  EXPECT_DOUBLE_EQ(a.host_optimizer_bytes, 0.0);
  EXPECT_DOUBLE_EQ(b.optimizer_bytes, 0.0);
  EXPECT_DOUBLE_EQ(b.host_optimizer_bytes, 12.0 * P);
  EXPECT_EQ(a.phase, b.phase);
  EXPECT_DOUBLE_EQ(a.weights_bytes, b.weights_bytes);
  EXPECT_DOUBLE_EQ(a.gradients_bytes, b.gradients_bytes);
  EXPECT_DOUBLE_EQ(a.activations_bytes, b.activations_bytes);
  EXPECT_NEAR(a.peak_bytes - b.peak_bytes, 12.0 * P, 1e-6 * P);
  EXPECT_NEAR(a.allocated_bytes - b.allocated_bytes, 12.0 * P, 1e-6 * P);
  // The GPU's lines still sum to the allocated peak (the host line is not among them).
  EXPECT_NEAR(b.weights_bytes + b.gradients_bytes + b.optimizer_bytes + b.activations_bytes + b.logits_bytes +
                  b.transient_bytes + b.cp_kv_gather_bytes + b.fp8_saved_operands_bytes +
                  b.communication_buffers_bytes + b.workspace_bytes,
              b.allocated_bytes, 1e-9 * b.allocated_bytes);
  // ZeRO-1 over 8 ranks: the host holds the rank's shard, 12 P / 8.
  WorkloadSpec zero1 = model("cpu");
  zero1.parallelism.dp = 8;
  zero1.parallelism.zero_stage = 1;
  zero1.training.global_batch = 16;
  EXPECT_DOUBLE_EQ(estimate_memory(zero1, h100).host_optimizer_bytes, 12.0 * P / 8.0);
}

// The host line against the host tier's capacity: GB200 gives 240 GB per GPU (memory_device), a PCIe
// GPU none (unknown: always fits).
TEST(OptimizerOffload, HostLineIsCheckedAgainstTheHostTierWhereKnown) {
  const WorkloadSpec s = model("cpu");
  const double host = 12.0 * stage_parameters(s, 0);
  EXPECT_DOUBLE_EQ(memory_device(find_gpu("gb200", "t", "")).host_capacity_bytes, 240e9);
  EXPECT_DOUBLE_EQ(memory_device(find_gpu("h100-sxm5-80gb", "t", "")).host_capacity_bytes, 0.0);
  const MemoryFootprint small = estimate_memory(s, DeviceMemory{80e9, true, 0.5 * host});
  EXPECT_FALSE(small.host_fits);
  EXPECT_DOUBLE_EQ(small.host_capacity_bytes, 0.5 * host);
  EXPECT_TRUE(estimate_memory(s, DeviceMemory{80e9, true, 2.0 * host}).host_fits);
  EXPECT_TRUE(estimate_memory(s, DeviceMemory{80e9, true, 0.0}).host_fits);
}

// The step's optimizer becomes three ops: the fp32 main gradients out (4 P), Adam on the CPU (30 P
// bytes, 12 P flops: training_state.cpp), the bf16 weights back (2 P); no GPU Adam kernel.
// Times: GB200 over NVLink-C2C, 225 GB/s per direction, the update at Grace's 256 GB/s per GPU;
// H100 over PCIe Gen5, 64 GB/s, the update at 76.8 GB/s (two Xeon 8480C x 8 DDR5-4800 channels / 8 GPUs).
TEST(OptimizerOffload, TransfersAndUpdateTimedByTheHostTier) {
  const WorkloadSpec s = model("cpu");
  const double P = stage_parameters(s, 0);
  const ExecutionGraph g = generate_transformer_training(s, 1);
  const OpTable& ops = ops_of(g);
  EXPECT_FALSE(has(ops, "optimizer.adam"));
  const OpId out = find(ops, "optimizer.host_copy_out"), update = find(ops, "optimizer.adam.host_update"),
             in = find(ops, "optimizer.host_copy_in");
  EXPECT_DOUBLE_EQ(ops.bytes(out), 4.0 * P);
  EXPECT_DOUBLE_EQ(ops.bytes(update), 30.0 * P);
  EXPECT_DOUBLE_EQ(ops.flops(update), 12.0 * P);
  EXPECT_DOUBLE_EQ(ops.bytes(in), 2.0 * P);
  EXPECT_LT(out, update);
  EXPECT_LT(update, in);

  const GpuSpec gb200 = find_gpu("gb200", "t", ""), h100 = find_gpu("h100-sxm5-80gb", "t", "");
  const auto t = [&](const GpuSpec& gpu, OpId i) { return kernel_time(gpu, ops.compute_op(i)).time_s; };
  EXPECT_NEAR(t(gb200, out), 4.0 * P / 225e9, 1e-15);
  EXPECT_NEAR(t(gb200, in), 2.0 * P / 225e9, 1e-15);
  EXPECT_NEAR(t(gb200, update), 30.0 * P / 256e9, 1e-15);
  EXPECT_NEAR(t(h100, out), 4.0 * P / 64e9, 1e-15);
  EXPECT_NEAR(t(h100, in), 2.0 * P / 64e9, 1e-15);
  EXPECT_NEAR(t(h100, update), 30.0 * P / 76.8e9, 1e-15);
  EXPECT_DOUBLE_EQ(host_update_bandwidth_Bps(h100), 76.8e9);
  EXPECT_NEAR(t(h100, out) / t(gb200, out), 225.0 / 64.0, 1e-12);
  // GB300: the LPDDR share (194.4 GB/s) sets both the copies and the update.
  const GpuSpec gb300 = find_gpu("gb300", "t", "");
  EXPECT_NEAR(t(gb300, out), 4.0 * P / 194.4e9, 1e-15);
  EXPECT_NEAR(t(gb300, update), 30.0 * P / 194.4e9, 1e-15);
}

// A bad value names the key and the values allowed.
TEST(OptimizerOffload, UnknownModeIsRefusedWithTheAllowedValues) {
  const SpecError e = spec_error_of([] { load_workload_spec("gpt3-1.3b", {{"training.optimizer_offload", "nvme"}}); });
  EXPECT_EQ(e.json_path(), "/training/optimizer_offload");
  EXPECT_NE(e.message().find("none"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("cpu"), std::string::npos) << e.message();
  EXPECT_EQ(load_workload_spec("gpt3-1.3b", {{"training.optimizer_offload", "cpu"}}).training.optimizer_offload, "cpu");
}

// Llama 3.1 70B without ZeRO on GB200 NVL72 racks: 70.6e9 parameters x 12 bytes = 847 GB of Adam state
// per GPU, above Grace's 240 GB per GPU: refused at the key, with the memory lines.
TEST(OptimizerOffload, StatesBeyondTheHostMemoryAreRefused) {
  const ClusterSpec cluster = load_cluster_spec("gb200-nvl72");
  WorkloadSpec w = load_workload_spec("llama3.1-70b");
  w.training.optimizer_offload = "cpu";
  w.training.global_batch = 288;  // the preset's 4 racks of 72
  w.training.micro_batch = 1;
  // Plain data parallelism, ParallelismSpec's defaults: tp = pp = cp = 1, dp from the GPUs (0 until
  // resolved), one 1F1B stage, no sequence parallelism or TP overlap, no ZeRO (the preset's tp 4, pp 4
  // interleaved, cp 2 and ZeRO-1 all undone).
  w.parallelism = ParallelismSpec{};
  SimulationOptions options;
  options.fidelity = "analytical";
  const SpecError e = spec_error_of([&] { simulate(cluster, w, options); });
  EXPECT_EQ(e.json_path(), "/training/optimizer_offload");
  EXPECT_NE(e.message().find("host_memory_GB"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("240.000 GB"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("weights"), std::string::npos) << e.message();
  // ZeRO-1 over the 288 ranks: 847 / 288 = 2.9 GB per GPU fits.
  w.parallelism.zero_stage = 1;
  resolve_parallelism(w, 288);
  EXPECT_TRUE(estimate_memory(w, memory_device(find_gpu("gb200", "t", ""))).host_fits);
}

}  // namespace
}  // namespace clustersim
