// PyTorch profiler (Kineto) traces: the checked-in 2-rank DDP example read op by op (NCCL kernels as
// collectives with their sizes and group, measured kernel times, GEMM shapes, inferred cross-stream
// dependencies), small hand-written traces for send/recv and single-rank replication, and malformed
// traces refused with the event's JSON path.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "trace_test_support.hpp"
#include "workloads/trace_format.hpp"

namespace clustersim {
namespace {

using testing::deps_of;
using testing::spec_error_of;

const ExecutionGraph& example() {
  static const ExecutionGraph g = read_pytorch_trace(testing::example_trace("pytorch"));
  return g;
}

constexpr double kBucketBytes = 4096.0 * 16384 * 4;  // fp32 gradients of one 4096 x 16384 weight

TEST(PytorchTrace, ExampleHasTwoRanksAndTheDefaultProcessGroup) {
  const ExecutionGraph& g = example();
  EXPECT_EQ(g.world_size(), 2);
  ASSERT_EQ(g.classes().size(), 2u);
  EXPECT_EQ(g.classes()[0].ranks, std::vector<int>{0});
  EXPECT_EQ(g.classes()[1].ranks, std::vector<int>{1});
  ASSERT_EQ(g.communicators().size(), 1u);
  EXPECT_EQ(g.communicators()[0].name, "default_pg");
  EXPECT_EQ(g.communicators()[0].groups, (std::vector<std::vector<int>>{{0, 1}}));
  EXPECT_NO_THROW(g.validate());
}

TEST(PytorchTrace, NcclKernelsBecomeAllReducesOfTheBucketSize) {
  for (const auto& rc : example().classes()) {
    const OpTable& ops = rc.ops;
    // In GPU start order: memcpy, 3 forward kernels, 2 GEMMs, GeLU backward, all-reduce (it started
    // 5 us after the GeLU backward), 2 GEMMs, all-reduce, Adam.
    ASSERT_EQ(ops.size(), 12u);
    std::vector<OpId> collectives;
    for (OpId i = 0; i < ops.size(); ++i)
      if (ops.kind(i) == OpKind::collective) collectives.push_back(i);
    ASSERT_EQ(collectives, (std::vector<OpId>{7, 10}));
    for (OpId c : collectives) {
      EXPECT_EQ(ops.collective(c), CollectiveKind::all_reduce);
      EXPECT_EQ(ops.bytes(c), kBucketBytes);  // In msg nelems x 4 bytes (Float)
      EXPECT_EQ(ops.communicator(c), 0);
      EXPECT_EQ(ops.stream(c), 1);  // the NCCL stream
    }
  }
}

TEST(PytorchTrace, ComputeKernelsKeepTheirMeasuredTimeAndGemmShape) {
  const OpTable& r0 = example().classes()[0].ops;
  const OpTable& r1 = example().classes()[1].ops;
  EXPECT_EQ(r0.kernel(0), KernelClass::elementwise);  // Memcpy HtoD
  EXPECT_EQ(r0.bytes(0), 4096.0 * 4096 * 2);
  EXPECT_EQ(r0.stream(0), kComputeStream);
  // The first GEMM: aten::addmm with Input Dims [[16384], [4096, 4096], [4096, 16384]].
  EXPECT_EQ(r0.kernel(1), KernelClass::gemm);
  EXPECT_EQ(r0.precision(1), Precision::bf16);
  EXPECT_EQ(r0.m(1), 4096u);
  EXPECT_EQ(r0.k(1), 4096u);
  EXPECT_EQ(r0.n(1), 16384u);
  EXPECT_EQ(r0.flops(1), 2.0 * 4096 * 4096 * 16384);
  EXPECT_DOUBLE_EQ(r0.duration_s(1), 2200e-6);
  EXPECT_DOUBLE_EQ(r1.duration_s(1), 2200e-6 * 1.004);
  EXPECT_EQ(r0.kernel(2), KernelClass::elementwise);  // GeLU (its name has "lambda", not an optimizer)
  EXPECT_DOUBLE_EQ(r0.duration_s(2), 180e-6);
  EXPECT_EQ(r0.kernel(11), KernelClass::optimizer);          // multi_tensor_apply_kernel<...FusedAdam...>
  EXPECT_EQ(r0.name(11).find('('), std::string_view::npos);  // argument list dropped from the name
}

TEST(PytorchTrace, CrossStreamDependenciesAreInferred) {
  for (const auto& rc : example().classes()) {
    const OpTable& ops = rc.ops;
    // Each all-reduce waits for the weight-gradient GEMM launched just before it.
    EXPECT_EQ(deps_of(ops, 7), std::vector<OpId>{5});
    EXPECT_EQ(deps_of(ops, 10), std::vector<OpId>{9});
    // The optimizer sat ready on the compute stream until the last all-reduce ended.
    EXPECT_EQ(deps_of(ops, 11), std::vector<OpId>{10});
    // Kernels that ran back to back on their stream need nothing more.
    EXPECT_TRUE(deps_of(ops, 2).empty());
    EXPECT_TRUE(deps_of(ops, 6).empty());
    EXPECT_TRUE(deps_of(ops, 8).empty());
  }
}

// ---------------------------------------------------------------------------------------------------
// Hand-written traces.

std::string kernel(double ts, double dur, int stream, const std::string& name, const std::string& args = "") {
  return R"({"ph": "X", "cat": "kernel", "name": ")" + name + R"(", "ts": )" + std::to_string(ts) + R"(, "dur": )" +
         std::to_string(dur) + R"(, "args": {"stream": )" + std::to_string(stream) + (args.empty() ? "" : ", " + args) +
         "}}";
}
std::string rank_file(int rank, int world, const std::vector<std::string>& events) {
  std::string e;
  for (const auto& x : events)
    e += (e.empty() ? "" : ", ") + x;
  return R"({"distributedInfo": {"rank": )" + std::to_string(rank) + R"(, "world_size": )" + std::to_string(world) +
         R"(}, "traceEvents": [)" + e + "]}";
}
std::string comm(const std::string& name, int peer, const std::string& ranks) {
  return R"("Collective name": ")" + name +
         R"(", "In msg nelems": 1024, "Out msg nelems": 1024, "dtype": "BFloat16", "Rank": )" + std::to_string(peer) +
         R"(, "Process Group Name": "3", "Process Group Description": "undefined", "Process Group Ranks": ")" + ranks +
         "\"";
}
std::string write_ranks(const std::string& name, const std::vector<std::string>& files) {
  const std::string dir = testing::temp_dir(name);
  for (std::size_t r = 0; r < files.size(); ++r)
    testing::write_file(dir + "/worker" + std::to_string(r) + ".pt.trace.json", files[r]);
  return dir;
}

