// The report's memory section carries the memory model's lines (workloads/memory_lines.hpp) as the
// model computed them, its sums keep the model's identities, and every line survives a JSON round trip.
#include <vector>

#include <gtest/gtest.h>

#include "../transformer_fixture.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/memory_model.hpp"
#include "sim/simulate.hpp"
#include "sim_test_support.hpp"
#include "topologies/cluster_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {
namespace {

// Every line of MemoryLines, read from either carrier (the footprint or the report's section).
std::vector<double> lines_of(const MemoryLines& m) {
  return {m.weights_bytes,
          m.gradients_bytes,
          m.optimizer_bytes,
          m.activations_bytes,
          m.logits_bytes,
          m.transient_bytes,
          m.cp_kv_gather_bytes,
          m.fp8_saved_operands_bytes,
          m.communication_buffers_bytes,
          m.workspace_bytes,
          m.allocator_reserve_bytes,
          m.cuda_context_bytes,
          m.framework_overhead_bytes,
          m.capacity_bytes,
          m.fits ? 1.0 : 0.0,
          m.host_optimizer_bytes};
}

// A 4-layer transformer (hidden 1024) on 4 H100 of one node: pp 2 x dp 2, ZeRO-1, micro-batch 1, the
// analytical network.
TEST(ReportMemoryLines, ReportCarriesTheFootprintOfTheMemoryModel) {
  WorkloadSpec w = testing::transformer_workload(
      "memory-lines", {.layers = 4, .hidden = 1024, .heads = 8, .ffn_hidden = 4096, .seq_len = 1024, .vocab = 32000}, 8,
      1);
  w.parallelism.pp = 2;
  w.parallelism.zero_stage = 1;
  SimulationOptions analytical;
  analytical.fidelity = "analytical";
  const ClusterSpec cluster = testing::fat_tree_spec(1, 4, 4);
  const Report r = simulate(cluster, w, analytical);

  WorkloadSpec resolved = w;
  resolve_parallelism(resolved, cluster.gpu_count());
  ASSERT_EQ(resolved.parallelism.dp, 2);
  const GpuSpec h100 = find_gpu("h100-sxm5-80gb", "t", "");
  const MemoryFootprint f = estimate_memory(resolved, h100);
  const MemoryStats& m = r.memory;
  EXPECT_EQ(lines_of(m), lines_of(f));  // the same doubles, bit for bit
  EXPECT_EQ(m.peak_phase, to_string(f.phase));
  EXPECT_EQ(m.allocated_peak_bytes, f.allocated_bytes);
  EXPECT_EQ(m.reserved_peak_bytes, f.reserved_bytes);
  EXPECT_EQ(m.peak_bytes_per_gpu, f.peak_bytes);

  // The identities of memory_model.cpp, on the report's figures: the allocated lines sum to the
  // allocated peak; + the allocator's reserve = the reserved peak; + the CUDA context = the peak.
  const double allocated = m.weights_bytes + m.gradients_bytes + m.optimizer_bytes + m.activations_bytes +
                           m.logits_bytes + m.transient_bytes + m.cp_kv_gather_bytes + m.fp8_saved_operands_bytes +
                           m.communication_buffers_bytes + m.workspace_bytes;
  EXPECT_NEAR(m.allocated_peak_bytes, allocated, 1e-12 * allocated);
  EXPECT_DOUBLE_EQ(m.reserved_peak_bytes, m.allocated_peak_bytes + m.allocator_reserve_bytes);
  EXPECT_DOUBLE_EQ(m.peak_bytes_per_gpu, m.reserved_peak_bytes + m.cuda_context_bytes);
  EXPECT_DOUBLE_EQ(m.framework_overhead_bytes, m.workspace_bytes + m.allocator_reserve_bytes + m.cuda_context_bytes);
  // bf16 weights (2 bytes per parameter of the stage) and mixed-precision Adam's 12 bytes per parameter
  // sharded over dp 2 by ZeRO-1 (memory_model.cpp).
  const double P = stage_parameters(resolved, f.stage);
  EXPECT_DOUBLE_EQ(m.weights_bytes, 2.0 * P);
  EXPECT_DOUBLE_EQ(m.optimizer_bytes, 12.0 * P / 2.0);
  EXPECT_EQ(m.capacity_bytes, h100.hbm_capacity_bytes);
  EXPECT_TRUE(m.fits);

  const Report back = Report::from_json(r.to_json());
  EXPECT_EQ(lines_of(back.memory), lines_of(m));
  EXPECT_EQ(back.memory.peak_bytes_per_gpu, m.peak_bytes_per_gpu);
}

}  // namespace
}  // namespace clustersim
