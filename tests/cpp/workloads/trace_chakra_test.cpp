// Chakra execution traces: the checked-in 4-rank example read op by op, and malformed traces (built
// here byte by byte with Chakra's field numbers, independently of the reader's schema) refused with
// the file and the node.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "sim/core/spec_document.hpp"
#include "trace_test_support.hpp"
#include "workloads/trace_format.hpp"

namespace clustersim {
namespace {

using testing::chakra_example;
using testing::deps_of;
using testing::spec_error_of;

std::uint16_t communicator_named(const ExecutionGraph& g, const std::string& name) {
  for (std::size_t c = 0; c < g.communicators().size(); ++c)
    if (g.communicators()[c].name == name) return static_cast<std::uint16_t>(c);
  ADD_FAILURE() << "no communicator " << name;
  return 0;
}

TEST(ChakraTrace, ExampleHasOneClassPerRankAndItsProcessGroups) {
  const ExecutionGraph& g = chakra_example();
  EXPECT_EQ(g.world_size(), 4);
  ASSERT_EQ(g.classes().size(), 4u);
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(g.classes()[static_cast<std::size_t>(r)].ranks, std::vector<int>{r});
  // The process groups of the metadata node, gathered by description; the pg_name-less collective
  // spans every rank.
  ASSERT_EQ(g.communicators().size(), 3u);
  using Groups = std::vector<std::vector<int>>;
  EXPECT_EQ(g.communicators()[communicator_named(g, "pp")].groups, (Groups{{0, 2}, {1, 3}}));
  EXPECT_EQ(g.communicators()[communicator_named(g, "dp")].groups, (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(g.communicators()[communicator_named(g, "world")].groups, (Groups{{0, 1, 2, 3}}));
  EXPECT_NO_THROW(g.validate());
}

TEST(ChakraTrace, FirstStageRankOpsAreMappedFieldByField) {
  const ExecutionGraph& g = chakra_example();
  const OpTable& ops = g.classes()[0].ops;
  // fwd, send, recv, bwd, all-reduce, adam, world all-reduce: the metadata and CPU nodes are dropped.
  ASSERT_EQ(ops.size(), 7u);
  EXPECT_EQ(ops.kind(0), OpKind::compute);
  EXPECT_EQ(ops.name(0), "fwd.gemm");
  EXPECT_EQ(ops.kernel(0), KernelClass::gemm);
  EXPECT_EQ(ops.flops(0), 2.0e12);            // num_ops
  EXPECT_EQ(ops.bytes(0), 96.0 * (1 << 20));  // tensor_size
  EXPECT_DOUBLE_EQ(ops.duration_s(0), 7000e-6);
  EXPECT_EQ(ops.stream(0), kComputeStream);

  EXPECT_EQ(ops.kind(1), OpKind::send);
  EXPECT_EQ(ops.communicator(1), communicator_named(g, "pp"));
  EXPECT_EQ(ops.peer_offset(1), 1);  // rank 0 -> rank 2: positions 0 -> 1 of group {0, 2}
  EXPECT_EQ(ops.bytes(1), 4.0 * (1 << 20));
  EXPECT_EQ(deps_of(ops, 1), std::vector<OpId>{0});
  EXPECT_EQ(ops.kind(2), OpKind::recv);
  EXPECT_EQ(ops.peer_offset(2), 1);
  // Sends and recvs without a "stream" attribute get streams of their own (no send/recv deadlock on
  // one in-order stream), apart from the compute stream.
  EXPECT_NE(ops.stream(1), ops.stream(2));
  EXPECT_NE(ops.stream(1), kComputeStream);

  EXPECT_EQ(ops.kind(4), OpKind::collective);
  EXPECT_EQ(ops.collective(4), CollectiveKind::all_reduce);
  EXPECT_EQ(ops.communicator(4), communicator_named(g, "dp"));
  EXPECT_EQ(ops.bytes(4), 64.0 * (1 << 20));
  EXPECT_NE(ops.stream(4), kComputeStream);
  // The optimizer depended on a dropped CPU node, which depended on the all-reduce.
  EXPECT_EQ(ops.name(5), "optimizer.adam");
  EXPECT_EQ(ops.kernel(5), KernelClass::optimizer);
  EXPECT_EQ(deps_of(ops, 5), std::vector<OpId>{4});
  EXPECT_EQ(ops.communicator(6), communicator_named(g, "world"));
  EXPECT_EQ(ops.bytes(6), 4.0);
}

TEST(ChakraTrace, SecondStageReceivesFirstAndSendsGradientsBack) {
  const ExecutionGraph& g = chakra_example();
  const OpTable& ops = g.classes()[3].ops;
  // recv, fwd, loss, bwd, send, all-reduce, adam, world all-reduce.
  ASSERT_EQ(ops.size(), 8u);
  EXPECT_EQ(ops.kind(0), OpKind::recv);
  EXPECT_EQ(ops.peer_offset(0), 1);  // rank 3 <- rank 1: group {1, 3}, (0 - 1) mod 2
  EXPECT_EQ(ops.kernel(2), KernelClass::loss);
  EXPECT_EQ(ops.kind(4), OpKind::send);
  EXPECT_EQ(ops.communicator(4), communicator_named(g, "pp"));
  EXPECT_EQ(ops.kind(5), OpKind::collective);
  EXPECT_EQ(deps_of(ops, 5), std::vector<OpId>{3});
}

TEST(ChakraTrace, DirectoryAndPatternGiveTheSameGraph) {
  const ExecutionGraph from_dir = read_chakra_trace(testing::example_trace("chakra"));
  testing::expect_same_graph(chakra_example(), from_dir);
  EXPECT_EQ(read_trace({"chakra", testing::example_trace("chakra/pp2_dp2.{rank}.et"), ""}).op_count(),
            chakra_example().op_count());
}

// ---------------------------------------------------------------------------------------------------
// Hand-encoded protobuf (Chakra's et_def.proto field numbers).

std::string varint(std::uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  s += static_cast<char>(v);
  return s;
}
std::string field_varint(int field, std::uint64_t v) {
  return varint(static_cast<std::uint64_t>(field) << 3) + varint(v);
}
std::string field_bytes(int field, const std::string& b) {
  return varint((static_cast<std::uint64_t>(field) << 3) | 2) + varint(b.size()) + b;
}
std::string delimited(const std::string& message) {
  return varint(message.size()) + message;
}

// AttributeProto: name = 1, int64_val = 9, bool_val = 27.
std::string int_attr(const std::string& name, std::int64_t v) {
  return field_bytes(10, field_bytes(1, name) + field_varint(9, static_cast<std::uint64_t>(v)));
}
// Node: id = 1, name = 2, type = 3, data_deps = 5, attr = 10. Types: COMP 4, SEND 5, RECV 6, COLL 7.
std::string node(std::uint64_t id, int type, const std::vector<std::uint64_t>& deps, const std::string& attrs) {
  std::string n = field_varint(1, id) + field_bytes(2, "n" + std::to_string(id)) +
                  field_varint(3, static_cast<std::uint64_t>(type));
  for (auto d : deps)
    n += field_varint(5, d);
  return delimited(n + attrs);
}
const std::string kMetadata = delimited(field_bytes(1, "0.0.4"));  // GlobalMetadata.version

std::string write_ranks(const std::string& name, const std::vector<std::string>& files) {
  return testing::write_rank_files(name, "t.{rank}.et", files);
}

TEST(ChakraTrace, HandEncodedNodesUseChakrasFieldNumbers) {
  // Rank 0 all-reduces 1 MiB with rank 1 and sends it 8 bytes (comm_dst 1, tag 3); rank 1 receives.
  const std::string r0 = kMetadata + node(5, 4, {}, int_attr("num_ops", 1000)) +
                         node(6, 7, {5}, int_attr("comm_type", 0) + int_attr("comm_size", 1 << 20)) +
                         node(7, 5, {5}, int_attr("comm_size", 8) + int_attr("comm_dst", 1) + int_attr("comm_tag", 3));
  const std::string r1 = kMetadata + node(1, 7, {}, int_attr("comm_type", 0) + int_attr("comm_size", 1 << 20)) +
                         node(2, 6, {}, int_attr("comm_size", 8) + int_attr("comm_src", 0) + int_attr("comm_tag", 3));
  const ExecutionGraph g = read_chakra_trace(write_ranks("encoded", {r0, r1}));
  ASSERT_EQ(g.classes().size(), 2u);
  const OpTable& a = g.classes()[0].ops;
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a.flops(0), 1000.0);
  EXPECT_EQ(a.duration_s(0), 0.0);  // no duration_micros: the GPU model times it
  EXPECT_EQ(a.bytes(1), 1048576.0);
  EXPECT_EQ(a.kind(2), OpKind::send);
  EXPECT_EQ(a.tag(2), 3u);
  EXPECT_EQ(a.peer_offset(2), 1);
  EXPECT_EQ(g.classes()[1].ops.kind(1), OpKind::recv);
  EXPECT_EQ(g.classes()[1].ops.peer_offset(1), 1);
}

TEST(ChakraTrace, NodesOutOfOrderAreSortedByTheirDependencies) {
  // Node 9 (first in the file) depends on node 8 (second).
  const std::string r0 = kMetadata + node(9, 4, {8}, "") + node(8, 4, {}, "");
  const ExecutionGraph g = read_chakra_trace(write_ranks("order", {r0}));
  const OpTable& ops = g.classes()[0].ops;
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops.name(0), "n8");
  EXPECT_EQ(deps_of(ops, 1), std::vector<OpId>{0});
}

SpecError refusal(const std::string& name, const std::vector<std::string>& files) {
  return spec_error_of([&] { read_chakra_trace(write_ranks(name, files)); });
}

TEST(ChakraTrace, RefusesMalformedTracesNamingTheNode) {
  auto e = refusal("no_comm_type", {kMetadata + node(1, 7, {}, int_attr("comm_size", 8))});
  EXPECT_EQ(e.json_path(), "/nodes/0/attr/comm_type");
  EXPECT_NE(e.file().find("t.0.et"), std::string::npos) << e.file();
  e = refusal("gather", {kMetadata + node(1, 7, {}, int_attr("comm_type", 3) + int_attr("comm_size", 8))});
  EXPECT_EQ(e.json_path(), "/nodes/0/attr/comm_type");
  e = refusal("missing_dep", {kMetadata + node(1, 4, {}, "") + node(2, 4, {77}, "")});
  EXPECT_EQ(e.json_path(), "/nodes/1/data_deps/0");
  e = refusal("cycle", {kMetadata + node(1, 4, {2}, "") + node(2, 4, {1}, "")});
  EXPECT_NE(e.message().find("cycle"), std::string::npos);
  e = refusal("duplicate", {kMetadata + node(1, 4, {}, "") + node(1, 4, {}, "")});
  EXPECT_EQ(e.json_path(), "/nodes/1/id");
  // A send with no peer in a 3-rank world; a send to itself.
  const std::string idle = kMetadata;
  e = refusal("no_peer", {kMetadata + node(1, 5, {}, int_attr("comm_size", 8)), idle, idle});
  EXPECT_EQ(e.json_path(), "/nodes/0/attr/comm_dst");
  e = refusal("self", {kMetadata + node(1, 5, {}, int_attr("comm_size", 8) + int_attr("comm_dst", 0)), idle});
  EXPECT_EQ(e.json_path(), "/nodes/0/attr/comm_dst");
}

TEST(ChakraTrace, RefusesFilesThatAreNotChakraTraces) {
  const std::string good = read_text_file(testing::example_trace("chakra/pp2_dp2.0.et"), "trace");
  auto e = refusal("truncated", {good.substr(0, good.size() - 10)});
  EXPECT_NE(e.message().find("truncated"), std::string::npos) << e.message();
  EXPECT_EQ(e.json_path().rfind("/nodes/", 0), 0u) << e.json_path();
  e = refusal("text", {std::string("{\"traceEvents\": []}")});
  EXPECT_FALSE(e.message().empty());
  e = refusal("empty", {std::string()});
  EXPECT_NE(e.message().find("empty"), std::string::npos);
  EXPECT_NE(spec_error_of([] { read_chakra_trace("/nonexistent/trace.{rank}.et"); }).message().find("rank 0"),
            std::string::npos);
}

}  // namespace
}  // namespace clustersim
