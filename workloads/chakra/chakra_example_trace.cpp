// Writes the example Chakra trace of workloads/traces/chakra/: a synthetic 4-rank training step with
// two pipeline stages (ranks 0, 1: stage 0; ranks 2, 3: stage 1) and data parallelism 2 within each
// stage. Each rank's file pp2_dp2.<rank>.et holds a GlobalMetadata, a PyTorch-style process-group
// metadata node, GPU compute nodes, activation/gradient send and recv nodes between the stages, a
// data-parallel gradient all-reduce, a world all-reduce without a pg_name, and a CPU node that the
// reader drops. Figures are illustrative, not measured (docs/traces.md).
//
//   ninja -C build chakra_example_trace && build/bin/chakra_example_trace workloads/traces/chakra
#include <cstdint>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "chakra/chakra_et.pb.h"

namespace {

namespace pb = ::clustersim::chakra;

constexpr std::int64_t kMiB = 1 << 20;

void add_int(pb::Node& n, const std::string& name, std::int64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}

void add_int32(pb::Node& n, const std::string& name, std::int32_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int32_val(v);
}

void add_bool(pb::Node& n, const std::string& name, bool v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_bool_val(v);
}

void add_string(pb::Node& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_string_val(v);
}

class RankWriter {
 public:
  pb::Node& node(pb::NodeType type, const std::string& name, std::vector<std::uint64_t> deps) {
    pb::Node& n = nodes_.emplace_back();
    n.set_id(next_id_++);
    n.set_name(name);
    n.set_type(type);
    for (auto d : deps)
      n.add_data_deps(d);
    if (type != pb::METADATA_NODE) add_bool(n, "is_cpu_op", false);
    return n;
  }
  std::uint64_t last_id() const { return next_id_ - 1; }

  pb::Node& compute(const std::string& name, std::vector<std::uint64_t> deps, double flops, std::uint64_t bytes,
                    std::uint64_t micros) {
    pb::Node& n = node(pb::COMP_NODE, name, std::move(deps));
    add_int(n, "num_ops", static_cast<std::int64_t>(flops));
    auto* a = n.add_attr();
    a->set_name("tensor_size");
    a->set_uint64_val(bytes);
    n.set_duration_micros(micros);
    return n;
  }
  pb::Node& collective(const std::string& name, std::vector<std::uint64_t> deps, pb::CollectiveCommType type,
                       std::int64_t bytes, const std::string& pg) {
    pb::Node& n = node(pb::COMM_COLL_NODE, name, std::move(deps));
    add_int(n, "comm_type", type);
    add_int(n, "comm_size", bytes);
    if (!pg.empty()) add_string(n, "pg_name", pg);
    return n;
  }
  pb::Node& p2p(bool send, const std::string& name, std::vector<std::uint64_t> deps, int peer, std::int64_t bytes,
                const std::string& pg) {
    pb::Node& n = node(send ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE, name, std::move(deps));
    add_int(n, "comm_size", bytes);
    add_int32(n, send ? "comm_dst" : "comm_src", peer);
    add_int32(n, "comm_tag", 0);
    add_string(n, "pg_name", pg);
    return n;
  }

  void write(const std::string& path) const {
    std::ofstream out(path, std::ios::binary);
    google::protobuf::io::OstreamOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream coded(&raw);
    pb::GlobalMetadata meta;
    meta.set_version("0.0.4");
    auto* a = meta.add_attr();
    a->set_name("schema");
    a->set_string_val("clustersim example (synthetic)");
    const auto put = [&](const google::protobuf::MessageLite& m) {
      coded.WriteVarint64(m.ByteSizeLong());
      m.SerializeWithCachedSizes(&coded);
    };
    put(meta);
    for (const auto& n : nodes_)
      put(n);
  }

 private:
  std::vector<pb::Node> nodes_;
  std::uint64_t next_id_ = 1;
};

// The process groups, as PyTorch's execution-trace observer records them.
constexpr const char* kProcessGroups =
    R"(['[{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": 4, "ranks": [0, 1, 2, 3]}, )"
    R"({"pg_name": "1", "pg_desc": "dp", "backend_config": "cuda:nccl", "pg_size": 2, "ranks": [0, 1]}, )"
    R"({"pg_name": "2", "pg_desc": "dp", "backend_config": "cuda:nccl", "pg_size": 2, "ranks": [2, 3]}, )"
    R"({"pg_name": "3", "pg_desc": "pp", "backend_config": "cuda:nccl", "pg_size": 2, "ranks": [0, 2]}, )"
    R"({"pg_name": "4", "pg_desc": "pp", "backend_config": "cuda:nccl", "pg_size": 2, "ranks": [1, 3]}]'])";

RankWriter rank_trace(int rank) {
  RankWriter w;
  const bool first_stage = rank < 2;
  const std::string dp_pg = first_stage ? "1" : "2";
  const std::string pp_pg = rank % 2 == 0 ? "3" : "4";
  const int peer = first_stage ? rank + 2 : rank - 2;
  const std::int64_t activation = 4 * kMiB;
  const std::int64_t gradients = 64 * kMiB;

  w.node(pb::METADATA_NODE, "## process_group:init ##", {}).mutable_inputs()->set_values(kProcessGroups);
  std::uint64_t grads_ready = 0;
  if (first_stage) {
    const auto fwd = w.compute("fwd.gemm", {}, 2.0e12, 96 * kMiB, 7000).id();
    const auto send = w.p2p(true, "pp.send_activation", {fwd}, peer, activation, pp_pg).id();
    const auto recv = w.p2p(false, "pp.recv_grad", {send}, peer, activation, pp_pg).id();
    grads_ready = w.compute("bwd.gemm", {recv}, 4.0e12, 192 * kMiB, 14000).id();
  } else {
    const auto recv = w.p2p(false, "pp.recv_activation", {}, peer, activation, pp_pg).id();
    const auto fwd = w.compute("fwd.gemm", {recv}, 2.0e12, 96 * kMiB, 7000).id();
    const auto loss = w.compute("loss.cross_entropy", {fwd}, 1.0e9, 32 * kMiB, 400).id();
    grads_ready = w.compute("bwd.gemm", {loss}, 4.0e12, 192 * kMiB, 14000).id();
    w.p2p(true, "pp.send_grad", {grads_ready}, peer, activation, pp_pg);
  }
  const auto ar = w.collective("dp.grad_all_reduce", {grads_ready}, pb::ALL_REDUCE, gradients, dp_pg).id();
  // A CPU op (dropped by the reader): the optimizer step depends on the all-reduce through it.
  pb::Node& cpu = w.node(pb::COMP_NODE, "aten::_foreach_mul_", {ar});
  cpu.mutable_attr(0)->set_bool_val(true);  // is_cpu_op
  cpu.set_duration_micros(50);
  const auto adam = w.compute("optimizer.adam", {cpu.id()}, 1.0e9, 512 * kMiB, 300).id();
  // A collective without pg_name: every rank of the trace.
  w.collective("grad_norm.all_reduce", {adam}, pb::ALL_REDUCE, 4, "");
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: chakra_example_trace OUTPUT_DIRECTORY\n";
    return 2;
  }
  for (int rank = 0; rank < 4; ++rank) {
    rank_trace(rank).write(std::string(argv[1]) + "/pp2_dp2." + std::to_string(rank) + ".et");
  }
  return 0;
}
