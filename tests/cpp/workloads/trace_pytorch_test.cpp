// PyTorch profiler (Kineto) traces: the checked-in 2-rank DDP example read op by op (NCCL kernels as
// collectives with their sizes and group, measured kernel times, GEMM shapes, inferred cross-stream
// dependencies), small hand-written traces for send/recv and single-rank replication, and malformed
// traces refused with the event's JSON path.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../spec_error_of.hpp"
#include "trace_test_support.hpp"
#include "workloads/kernel_timeline.hpp"
#include "workloads/trace_files.hpp"
#include "workloads/trace_format.hpp"

namespace clustersim {
namespace {

using testing::deps_of;
using testing::pytorch_example;
using testing::spec_error_of;

constexpr double kBucketBytes = 4096.0 * 16384 * 4;  // fp32 gradients of one 4096 x 16384 weight

TEST(PytorchTrace, ExampleHasTwoRanksAndTheDefaultProcessGroup) {
  const ExecutionGraph& g = pytorch_example();
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
  for (const auto& rc : pytorch_example().classes()) {
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
  const OpTable& r0 = pytorch_example().classes()[0].ops;
  const OpTable& r1 = pytorch_example().classes()[1].ops;
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
  for (const auto& rc : pytorch_example().classes()) {
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
  return testing::write_rank_files(name, "worker{rank}.pt.trace.json", files);
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

// ---------------------------------------------------------------------------------------------------
// Traces without record_param_comms metadata, pipeline send/recv pairs, step cuts, compressed and
// broken files.

// A CPU-side event ("cpu_op", "user_annotation", "cuda_runtime") on thread 1.
std::string cpu(const std::string& cat, const std::string& name, double ts, double dur, const std::string& args = "") {
  return R"({"ph": "X", "cat": ")" + cat + R"(", "name": ")" + name + R"(", "pid": 1, "tid": 1, "ts": )" +
         std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) + R"(, "args": {)" + args + "}}";
}
std::string launch(double ts, int correlation) {
  return cpu("cuda_runtime", "cudaLaunchKernel", ts, 1, R"("correlation": )" + std::to_string(correlation));
}
std::string corr(int correlation) {
  return R"("correlation": )" + std::to_string(correlation);
}
// record_param_comms of a send or recv of 512 Ki bf16 elements (1 MiB) in process group "pp" of ranks 0, 1.
std::string p2p_call(const std::string& what, int peer, double ts) {
  return cpu("cpu_op", "record_param_comms", ts, 2,
             R"("Collective name": ")" + what +
                 R"(", "In msg nelems": 524288, "Out msg nelems": 524288, "dtype": "BFloat16", "Rank": )" +
                 std::to_string(peer) +
                 R"(, "Process Group Name": "1", "Process Group Description": "pp", "Process Group Ranks": "[0, 1]")");
}
const std::string kSendRecv = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
const std::string kGemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";

TEST(PytorchTrace, PipelineSendRecvKernelsOfBatchIsendIrecvBecomeMatchedPairs) {
  // Two pipeline stages (PyTorch >= 2.1: batch_isend_irecv records each call with record_param_comms
  // and launches one SendRecv kernel inside "nccl:coalesced"). Stage 0: forward GEMM, send the
  // activations, recv their gradient, backward GEMM. Stage 1: recv, GEMM, send the gradient back.
  const std::string stage0 =
      rank_file(0, 2,
                {launch(1, 11), kernel(10, 100, 7, kGemm, corr(11)), p2p_call("send", 1, 120),
                 cpu("cpu_op", "nccl:coalesced", 125, 10), launch(126, 12), kernel(130, 50, 20, kSendRecv, corr(12)),
                 p2p_call("recv", 1, 200), cpu("cpu_op", "nccl:coalesced", 205, 10), launch(206, 13),
                 kernel(405, 53, 20, kSendRecv, corr(13)), launch(210, 14), kernel(460, 100, 7, kGemm, corr(14))});
  const std::string stage1 =
      rank_file(1, 2,
                {p2p_call("recv", 0, 100), cpu("cpu_op", "nccl:coalesced", 105, 10), launch(106, 21),
                 kernel(130, 50, 20, kSendRecv, corr(21)), launch(110, 22), kernel(185, 200, 7, kGemm, corr(22)),
                 p2p_call("send", 0, 120), cpu("cpu_op", "nccl:coalesced", 125, 10), launch(126, 23),
                 kernel(390, 50, 20, kSendRecv, corr(23))});
  const ExecutionGraph g = read_pytorch_trace(write_ranks("pipeline", {stage0, stage1}));
  ASSERT_EQ(g.communicators().size(), 1u);
  EXPECT_EQ(g.communicators()[0].name, "pp");
  const OpTable& s0 = g.classes()[0].ops;
  const OpTable& s1 = g.classes()[1].ops;
  ASSERT_EQ(s0.size(), 4u);
  ASSERT_EQ(s1.size(), 3u);
  // Stage 0 in GPU start order: GEMM, send, recv, GEMM.
  EXPECT_EQ(s0.kind(1), OpKind::send);
  EXPECT_EQ(s0.kind(2), OpKind::recv);
  for (OpId i : {1u, 2u}) {
    EXPECT_EQ(s0.bytes(i), 1048576.0);  // 524288 bf16 elements
    EXPECT_EQ(s0.peer_offset(i), 1);
    EXPECT_EQ(s0.stream(i), 1);  // the NCCL stream
  }
  // The pipeline dependencies: the send waits for the forward GEMM (issued after it), the backward
  // GEMM sat ready until the gradient arrived.
  EXPECT_EQ(deps_of(s0, 1), std::vector<OpId>{0});
  EXPECT_EQ(deps_of(s0, 3), std::vector<OpId>{2});
  // Stage 1: recv, GEMM (waited for the activations), send (waits for the GEMM).
  EXPECT_EQ(s1.kind(0), OpKind::recv);
  EXPECT_EQ(s1.kind(2), OpKind::send);
  EXPECT_EQ(s1.peer_offset(0), 1);  // (0 - 1) mod 2
  EXPECT_TRUE(deps_of(s1, 0).empty());
  EXPECT_EQ(deps_of(s1, 1), std::vector<OpId>{0});
  EXPECT_EQ(deps_of(s1, 2), std::vector<OpId>{1});
  EXPECT_NO_THROW(g.validate());
}

TEST(PytorchTrace, AGroupedExchangeKeepsItsRecvOffTheSendsStream) {
  // Both ranks send to and receive from each other in one batch_isend_irecv: one SendRecv kernel
  // each. On one in-order stream each rank's send would wait for the peer's recv, queued behind the
  // peer's send: the recvs get a companion stream that the NCCL stream's next kernel waits for.
  const auto rank = [&](int r) {
    return rank_file(
        r, 2,
        {p2p_call("send", 1 - r, 10), p2p_call("recv", 1 - r, 12), cpu("cpu_op", "nccl:coalesced", 15, 5),
         launch(16, 1), kernel(20, 30, 20, kSendRecv, corr(1)), launch(30, 2),
         kernel(60, 10, 20, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
                corr(2) + ", " + R"("Collective name": "allreduce", "In msg nelems": 8, "dtype": "Float")")});
  };
  const ExecutionGraph g = read_pytorch_trace(write_ranks("exchange", {rank(0), rank(1)}));
  for (const auto& rc : g.classes()) {
    const OpTable& ops = rc.ops;
    ASSERT_EQ(ops.size(), 3u);
    EXPECT_EQ(ops.kind(0), OpKind::send);
    EXPECT_EQ(ops.kind(1), OpKind::recv);
    EXPECT_NE(ops.stream(1), ops.stream(0));
    EXPECT_EQ(ops.stream(2), ops.stream(0));
    EXPECT_EQ(deps_of(ops, 2), std::vector<OpId>{1});  // the all-reduce waits for the group's recv
  }
}

TEST(PytorchTrace, NcclKernelsWithoutMetadataAreDescribedByTheirLaunchingRecordFunction) {
  // PyTorch 1.13 / 2.0: record_param_comms carries no arguments; ProcessGroupNCCL's "nccl:<name>"
  // record function has the input tensors (record_shapes=True).
  const auto rank = [](int r) {
    return rank_file(
        r, 2,
        {cpu("cpu_op", "nccl:all_reduce", 5, 10, R"("Input Dims": [[1000]], "Input type": ["float"])"),
         cpu("cpu_op", "record_param_comms", 6, 8), launch(7, 1),
         kernel(20, 30, 20, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", corr(1)),
         cpu("cpu_op", "nccl:_all_gather_base", 40, 10, R"("Input Dims": [[256]], "Input type": ["c10::BFloat16"])"),
         launch(41, 2), kernel(60, 30, 20, "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", corr(2)),
         // TorchRec's all_to_all: NCCL runs it as grouped sends/recvs, so the kernel is a SendRecv.
         cpu("cpu_op", "nccl:all_to_all", 80, 10, R"("Input Dims": [[4096]], "Input type": ["float"])"), launch(81, 3),
         kernel(100, 30, 20, "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", corr(3))});
  };
  const ExecutionGraph g = read_pytorch_trace(write_ranks("no_metadata_inferred", {rank(0), rank(1)}));
  ASSERT_EQ(g.communicators().size(), 1u);
  EXPECT_EQ(g.communicators()[0].name, "world");
  const OpTable& ops = g.classes()[1].ops;
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops.collective(0), CollectiveKind::all_reduce);
  EXPECT_EQ(ops.bytes(0), 4000.0);  // 1000 fp32
  EXPECT_EQ(ops.collective(1), CollectiveKind::all_gather);
  EXPECT_EQ(ops.bytes(1), 1024.0);  // the gathered output: 2 ranks x 256 bf16
  EXPECT_EQ(ops.collective(2), CollectiveKind::all_to_all);
  EXPECT_EQ(ops.bytes(2), 16384.0);
}

TEST(PytorchTrace, ANcclKernelNothingDescribesIsRefusedWithItsEventIndex) {
  auto e = refusal("bare_sendrecv",
                   {rank_file(0, 2, {kernel(0, 1, 7, kGemm), kernel(5, 1, 20, kSendRecv)}), rank_file(1, 2, {})});
  EXPECT_EQ(e.json_path(), "/traceEvents/1");
  EXPECT_NE(e.message().find("SendRecv"), std::string::npos) << e.message();
  // The launching op is there but without shapes (recorded without record_shapes).
  e = refusal("no_shapes", {rank_file(0, 1,
                                      {cpu("cpu_op", "nccl:all_reduce", 5, 10), launch(7, 1),
                                       kernel(20, 30, 20, "ncclKernel_AllReduce_RING_LL_Sum_float", corr(1))})});
  EXPECT_EQ(e.json_path(), "/traceEvents/0");
  EXPECT_NE(e.message().find("Input Dims"), std::string::npos) << e.message();
  // A send in a 4-rank world without record_param_comms: the peer is unknown.
  e = refusal("no_peer",
              {rank_file(0, 4,
                         {cpu("cpu_op", "nccl:send", 5, 10, R"("Input Dims": [[16]], "Input type": ["float"])"),
                          launch(7, 1), kernel(20, 30, 20, kSendRecv, corr(1))}),
               rank_file(1, 4, {}), rank_file(2, 4, {}), rank_file(3, 4, {})});
  EXPECT_NE(e.message().find("peer"), std::string::npos) << e.message();
}

TEST(PytorchTrace, AScatterWhoseBuffersImplyASmallerGroupIsReplayedOverContiguousBlocks) {
  // One rank of 4, no metadata: the c10d op's output is half its input, so the reduce_scatter ran
  // over 2 ranks; with no group named anywhere, the world's contiguous blocks {0, 1}, {2, 3}.
  const std::string trace = rank_file(
      0, 4,
      {cpu("cpu_op", "c10d::_reduce_scatter_base_", 4, 20,
           R"("Input Dims": [[256], [512], [], []], "Input type": ["float", "float", "", "Scalar"])"),
       cpu("cpu_op", "nccl:_reduce_scatter_base", 5, 10, R"("Input Dims": [[512]], "Input type": ["float"])"),
       launch(7, 1), kernel(20, 30, 20, "ncclKernel_ReduceScatter_RING_LL_Sum_float(ncclWorkElem)", corr(1))});
  const ExecutionGraph g = read_pytorch_trace(write_ranks("blocks", {trace}));
  ASSERT_EQ(g.communicators().size(), 1u);
  EXPECT_EQ(g.communicators()[0].name, "block of 2");
  EXPECT_EQ(g.communicators()[0].groups, (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(g.classes()[0].ops.collective(0), CollectiveKind::reduce_scatter);
  EXPECT_EQ(g.classes()[0].ops.bytes(0), 2048.0);  // the input: 512 fp32
  EXPECT_NO_THROW(g.validate());
}

TEST(PytorchTrace, OneProfilerStepIsCutOut) {
  const std::string trace =
      rank_file(0, 1,
                {cpu("user_annotation", "ProfilerStep#3", 0, 100), cpu("user_annotation", "ProfilerStep#4", 100, 100),
                 launch(50, 1), kernel(60, 10, 7, kGemm, corr(1)), launch(150, 2), kernel(160, 20, 7, kGemm, corr(2)),
                 launch(151, 3), kernel(180, 30, 7, "elementwise_kernel", corr(3))});
  const std::string dir = write_ranks("steps", {trace});
  EXPECT_EQ(read_pytorch_trace(dir).classes()[0].ops.size(), 3u);
  const ExecutionGraph step3 = read_pytorch_trace_step(dir, "3");
  ASSERT_EQ(step3.classes()[0].ops.size(), 1u);
  EXPECT_DOUBLE_EQ(step3.classes()[0].ops.duration_s(0), 10e-6);
  const ExecutionGraph last = read_pytorch_trace_step(dir, "last");
  ASSERT_EQ(last.classes()[0].ops.size(), 2u);
  EXPECT_DOUBLE_EQ(last.classes()[0].ops.duration_s(1), 30e-6);
  const SpecError e = spec_error_of([&] { read_pytorch_trace_step(dir, "7"); });
  EXPECT_NE(e.message().find("ProfilerStep#3, ProfilerStep#4"), std::string::npos) << e.message();
}

TEST(PytorchTrace, RanksThatDisagreeAreRefusedAtTheEventWhereTheyPart) {
  const auto ar = [](int nelems) {
    return kernel(10, 5, 20, "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                  R"("Collective name": "allreduce", "dtype": "Float", "In msg nelems": )" + std::to_string(nelems));
  };
  // Rank 1's all-reduce is twice rank 0's.
  auto e = refusal("contradictory", {rank_file(0, 2, {ar(1024)}), rank_file(1, 2, {kernel(0, 1, 7, kGemm), ar(2048)})});
  EXPECT_NE(e.file().find("worker1"), std::string::npos) << e.file();
  EXPECT_EQ(e.json_path(), "/traceEvents/1");
  EXPECT_NE(e.message().find("8192 bytes"), std::string::npos) << e.message();
  // Rank 0 sends, rank 1 never receives.
  e = refusal("unmatched_send",
              {rank_file(0, 2, {kernel(10, 5, 20, kSendRecv, comm("send", 1, "[0, 1]"))}), rank_file(1, 2, {})});
  EXPECT_EQ(e.json_path(), "/traceEvents/0");
  EXPECT_NE(e.message().find("no matching recv"), std::string::npos) << e.message();
}

TEST(PytorchTrace, ATruncatedFileIsRefusedAtTheEventItStopsIn) {
  const std::string whole = rank_file(0, 1, {kernel(0, 1, 7, kGemm), kernel(5, 1, 7, kGemm)});
  const std::string cut = whole.substr(0, whole.find("\"ts\": 5"));
  const SpecError e = refusal("truncated", {cut});
  EXPECT_EQ(e.json_path(), "/traceEvents/1");
  EXPECT_NE(e.message().find("truncated"), std::string::npos) << e.message();
}

TEST(PytorchTrace, ANumberBeyondADoubleIsRefusedAtItsEvent) {
  const SpecError e =
      refusal("overflow", {rank_file(0, 1,
                                     {kernel(0, 1, 7, "k"), kernel(1, 1, 7, "k"),
                                      R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1e400, "dur": 1})"})});
  EXPECT_EQ(e.json_path(), "/traceEvents/2");
  EXPECT_NE(e.message().find("beyond the range of a double"), std::string::npos) << e.message();
}

TEST(PytorchTrace, AllocatorEventsGiveThePeakMemoryPerGpu) {
  // profile_memory=True: "[memory]" instant events with the caching allocator's totals per device
  // (Device Id -1 is host memory). The peak is the largest GPU "Total Reserved" of any rank.
  const auto memory = [](int device, long long allocated, long long reserved) {
    return R"({"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 3, "args": {"Device Id": )" +
           std::to_string(device) + R"(, "Total Allocated": )" + std::to_string(allocated) + R"(, "Total Reserved": )" +
           std::to_string(reserved) + "}}";
  };
  const ExecutionGraph g = read_pytorch_trace(
      write_ranks("memory", {rank_file(0, 2, {memory(0, 100, 2000), memory(0, 300, 4000), memory(-1, 0, 90000)}),
                             rank_file(1, 2, {memory(1, 200, 3000)})}));
  ASSERT_TRUE(g.peak_memory_bytes_per_gpu().has_value());
  EXPECT_EQ(*g.peak_memory_bytes_per_gpu(), 4000.0);
  EXPECT_FALSE(pytorch_example().peak_memory_bytes_per_gpu().has_value());  // recorded without profile_memory
}

// The real traces of the corpus (workloads/traces/corpus/README.md).
std::string corpus(const std::string& name) {
  return testing::example_trace("corpus/" + name);
}

TEST(PytorchTrace, GzipTracesAreReadAndATruncatedOneIsRefused) {
  // HTA's nccl_data: rank 0 of a 2-rank DDP run (PyTorch 2.1, NCCL 2.17), cut to ProfilerStep#6.
  const ExecutionGraph g = read_pytorch_trace(corpus("hta_ddp_nccl_rank0.json.gz"));
  EXPECT_EQ(g.world_size(), 2);
  ASSERT_EQ(g.classes().size(), 1u);  // one rank's trace stands for both
  std::size_t all_reduces = 0;
  const OpTable& ops = g.classes()[0].ops;
  for (OpId i = 0; i < ops.size(); ++i)
    if (ops.kind(i) == OpKind::collective && ops.collective(i) == CollectiveKind::all_reduce) ++all_reduces;
  EXPECT_EQ(all_reduces, 5u);
  const std::string bytes = [] {
    std::ifstream f(corpus("hta_ddp_nccl_rank0.json.gz"), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }();
  const std::string dir = testing::temp_dir("truncated_gz");
  testing::write_file(dir + "/rank0.json.gz", bytes.substr(0, bytes.size() / 2));
  const SpecError e = spec_error_of([&] { read_pytorch_trace(dir); });
  EXPECT_NE(e.message().find("truncated"), std::string::npos) << e.message();
}

// PARAM's DLRM example: a complete 8-rank world (PyTorch 2.0 era, V100s), every rank captured on its
// own clock (their ProfilerStep#10 begin up to 7.5 ms apart). NCCL kernels have no metadata; the
// "nccl:" record functions give the kind and size.
TEST(PytorchTrace, ARealEightRankWorldMeetsAtTheSameCollectives) {
  const ExecutionGraph g = read_pytorch_trace(corpus("param_dlrm_8r"));
  ASSERT_EQ(g.world_size(), 8);
  ASSERT_EQ(g.classes().size(), 8u);
  // Every rank, in GPU order: the "nccl:" record function's "Input Dims" x "Input type" size.
  const std::vector<std::pair<CollectiveKind, double>> expected = {
      {CollectiveKind::all_to_all, 6144 * 4.0},   {CollectiveKind::all_to_all, 24 * 8.0},
      {CollectiveKind::all_to_all, 384 * 4.0},    {CollectiveKind::all_to_all, 3392 * 4.0},
      {CollectiveKind::all_reduce, 394241 * 4.0}, {CollectiveKind::all_to_all, 6144 * 4.0},
      {CollectiveKind::all_reduce, 112 * 4.0},    {CollectiveKind::all_reduce, 226960 * 4.0}};
  for (const RankClass& c : g.classes()) {
    SCOPED_TRACE(c.name);
    std::vector<std::pair<CollectiveKind, double>> got;
    for (OpId i = 0; i < c.ops.size(); ++i)
      if (c.ops.kind(i) == OpKind::collective) got.emplace_back(c.ops.collective(i), c.ops.bytes(i));
    EXPECT_EQ(got, expected);
  }
}

// Traces whose kernels do not name their aten op (PARAM's DLRM gives a kernel its correlation id as
// "External id"): the GEMM shape comes from the innermost aten::bmm / mm / addmm enclosing the launch.
TEST(PytorchTrace, GemmShapesComeFromTheOpEnclosingTheLaunch) {
  const ExecutionGraph g = read_pytorch_trace(corpus("param_dlrm_8r"));
  // Rank 0's first batched GEMM: aten::bmm of [16, 27, 16] x [16, 16, 27] (the feature interaction),
  // kernel volta_sgemm_128x32_tn, 10 us.
  const OpTable& ops = g.classes()[0].ops;
  OpId bmm = static_cast<OpId>(ops.size());
  for (OpId i = 0; i < ops.size() && bmm == ops.size(); ++i)
    if (ops.name(i) == "volta_sgemm_128x32_tn") bmm = i;
  ASSERT_LT(bmm, ops.size());
  EXPECT_EQ(ops.kernel(bmm), KernelClass::gemm);
  EXPECT_EQ(ops.precision(bmm), Precision::fp32);
  EXPECT_EQ(ops.batch(bmm), 16u);
  EXPECT_EQ(ops.m(bmm), 27u);
  EXPECT_EQ(ops.k(bmm), 16u);
  EXPECT_EQ(ops.n(bmm), 27u);
  EXPECT_EQ(ops.flops(bmm), 2.0 * 16 * 27 * 27 * 16);
  EXPECT_DOUBLE_EQ(ops.duration_s(bmm), 10e-6);
}

// A GEMM op that launches several kernels (addmm: a bias broadcast, then the GEMM) counts its flops
// once, on its longest kernel. HTA's MI250 trace: addmm [5, 128] x [128, 128] and mm [128, 5] x [5, 128].
TEST(PytorchTrace, AGemmOpsFlopsAreCountedOnce) {
  const ExecutionGraph g = read_pytorch_trace(corpus("hta_mi250_rocm.json.gz"));
  const OpTable& ops = g.classes()[0].ops;
  double flops = 0.0;
  std::size_t gemms = 0;
  for (OpId i = 0; i < ops.size(); ++i) {
    if (ops.kind(i) != OpKind::compute) continue;
    flops += ops.flops(i);
    if (ops.flops(i) > 0.0) {
      ++gemms;
      EXPECT_EQ(ops.kernel(i), KernelClass::gemm) << ops.name(i);
      EXPECT_EQ(ops.name(i).rfind("Cijk_", 0), 0u) << ops.name(i);  // rocBLAS/Tensile GEMM kernels
    }
  }
  EXPECT_EQ(gemms, 2u);
  EXPECT_EQ(flops, 2.0 * 5 * 128 * 128 + 2.0 * 128 * 5 * 128);
}

// aten::linear and aten::matmul fold an activation's leading dimensions into the GEMM's rows.
TEST(PytorchTrace, LinearAndMatmulShapesFoldTheLeadingDimensions) {
  const auto gemm_under = [](const std::string& op, const std::string& dims) {
    const std::string file = rank_file(
        0, 1,
        {cpu("cpu_op", op, 0, 50, R"("Input Dims": )" + dims + R"(, "Input type": ["c10::BFloat16", "c10::BFloat16"])"),
         launch(10, 1), kernel(20, 30, 7, "sm90_xmma_gemm_bf16bf16_bf16f32", corr(1))});
    const ExecutionGraph g = read_pytorch_trace(write_ranks("gemm_" + op.substr(6), {file}));
    return g.classes()[0].ops.compute_op(0);
  };
  const ComputeOp linear = gemm_under("aten::linear", "[[4, 2048, 4096], [11008, 4096], []]");
  EXPECT_EQ(linear.m, 4u * 2048);
  EXPECT_EQ(linear.k, 4096u);
  EXPECT_EQ(linear.n, 11008u);
  EXPECT_EQ(linear.flops, 2.0 * 4 * 2048 * 4096 * 11008);
  EXPECT_EQ(linear.precision, Precision::bf16);
  const ComputeOp matmul = gemm_under("aten::matmul", "[[2, 8, 64], [64, 32]]");
  EXPECT_EQ(matmul.m, 16u);
  EXPECT_EQ(matmul.k, 64u);
  EXPECT_EQ(matmul.n, 32u);
  // Shapes that do not multiply are no GEMM.
  EXPECT_EQ(gemm_under("aten::linear", "[[4, 4096], [11008, 1024]]").flops, 0.0);
}

// Nested GEMM ops (linear -> matmul -> mm): the innermost describes the GEMM kernel; a layout copy
// that matmul launches outside mm is no GEMM, and the GEMM's flops count once.
TEST(PytorchTrace, NestedGemmOpsCountTheirGemmOnce) {
  const std::string bf16 = R"(, "Input type": ["c10::BFloat16", "c10::BFloat16"])";
  const std::string file =
      rank_file(0, 1,
                {cpu("cpu_op", "aten::linear", 0, 100, R"("Input Dims": [[2, 8, 64], [32, 64], []])" + bf16),
                 cpu("cpu_op", "aten::matmul", 5, 90, R"("Input Dims": [[2, 8, 64], [64, 32]])" + bf16), launch(10, 1),
                 cpu("cpu_op", "aten::mm", 20, 60, R"("Input Dims": [[16, 64], [64, 32]])" + bf16), launch(30, 2),
                 kernel(40, 3, 7, "void at::native::elementwise_kernel<128, 2>", corr(1)),
                 kernel(50, 30, 7, "sm90_xmma_gemm_bf16bf16_bf16f32", corr(2))});
  const ExecutionGraph g = read_pytorch_trace(write_ranks("nested_gemm", {file}));
  const OpTable& ops = g.classes()[0].ops;
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops.flops(0), 0.0);
  EXPECT_EQ(ops.kernel(0), KernelClass::elementwise);
  EXPECT_EQ(ops.flops(1), 2.0 * 16 * 64 * 32);
  EXPECT_EQ(ops.m(1), 16u);
}

// A contradictory real world: PARAM's DLRM with rank 5's last all-reduce kernel removed (as if its
// capture had stopped early) is refused at rank 0's all-reduce that rank 5 lacks.
TEST(PytorchTrace, ARealWorldWithARankCutShortIsRefusedAtTheEventWhereTheyPart) {
  // The index of a rank file's last all-reduce kernel.
  const auto last_all_reduce = [](const nlohmann::json& events) {
    std::size_t last = events.size();
    for (std::size_t i = 0; i < events.size(); ++i)
      if (events[i].value("cat", "") == "kernel" && events[i].value("name", "").rfind("ncclKernel_AllReduce", 0) == 0 &&
          (last == events.size() || events[i]["ts"].get<double>() > events[last]["ts"].get<double>()))
        last = i;
    return last;
  };
  const std::string dir = testing::temp_dir("dlrm_cut_short");
  std::size_t rank0_event = 0;
  for (int r = 0; r < 8; ++r) {
    const std::string name = "/rank" + std::to_string(r) + ".json";
    nlohmann::json doc = nlohmann::json::parse(read_trace_bytes(corpus("param_dlrm_8r" + name + ".gz"), "test"));
    auto& events = doc["traceEvents"];
    const std::size_t last = last_all_reduce(events);
    ASSERT_LT(last, events.size());
    if (r == 0) rank0_event = last;
    if (r == 5) events.erase(last);
    testing::write_file(dir + name, doc.dump());
  }
  const SpecError e = spec_error_of([&] { read_pytorch_trace(dir); });
  EXPECT_EQ(e.file(), dir + "/rank0.json") << e.message();
  EXPECT_EQ(e.json_path(), "/traceEvents/" + std::to_string(rank0_event)) << e.message();
  // Its 8th collective: the 226960-float gradient all-reduce.
  EXPECT_NE(e.message().find("rank 0's collective #8 of process group 'world' (all_reduce of 907840 bytes) has no "
                             "counterpart in rank 5's trace"),
            std::string::npos)
      << e.message();
}

// The kernel timeline calibrate --from-trace reads: HTA's DDP rank 0, ProfilerStep#6 (counted in the
// file by hand: 900 "kernel" events launched inside the step, 7 of them NCCL, each with its
// cudaLaunchKernel; 358 memcpy/memset activities), in GPU start order.
TEST(PytorchTrace, TheKernelTimelineOfAStepHasItsLaunches) {
  const KernelTimeline t = read_kernel_timeline(corpus("hta_ddp_nccl_rank0.json.gz"));
  EXPECT_EQ(t.step, "ProfilerStep#6");
  std::size_t kernels = 0, nccl = 0, copies = 0, launched = 0;
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    const TimelineKernel& k = t.kernels[i];
    (k.memcpy ? copies : kernels) += 1;
    nccl += k.communication ? 1 : 0;
    launched += !k.memcpy && k.launch_start_us ? 1 : 0;
    if (k.launch_start_us) {
      EXPECT_LE(*k.launch_start_us, k.start_us);  // launched before it ran
      EXPECT_GE(*k.launch_start_us, t.step_start_us);
    }
    if (i > 0) {
      EXPECT_LE(t.kernels[i - 1].start_us, k.start_us);
    }
    EXPECT_LE(k.start_us + k.duration_us, t.step_end_us);
  }
  EXPECT_EQ(kernels, 900u);
  EXPECT_EQ(nccl, 7u);
  EXPECT_EQ(launched, 900u);
  EXPECT_EQ(copies, 358u);
  EXPECT_GT(t.step_s(), 0.1);
  EXPECT_LT(t.step_s(), 1.0);
  // A step the trace does not have: the file and what it has.
  const SpecError e = spec_error_of([] { read_kernel_timeline(corpus("hta_ddp_nccl_rank0.json.gz"), "99"); });
  EXPECT_NE(e.message().find("ProfilerStep#6"), std::string::npos) << e.message();
}

}  // namespace
}  // namespace clustersim
