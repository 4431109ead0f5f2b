// The native trace: written and read back, a graph is the same on every field and its text the same
// byte for byte; bad traces are refused with the JSON path of the bad value.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "../transformer_fixture.hpp"
#include "sim/core/error.hpp"
#include "sim/core/spec_document.hpp"
#include "trace_test_support.hpp"
#include "workloads/trace_format.hpp"
#include "workloads/transformer_generator.hpp"

namespace clustersim {
namespace {

using testing::expect_same_graph;
using testing::spec_error_of;

// Every op kind and field, awkward doubles and names included.
ExecutionGraph every_field_graph() {
  ExecutionGraph g(4);
  const auto dp = g.add_communicator({"dp", {{0, 2}, {1, 3}}});
  const auto pp = g.add_communicator({"pp", {{0, 1}, {2, 3}}});
  RankClass& first = g.add_class("stage \"0\"", {0, 2});
  ComputeOp gemm;
  gemm.name = "fwd.qkv \xce\xbb";  // a non-ASCII name
  gemm.kernel = KernelClass::gemm;
  gemm.precision = Precision::fp8;
  gemm.flops = 0.1;
  gemm.bytes = 1e-300;
  gemm.m = 4294967295u;
  gemm.n = 3;
  gemm.k = 5;
  gemm.batch = 0;
  gemm.duration_s = 3.141592653589793e-5;
  const OpId a = first.ops.add_compute(gemm);
  ComputeOp norm;
  norm.name = "fwd.norm";
  norm.kernel = KernelClass::normalization;
  norm.precision = Precision::tf32;
  norm.flops = 123456789012345678.0;
  norm.bytes = 2.5;
  norm.stream = 3;
  const OpId b = first.ops.add_compute(norm, std::vector<OpId>{a});
  const OpId s = first.ops.add_p2p({.name = "pp.send",
                                    .kind = OpKind::send,
                                    .communicator = pp,
                                    .peer_offset = 1,
                                    .tag = 7,
                                    .bytes = 1048576.0,
                                    .stream = 2},
                                   std::vector<OpId>{a, b});
  first.ops.add_collective({"dp.all_gather", CollectiveKind::all_gather, dp, 7.0e9, 1}, std::vector<OpId>{s});
  RankClass& second = g.add_class("stage 1", {1, 3});
  const OpId r = second.ops.add_p2p({.name = "pp.recv",
                                     .kind = OpKind::recv,
                                     .communicator = pp,
                                     .peer_offset = -1,
                                     .tag = 7,
                                     .bytes = 1048576.0,
                                     .stream = 2});
  second.ops.add_collective({"dp.reduce_scatter", CollectiveKind::reduce_scatter, dp, 0.0, 255}, std::vector<OpId>{r});
  for (auto kind :
       {CollectiveKind::all_reduce, CollectiveKind::all_to_all, CollectiveKind::broadcast, CollectiveKind::reduce})
    second.ops.add_collective({"c", kind, dp, 1.0, 1});
  // An all_to_allv over the groups of 2: bytes is the largest row sum.
  const std::vector<double> pairs{0.0, 1e-7, 3.0e9, 0.5};
  second.ops.add_collective({"ep.dispatch", CollectiveKind::all_to_all, dp, 3.0e9 + 0.5, 1, pairs});
  ComputeOp causal_backward;  // an attention kernel's mask and pass
  causal_backward.name = "bwd.attention";
  causal_backward.kernel = KernelClass::attention;
  causal_backward.m = causal_backward.n = 4096;
  causal_backward.k = 128;
  causal_backward.batch = 32;
  causal_backward.causal = true;
  causal_backward.backward = true;
  second.ops.add_compute(causal_backward);
  for (auto kernel : {KernelClass::attention, KernelClass::elementwise, KernelClass::optimizer, KernelClass::embedding,
                      KernelClass::loss}) {
    ComputeOp op;
    op.name = "k";
    op.kernel = kernel;
    op.precision = Precision::fp32;
    second.ops.add_compute(op);
  }
  return g;
}

TEST(NativeTrace, EveryFieldRoundTripsExactly) {
  const ExecutionGraph g = every_field_graph();
  const std::string text = write_native_trace(g);
  const ExecutionGraph back = parse_native_trace(text, "mem.json");
  expect_same_graph(g, back);
  EXPECT_EQ(write_native_trace(back), text);  // write -> read -> write: the same bytes
  EXPECT_NE(text.find("\"causal\": true"), std::string::npos);
  EXPECT_NE(text.find("\"backward\": true"), std::string::npos);
}

TEST(NativeTrace, GeneratedTrainingStepRoundTripsExactly) {
  WorkloadSpec s = testing::transformer_workload(
      "small", {.layers = 2, .hidden = 256, .heads = 4, .ffn_hidden = 1024, .seq_len = 128, .vocab = 1000}, 8, 2);
  s.parallelism.dp = 2;
  const ExecutionGraph g = generate_transformer_training(s, 2);
  ASSERT_GT(g.op_count(), 20u);
  const std::string text = write_native_trace(g);
  const ExecutionGraph back = parse_native_trace(text, "gen.json");
  expect_same_graph(g, back);
  EXPECT_EQ(write_native_trace(back), text);
}

TEST(NativeTrace, CheckedInExampleIsCanonicalAndReadsBack) {
  const std::string path = testing::example_trace("native/dp2_step.json");
  const std::string text = read_text_file(path, "trace");
  const ExecutionGraph g = read_native_trace(path);
  EXPECT_EQ(write_native_trace(g), text);
  EXPECT_EQ(g.world_size(), 2);
  ASSERT_EQ(g.communicators().size(), 1u);
  EXPECT_EQ(g.communicators()[0].name, "dp");
  EXPECT_EQ(g.communicators()[0].groups, (std::vector<std::vector<int>>{{0, 1}}));
  ASSERT_EQ(g.classes().size(), 1u);
  const OpTable& ops = g.classes()[0].ops;
  ASSERT_EQ(ops.size(), 9u);
  EXPECT_EQ(ops.kind(4), OpKind::collective);
  EXPECT_EQ(ops.collective(4), CollectiveKind::all_reduce);
  EXPECT_EQ(ops.bytes(4), 134217728.0);
  EXPECT_EQ(ops.stream(4), 1);
  EXPECT_EQ(ops.m(0), 4096u);
  EXPECT_EQ(ops.n(0), 16384u);
  EXPECT_EQ(ops.flops(0), 2.0 * 4096 * 16384 * 4096);
  EXPECT_EQ(ops.duration_s(8), 0.0011);  // the optimizer's measured time
  EXPECT_EQ(ops.duration_s(0), 0.0);     // the GEMMs are timed by the GPU model
  EXPECT_EQ(std::vector<OpId>(ops.deps(8).begin(), ops.deps(8).end()), (std::vector<OpId>{4, 7}));
}

TEST(NativeTrace, ReadThroughTheRegistry) {
  TraceSpec spec{"clustersim", testing::example_trace("native/dp2_step.json"), ""};
  EXPECT_EQ(read_trace(spec).op_count(), 9u);
  EXPECT_NE(find_trace_format("chakra"), nullptr);
  EXPECT_NE(find_trace_format("pytorch"), nullptr);
  EXPECT_EQ(trace_format_names(), (std::vector<std::string>{"clustersim", "chakra", "pytorch"}));
}

// A one-class, two-rank trace whose op list is `ops` (JSON text).
std::string trace_with_ops(const std::string& ops,
                           const std::string& comms = R"([{"name": "dp", "groups": [[0, 1]]}])") {
  return R"({"format": "clustersim-trace", "version": 1, "world_size": 2, "communicators": )" + comms +
         R"(, "classes": [{"name": "all", "ranks": [0, 1], "ops": [)" + ops + "]}]}";
}

SpecError refusal(const std::string& text) {
  return spec_error_of([&] { parse_native_trace(text, "bad.json"); });
}

TEST(NativeTrace, RefusesADependencyOnALaterOp) {
  const auto e = refusal(trace_with_ops(R"({"kind": "compute", "name": "a", "kernel": "gemm", "deps": [0]})"));
  EXPECT_EQ(e.file(), "bad.json");
  EXPECT_EQ(e.json_path(), "/classes/0/ops/0/deps/0");
  EXPECT_NE(e.message().find("earlier op"), std::string::npos) << e.message();
  const auto f = refusal(trace_with_ops(R"({"kind": "compute", "name": "a", "kernel": "gemm"},
                                           {"kind": "compute", "name": "b", "kernel": "gemm", "deps": [0, 1]})"));
  EXPECT_EQ(f.json_path(), "/classes/0/ops/1/deps/1");
}

TEST(NativeTrace, RefusesAnUnknownCommunicator) {
  const auto e = refusal(trace_with_ops(
      R"({"kind": "collective", "name": "a", "collective": "all_reduce", "communicator": "tp", "bytes": 1})"));
  EXPECT_EQ(e.json_path(), "/classes/0/ops/0/communicator");
  EXPECT_NE(e.message().find("expected one of dp"), std::string::npos) << e.message();
}

TEST(NativeTrace, RefusesUnknownKeysWithASuggestion) {
  const auto e = refusal(trace_with_ops(R"({"kind": "compute", "name": "a", "kernel": "gemm", "flopz": 1})"));
  EXPECT_EQ(e.json_path(), "/classes/0/ops/0/flopz");
  EXPECT_NE(e.message().find("flops"), std::string::npos) << e.message();
}

TEST(NativeTrace, RefusesAPeerOffsetThatPointsAtItself) {
  const auto e =
      refusal(trace_with_ops(R"({"kind": "send", "name": "s", "communicator": "dp", "peer_offset": 2, "bytes": 8})"));
  EXPECT_EQ(e.json_path(), "/classes/0/ops/0/peer_offset");
}

TEST(NativeTrace, RefusesBadValuesWithTheirPath) {
  EXPECT_EQ(refusal(trace_with_ops(R"({"kind": "compute", "name": "a", "kernel": "matmul"})")).json_path(),
            "/classes/0/ops/0/kernel");
  EXPECT_EQ(refusal(trace_with_ops(R"({"kind": "compute", "name": "a", "kernel": "gemm", "flops": -1})")).json_path(),
            "/classes/0/ops/0/flops");
  EXPECT_EQ(refusal(trace_with_ops(R"({"kind": "compute", "name": "a", "kernel": "gemm", "stream": 256})")).json_path(),
            "/classes/0/ops/0/stream");
  EXPECT_EQ(
      refusal(trace_with_ops(R"({"kind": "compute", "name": "a", "kernel": "gemm", "duration_s": -1e-3})")).json_path(),
      "/classes/0/ops/0/duration_s");
  EXPECT_EQ(refusal(trace_with_ops(R"({"kind": "wait", "name": "a"})")).json_path(), "/classes/0/ops/0/kind");
  // A rank in two groups of one communicator; a group rank out of range.
  EXPECT_EQ(refusal(trace_with_ops("", R"([{"name": "dp", "groups": [[0, 1], [1]]}])")).json_path(),
            "/communicators/0/groups/1/0");
  EXPECT_EQ(refusal(trace_with_ops("", R"([{"name": "dp", "groups": [[0, 2]]}])")).json_path(),
            "/communicators/0/groups/0/1");
  EXPECT_EQ(
      refusal(trace_with_ops("", R"([{"name": "dp", "groups": [[0]]}, {"name": "dp", "groups": [[1]]}])")).json_path(),
      "/communicators/1/name");
  // A rank that is in no group of the communicator its class uses.
  EXPECT_EQ(
      refusal(
          trace_with_ops(
              R"({"kind": "collective", "name": "a", "collective": "all_reduce", "communicator": "dp", "bytes": 1})",
              R"([{"name": "dp", "groups": [[0]]}])"))
          .json_path(),
      "/classes/0/ops/0/communicator");
}

// all_to_allv: per-pair sizes, an n x n matrix for groups of n ranks, on all_to_all only, with bytes
// its largest row sum.
TEST(NativeTrace, RefusesBadPairBytesWithTheirPath) {
  const auto op = [](const std::string& collective, const std::string& bytes, const std::string& pairs) {
    return trace_with_ops(R"({"kind": "collective", "name": "a2a", "collective": ")" + collective +
                          R"(", "communicator": "dp", "bytes": )" + bytes + R"(, "pair_bytes": )" + pairs + "}");
  };
  EXPECT_NO_THROW(parse_native_trace(op("all_to_all", "7", "[[1, 2], [3, 4]]"), "good.json"));
  const auto not_a2a = refusal(op("all_reduce", "7", "[[1, 2], [3, 4]]"));
  EXPECT_EQ(not_a2a.json_path(), "/classes/0/ops/0/pair_bytes");
  EXPECT_NE(not_a2a.message().find("all_to_all only"), std::string::npos) << not_a2a.what();
  const auto rows = refusal(op("all_to_all", "7", "[[1, 2]]"));
  EXPECT_EQ(rows.json_path(), "/classes/0/ops/0/pair_bytes");
  EXPECT_EQ(rows.message(), "expected 2 rows (the group has 2 ranks), got 1");
  EXPECT_EQ(refusal(op("all_to_all", "7", "[[1, 2], [3]]")).json_path(), "/classes/0/ops/0/pair_bytes/1");
  EXPECT_EQ(refusal(op("all_to_all", "7", "[[1, 2], [3, -4]]")).json_path(), "/classes/0/ops/0/pair_bytes/1/1");
  EXPECT_EQ(refusal(op("all_to_all", "7", "[[1, 2], [3, \"4\"]]")).json_path(), "/classes/0/ops/0/pair_bytes/1/1");
  const auto bytes = refusal(op("all_to_all", "8", "[[1, 2], [3, 4]]"));
  EXPECT_EQ(bytes.json_path(), "/classes/0/ops/0/bytes");
  EXPECT_EQ(bytes.message(), "an all_to_allv's bytes is the largest row sum of its pair_bytes, 7.0, got 8.0");
}

TEST(NativeTrace, RefusesBadDocuments) {
  EXPECT_EQ(
      refusal(R"({"format": "chakra", "version": 1, "world_size": 1, "communicators": [], "classes": []})").json_path(),
      "/format");
  EXPECT_EQ(
      refusal(R"({"format": "clustersim-trace", "version": 2, "world_size": 1, "communicators": [], "classes": []})")
          .json_path(),
      "/version");
  // Rank 1 of 2 in no class.
  const auto e = refusal(R"({"format": "clustersim-trace", "version": 1, "world_size": 2, "communicators": [],
                             "classes": [{"name": "a", "ranks": [0], "ops": []}]})");
  EXPECT_EQ(e.json_path(), "/classes");
  EXPECT_NE(e.message().find("rank 1"), std::string::npos);
  EXPECT_EQ(refusal(R"({"format": "clustersim-trace", "version": 1, "world_size": 2, "communicators": [],
                        "classes": [{"name": "a", "ranks": [0, 1], "ops": []}, {"name": "b", "ranks": [1], "ops": []}]})")
                .json_path(),
            "/classes/1/ranks/0");
  EXPECT_EQ(refusal("{\"format\": ").json_path(), "");  // malformed JSON: the file and where it broke
  EXPECT_EQ(spec_error_of([] { read_native_trace("/nonexistent/trace.json"); }).file(), "/nonexistent/trace.json");
}

}  // namespace
}  // namespace clustersim