TEST(PytorchTrace, SendAndRecvKernelsFindTheirPeerInTheProcessGroup) {
  // Ranks 1 and 3 of a 4-rank world exchange 2 KiB (1024 bf16) over group [1, 3]; ranks 0 and 2 idle.
  const std::string send =
      kernel(10, 5, 20, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", comm("send", 1, "[1, 3]"));
  const std::string recv =
      kernel(10, 5, 21, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", comm("recv", 0, "[1, 3]"));
  const ExecutionGraph g = read_pytorch_trace(
      write_ranks("p2p", {rank_file(0, 4, {}), rank_file(1, 4, {send}), rank_file(2, 4, {}), rank_file(3, 4, {recv})}));
  ASSERT_EQ(g.classes().size(), 4u);
  ASSERT_EQ(g.communicators().size(), 1u);
  EXPECT_EQ(g.communicators()[0].name, "pg 3");
  EXPECT_EQ(g.communicators()[0].groups, (std::vector<std::vector<int>>{{1, 3}}));
  const OpTable& s = g.classes()[1].ops;
  const OpTable& r = g.classes()[3].ops;
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(s.kind(0), OpKind::send);
  EXPECT_EQ(s.peer_offset(0), 1);  // group rank 1 (global 3) from position 0
  EXPECT_EQ(s.bytes(0), 2048.0);
  EXPECT_EQ(r.kind(0), OpKind::recv);
  EXPECT_EQ(r.peer_offset(0), 1);  // group rank 0 (global 1) from position 1: (0 - 1) mod 2
}

TEST(PytorchTrace, OneRanksTraceStandsForEveryRankOfAWorldCollective) {
  const std::string ar = kernel(
      10, 5, 20, "ncclKernel_AllReduce_RING_LL_Sum_bfloat16(ncclWorkElem)",
      R"("Collective name": "allreduce", "In msg nelems": 8, "Out msg nelems": 8, "dtype": "Float", "Group size": 8)");
  const ExecutionGraph g = read_pytorch_trace(
      write_ranks("replicated", {rank_file(5, 8, {kernel(0, 9, 7, "sm90_xmma_gemm_bf16bf16_bf16f32"), ar})}));
  EXPECT_EQ(g.world_size(), 8);
  ASSERT_EQ(g.classes().size(), 1u);
  EXPECT_EQ(g.classes()[0].ranks.size(), 8u);
  EXPECT_EQ(g.communicators()[0].groups[0].size(), 8u);
  EXPECT_EQ(g.classes()[0].ops.bytes(1), 32.0);
  EXPECT_EQ(g.classes()[0].ops.kernel(0), KernelClass::gemm);
}

SpecError refusal(const std::string& name, const std::vector<std::string>& files) {
  return spec_error_of([&] { read_pytorch_trace(write_ranks(name, files)); });
}

TEST(PytorchTrace, RefusesNcclKernelsItCannotDescribe) {
  // No metadata anywhere: the message size is unknown.
  auto e = refusal("no_metadata", {rank_file(0, 1, {kernel(0, 1, 7, "ncclDevKernel_AllReduce_Sum_f32_RING_LL()")})});
  EXPECT_EQ(e.json_path(), "/traceEvents/0");
  EXPECT_NE(e.message().find("record_param_comms"), std::string::npos) << e.message();
  e = refusal("dtype",
              {rank_file(0, 1,
                         {kernel(0, 1, 7, "ncclDevKernel_AllReduce",
                                 R"("Collective name": "allreduce", "In msg nelems": 8, "dtype": "Quaternion")")})});
  EXPECT_NE(e.message().find("Quaternion"), std::string::npos);
  // A subgroup collective in a single rank's trace of a larger world cannot be replicated.
  e = refusal("subgroup",
              {rank_file(0, 4, {kernel(0, 1, 7, "ncclDevKernel_AllGather", comm("all_gather", 0, "[0, 1]"))})});
  EXPECT_NE(e.message().find("every rank's file"), std::string::npos) << e.message();
  // Two files, world_size 4.
  e = refusal("missing_ranks", {rank_file(0, 4, {}), rank_file(1, 4, {})});
  EXPECT_NE(e.message().find("world_size 4"), std::string::npos) << e.message();
}

TEST(PytorchTrace, RefusesMalformedEvents) {
  auto e = refusal(
      "no_ts", {R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "dur": 1, "args": {"stream": 7}}]})"});
  EXPECT_EQ(e.json_path(), "/traceEvents/0/ts");
  e = refusal("not_trace", {R"({"events": []})"});
  EXPECT_EQ(e.json_path(), "/traceEvents");
  e = refusal("same_rank", {rank_file(0, 2, {}), rank_file(0, 2, {})});
  EXPECT_NE(e.message().find("rank 0"), std::string::npos);
}

}  // namespace
}  // namespace clustersim
