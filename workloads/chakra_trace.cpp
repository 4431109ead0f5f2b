// Chakra execution traces (MLCommons Chakra ET, protobuf): one file per rank, each a stream of
// varint-length-delimited messages, a GlobalMetadata then Nodes. docs/traces.md says what is mapped
// and what is dropped; in short:
//  - COMP_NODE (GPU; is_cpu_op false or absent) -> compute op: flops from "num_ops", bytes from
//    "tensor_size", duration_s from duration_micros (the measured time, used verbatim when > 0);
//  - COMM_COLL_NODE -> collective: kind from "comm_type", bytes from "comm_size", group from "pg_name";
//  - COMM_SEND_NODE / COMM_RECV_NODE -> send / recv: peer from "comm_dst" / "comm_src" (global ranks),
//    tag from "comm_tag";
//  - every other node (CPU ops, metadata, memory, storage) is dropped, its data dependencies passed on
//    to the nodes that depended on it. Only data_deps order nodes (ctrl_deps is the call stack).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message.h>
#include <nlohmann/json.hpp>

#include "chakra/chakra_et.pb.h"
#include "sim/core/error.hpp"
#include "sim/core/spec_document.hpp"
#include "workloads/kernel_names.hpp"
#include "workloads/trace_files.hpp"
#include "workloads/trace_format.hpp"
#include "workloads/trace_groups.hpp"

namespace clustersim {
namespace {

namespace pb = ::clustersim::chakra;

struct ProcessGroup {
  std::string desc;
  std::vector<int> ranks;
};

struct RankTrace {
  std::string file;
  std::vector<pb::Node> nodes;  // in file order
};

std::string node_path(std::size_t i) {
  return "/nodes/" + std::to_string(i);
}

// ---------------------------------------------------------------------------------------------------
// Attributes: Chakra writers differ in the integer type they use (int64_val, uint64_val, int32_val...),
// so every integer member is accepted.

const pb::AttributeProto* find_attr(const pb::Node& node, std::string_view name) {
  for (const auto& a : node.attr())
    if (a.name() == name) return &a;
  return nullptr;
}

// The value of a numeric member of the oneof, by its C++ type (every integer encoding of a width, e.g.
// int64, sint64, sfixed64, reads alike); nullopt for none set, a string or bytes.
std::optional<double> attr_number(const pb::AttributeProto& a) {
  using F = google::protobuf::FieldDescriptor;
  if (a.value_case() == pb::AttributeProto::VALUE_NOT_SET) return std::nullopt;
  const F* f = a.GetDescriptor()->FindFieldByNumber(static_cast<int>(a.value_case()));
  const google::protobuf::Reflection* r = a.GetReflection();
  switch (f->cpp_type()) {
    case F::CPPTYPE_DOUBLE:
      return r->GetDouble(a, f);
    case F::CPPTYPE_FLOAT:
      return r->GetFloat(a, f);
    case F::CPPTYPE_INT32:
      return r->GetInt32(a, f);
    case F::CPPTYPE_INT64:
      return static_cast<double>(r->GetInt64(a, f));
    case F::CPPTYPE_UINT32:
      return r->GetUInt32(a, f);
    case F::CPPTYPE_UINT64:
      return static_cast<double>(r->GetUInt64(a, f));
    case F::CPPTYPE_BOOL:
      return r->GetBool(a, f) ? 1.0 : 0.0;
    default:
      return std::nullopt;
  }
}

struct NodeAttrs {
  const pb::Node& node;
  const std::string& file;
  std::size_t index;

  std::string path(std::string_view name) const { return node_path(index) + "/attr/" + std::string(name); }

  std::optional<double> number(std::string_view name) const {
    const auto* a = find_attr(node, name);
    if (a == nullptr) return std::nullopt;
    const auto v = attr_number(*a);
    if (!v) throw SpecError(file, path(name), "expected a numeric attribute");
    return v;
  }
  std::optional<std::int64_t> integer(std::string_view name) const {
    const auto v = number(name);
    if (!v) return std::nullopt;
    if (*v != static_cast<double>(static_cast<std::int64_t>(*v)))
      throw SpecError(file, path(name), "expected an integer attribute");
    return static_cast<std::int64_t>(*v);
  }
  std::optional<double> non_negative(std::string_view name) const {
    const auto v = number(name);
    if (v && !(*v >= 0.0)) throw SpecError(file, path(name), "expected a number >= 0");
    return v;
  }
  std::optional<std::string> string(std::string_view name) const {
    const auto* a = find_attr(node, name);
    if (a == nullptr) return std::nullopt;
    if (a->value_case() == pb::AttributeProto::kStringVal) return a->string_val();
    if (const auto v = attr_number(*a)) {  // some writers store pg_name as a number
      if (*v == static_cast<double>(static_cast<std::int64_t>(*v)))
        return std::to_string(static_cast<std::int64_t>(*v));
    }
    throw SpecError(file, path(name), "expected a string attribute");
  }
  [[noreturn]] void fail(std::string_view name, const std::string& message) const {
    throw SpecError(file, path(name), "node " + std::to_string(node.id()) + " (\"" + node.name() + "\"): " + message);
  }
};

// ---------------------------------------------------------------------------------------------------
// Reading the files

RankTrace read_rank_file(const std::string& file) {
  namespace io = google::protobuf::io;
  const std::string bytes = read_text_file(file, "Chakra trace");
  io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  io::CodedInputStream in(&raw);
  const auto remaining = [&] { return bytes.size() - static_cast<std::size_t>(in.CurrentPosition()); };
  const auto read_message = [&](google::protobuf::MessageLite& msg, const std::string& where) {
    std::uint64_t len = 0;
    if (!in.ReadVarint64(&len) || len > remaining())
      throw SpecError(file, where, "truncated or not a Chakra ET file (a message's length runs past the end)");
    const auto limit = in.PushLimit(static_cast<int>(len));
    if (!msg.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
      throw SpecError(file, where, "malformed protobuf message (not a Chakra ET file?)");
    in.PopLimit(limit);
  };
  RankTrace t;
  t.file = file;
  if (bytes.empty()) throw SpecError(file, "", "empty file: a Chakra ET file starts with a GlobalMetadata message");
  pb::GlobalMetadata meta;
  read_message(meta, "/metadata");
  while (remaining() > 0) {
    pb::Node node;
    read_message(node, node_path(t.nodes.size()));
    t.nodes.push_back(std::move(node));
  }
  return t;
}

// PyTorch-derived traces describe their process groups in a METADATA_NODE named
// "## process_group:init ##" whose inputs.values holds a JSON list of
// {"pg_name", "pg_desc", "ranks", ...} (inside the Python text of a list of strings).
void read_process_groups(const RankTrace& t, int world_size, std::map<std::string, ProcessGroup>& groups) {
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    const pb::Node& n = t.nodes[i];
    if (n.type() != pb::METADATA_NODE || n.name().find("process_group:init") == std::string::npos) continue;
    const std::string& v = n.inputs().values();
    const std::string path = node_path(i) + "/inputs/values";
    const auto begin = v.find("[{");
    const auto end = v.rfind("}]");
    if (begin == std::string::npos || end == std::string::npos || end < begin) continue;  // no groups listed
    nlohmann::json list;
    try {
      list = nlohmann::json::parse(v.substr(begin, end + 2 - begin));
    } catch (const nlohmann::json::exception& e) {
      throw SpecError(t.file, path, std::string("unreadable process group list: ") + e.what());
    }
    for (const auto& g : list) {
      if (!g.is_object() || !g.contains("pg_name") || !g.contains("ranks") || !g["ranks"].is_array())
        throw SpecError(t.file, path, "a process group needs \"pg_name\" and \"ranks\"");
      const auto& name_v = g["pg_name"];
      const std::string name = name_v.is_string() ? name_v.get<std::string>() : name_v.dump();
      ProcessGroup pg;
      pg.desc = g.contains("pg_desc") && g["pg_desc"].is_string() ? g["pg_desc"].get<std::string>() : "";
      for (const auto& r : g["ranks"]) {
        if (!r.is_number_integer() || r.get<std::int64_t>() < 0 || r.get<std::int64_t>() >= world_size)
          throw SpecError(t.file, path,
                          "process group \"" + name + "\" has rank " + r.dump() + ", outside the trace's ranks 0.." +
                              std::to_string(world_size - 1));
        pg.ranks.push_back(r.get<int>());
      }
      if (pg.ranks.empty()) pg.ranks.resize(static_cast<std::size_t>(world_size));  // [] means every rank
      if (std::all_of(pg.ranks.begin(), pg.ranks.end(), [](int r) { return r == 0; }) && pg.ranks.size() > 1)
        for (std::size_t r = 0; r < pg.ranks.size(); ++r)
          pg.ranks[r] = static_cast<int>(r);
      const auto [it, inserted] = groups.emplace(name, pg);
      if (!inserted && it->second.ranks != pg.ranks)
        throw SpecError(t.file, path, "process group \"" + name + "\" has other ranks than in another rank's file");
    }
  }
}

bool is_comm(const pb::Node& n) {
  return n.type() == pb::COMM_COLL_NODE || n.type() == pb::COMM_SEND_NODE || n.type() == pb::COMM_RECV_NODE;
}

// Kept nodes become ops; the rest are dropped (their dependencies pass through).
bool is_kept(const pb::Node& n, const std::string& file, std::size_t index) {
  if (is_comm(n)) return true;
  if (n.type() != pb::COMP_NODE) return false;
  const auto cpu = NodeAttrs{n, file, index}.number("is_cpu_op");
  return !cpu || *cpu == 0.0;
}

// File positions in an order where every node comes after its data dependencies (file order where
// the file already is one).
std::vector<std::size_t> topological_order(const RankTrace& t) {
  const std::size_t n = t.nodes.size();
  std::unordered_map<std::uint64_t, std::size_t> index_of;
  index_of.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!index_of.emplace(t.nodes[i].id(), i).second)
      throw SpecError(t.file, node_path(i) + "/id", "node id " + std::to_string(t.nodes[i].id()) + " is used twice");
  }
  std::vector<std::vector<std::size_t>> children(n);
  std::vector<std::size_t> indegree(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& deps = t.nodes[i].data_deps();
    for (int j = 0; j < deps.size(); ++j) {
      const auto it = index_of.find(deps[j]);
      if (it == index_of.end())
        throw SpecError(t.file, node_path(i) + "/data_deps/" + std::to_string(j),
                        "node " + std::to_string(t.nodes[i].id()) + " depends on node " + std::to_string(deps[j]) +
                            ", which is not in the file");
      children[it->second].push_back(i);
      ++indegree[i];
    }
  }
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (indegree[i] == 0) ready.push(i);
  std::vector<std::size_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (std::size_t c : children[i])
      if (--indegree[c] == 0) ready.push(c);
  }
  if (order.size() != n) {
    std::size_t stuck = 0;
    while (indegree[stuck] == 0)
      ++stuck;
    throw SpecError(t.file, node_path(stuck) + "/data_deps",
                    "the data dependencies form a cycle through node " + std::to_string(t.nodes[stuck].id()));
  }
  return order;
}

CollectiveKind collective_kind(const NodeAttrs& a) {
  const auto type = a.integer("comm_type");
  if (!type) a.fail("comm_type", "a COMM_COLL_NODE needs a \"comm_type\" attribute");
  switch (*type) {
    case pb::ALL_REDUCE:
    case pb::BARRIER:
      return CollectiveKind::all_reduce;
    case pb::REDUCE:
      return CollectiveKind::reduce;
    case pb::ALL_GATHER:
      return CollectiveKind::all_gather;
    case pb::BROADCAST:
      return CollectiveKind::broadcast;
    case pb::ALL_TO_ALL:
      return CollectiveKind::all_to_all;
    case pb::REDUCE_SCATTER:
    case pb::REDUCE_SCATTER_BLOCK:
      return CollectiveKind::reduce_scatter;
    default:
      break;
  }
  a.fail("comm_type", "comm_type " + std::to_string(*type) +
                          " (GATHER, SCATTER or unknown) is not supported: supported are ALL_REDUCE, REDUCE, "
                          "ALL_GATHER, BROADCAST, ALL_TO_ALL, REDUCE_SCATTER(_BLOCK), BARRIER");
}

class ChakraImporter {
 public:
  explicit ChakraImporter(const std::string& path) : path_(path) {}

  ExecutionGraph run() {
    const auto files = list_rank_files(path_, ".et");
    const auto ranks = assign_ranks(files, {});
    world_ = static_cast<int>(files.size());
    traces_.resize(files.size());
    for (std::size_t i = 0; i < files.size(); ++i)
      traces_[static_cast<std::size_t>(ranks[i])] = read_rank_file(files[i].path);
    for (const auto& t : traces_)
      read_process_groups(t, world_, groups_);
    infer_unlisted_groups();

    TraceGroups comms(world_);
    std::vector<OpTable> tables;
    for (int r = 0; r < world_; ++r)
      tables.push_back(build_rank(r, comms));
    check_collective_counts(tables, comms);
    ExecutionGraph graph(world_);
    comms.add_to(graph);
    for (int r = 0; r < world_; ++r) {
      RankClass& rc = graph.add_class("rank " + std::to_string(r), {r});
      rc.ops = std::move(tables[static_cast<std::size_t>(r)]);
    }
    return graph;
  }

 private:
  // Every rank of a group calls the group's collectives the same number of times (NCCL's rule). A
  // rank file with fewer was cut short at a message boundary (a cut inside a message is caught when
  // reading): refused here as a truncated file, not replayed into a deadlock.
  void check_collective_counts(const std::vector<OpTable>& tables, const TraceGroups& comms) const {
    std::map<std::uint16_t, std::vector<std::size_t>> count;  // communicator -> per rank
    for (int r = 0; r < world_; ++r) {
      const OpTable& ops = tables[static_cast<std::size_t>(r)];
      for (OpId i = 0; i < ops.size(); ++i) {
        if (ops.kind(i) != OpKind::collective) continue;
        auto& per_rank = count[ops.communicator(i)];
        per_rank.resize(static_cast<std::size_t>(world_), 0);
        ++per_rank[static_cast<std::size_t>(r)];
      }
    }
    for (const auto& [c, per_rank] : count) {
      for (int r = 0; r < world_; ++r) {
        for (const int peer : comms.group(c, r)) {
          const std::size_t mine = per_rank[static_cast<std::size_t>(r)];
          const std::size_t theirs = per_rank[static_cast<std::size_t>(peer)];
          if (mine >= theirs) continue;
          const RankTrace& t = traces_[static_cast<std::size_t>(r)];
          throw SpecError(t.file, node_path(t.nodes.size()),
                          "rank " + std::to_string(r) + " calls " + std::to_string(mine) + " collectives on '" +
                              comms.name(c) + "' where rank " + std::to_string(peer) + " of its group calls " +
                              std::to_string(theirs) + ": the file is truncated (it ends after " +
                              std::to_string(t.nodes.size()) + " nodes) or the trace is incomplete");
        }
      }
    }
  }

  // A pg_name that no process-group metadata lists: its group is every rank whose trace uses it.
  void infer_unlisted_groups() {
    std::map<std::string, std::set<int>> users;
    for (int r = 0; r < world_; ++r) {
      const RankTrace& t = traces_[static_cast<std::size_t>(r)];
      for (std::size_t i = 0; i < t.nodes.size(); ++i) {
        if (!is_comm(t.nodes[i])) continue;
        if (const auto pg = NodeAttrs{t.nodes[i], t.file, i}.string("pg_name"); pg && !groups_.count(*pg))
          users[*pg].insert(r);
      }
    }
    for (const auto& [name, ranks] : users)
      groups_[name] = ProcessGroup{"", {ranks.begin(), ranks.end()}};
  }

  // The communicator of a node's process group ("pg_name"; none: every rank, labelled `fallback`).
  std::uint16_t group_of(const NodeAttrs& a, int rank, TraceGroups& comms, const std::string& fallback) {
    const auto pg = a.string("pg_name");
    if (!pg) {
      std::vector<int> world(static_cast<std::size_t>(world_));
      for (int r = 0; r < world_; ++r)
        world[static_cast<std::size_t>(r)] = r;
      return comms.communicator(fallback, world);
    }
    const ProcessGroup& g = groups_.at(*pg);
    if (std::find(g.ranks.begin(), g.ranks.end(), rank) == g.ranks.end())
      a.fail("pg_name", "rank " + std::to_string(rank) + " is not in its process group \"" + *pg + "\"");
    return comms.communicator(g.desc.empty() ? "pg " + *pg : g.desc, g.ranks);
  }

  OpTable build_rank(int rank, TraceGroups& comms) {
    const RankTrace& t = traces_[static_cast<std::size_t>(rank)];
    const auto order = topological_order(t);
    std::unordered_map<std::uint64_t, std::size_t> index_of;
    for (std::size_t i = 0; i < t.nodes.size(); ++i)
      index_of.emplace(t.nodes[i].id(), i);

    // Streams: the "stream" attribute where present, else one stream per node kind; the stream with
    // the most compute ops becomes stream 0, the others number from 1 in order of first use.
    std::vector<std::string> stream_key(t.nodes.size());
    std::map<std::string, std::size_t> compute_count;
    std::vector<std::string> first_use;
    for (std::size_t i : order) {
      const pb::Node& n = t.nodes[i];
      if (!is_kept(n, t.file, i)) continue;
      const NodeAttrs a{n, t.file, i};
      if (const auto s = a.integer("stream")) {
        stream_key[i] = "stream " + std::to_string(*s);
      } else {
        stream_key[i] = n.type() == pb::COMP_NODE        ? "compute"
                        : n.type() == pb::COMM_COLL_NODE ? "collective"
                        : n.type() == pb::COMM_SEND_NODE ? "send"
                                                         : "recv";
      }
      if (std::find(first_use.begin(), first_use.end(), stream_key[i]) == first_use.end())
        first_use.push_back(stream_key[i]);
      if (n.type() == pb::COMP_NODE) ++compute_count[stream_key[i]];
    }
    std::map<std::string, std::uint8_t> stream_of;
    if (!first_use.empty()) {
      std::string main = first_use.front();
      for (const auto& key : first_use)
        if (compute_count[key] > compute_count[main]) main = key;
      if (compute_count[main] > 0) stream_of[main] = kComputeStream;
      std::uint8_t next = stream_of.empty() ? 0 : 1;
      for (const auto& key : first_use) {
        if (stream_of.count(key)) continue;
        if (next == std::numeric_limits<std::uint8_t>::max())
          throw SpecError(t.file, "/nodes", "more than 255 streams in one rank's trace");
        stream_of[key] = next++;
      }
    }

    OpTable ops;
    // Per node: the ops it stands for as a dependency (itself, or for a dropped node the ops it
    // depended on).
    std::vector<std::vector<OpId>> stands_for(t.nodes.size());
    for (std::size_t i : order) {
      const pb::Node& n = t.nodes[i];
      std::vector<OpId> deps;
      for (std::uint64_t d : n.data_deps()) {
        const auto& s = stands_for[index_of.at(d)];
        deps.insert(deps.end(), s.begin(), s.end());
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      if (!is_kept(n, t.file, i)) {
        stands_for[i] = std::move(deps);
        continue;
      }
      const NodeAttrs a{n, t.file, i};
      const std::string name = n.name().empty() ? "node " + std::to_string(n.id()) : n.name();
      const std::uint8_t stream = stream_of.at(stream_key[i]);
      OpId id = 0;
      switch (n.type()) {
        case pb::COMP_NODE: {
          ComputeOp op;
          op.name = name;
          op.stream = stream;
          op.kernel = kernel_class_from_name(name);
          op.precision = precision_from_name(name, Precision::bf16);
          op.flops = a.non_negative("num_ops").value_or(0.0);
          op.bytes = a.non_negative("tensor_size").value_or(0.0);
          op.duration_s = static_cast<double>(n.duration_micros()) * 1e-6;
          id = ops.add_compute(op, deps);
          break;
        }
        case pb::COMM_COLL_NODE: {
          CollectiveOp op;
          op.name = name;
          op.stream = stream;
          op.collective = collective_kind(a);
          const auto size = a.non_negative("comm_size");
          if (!size) a.fail("comm_size", "a COMM_COLL_NODE needs a \"comm_size\" attribute (bytes)");
          op.bytes = *size;
          op.communicator = group_of(a, rank, comms, "world");
          id = ops.add_collective(op, deps);
          break;
        }
        default: {  // send, recv
          const bool send = n.type() == pb::COMM_SEND_NODE;
          P2POp op;
          op.name = name;
          op.kind = send ? OpKind::send : OpKind::recv;
          op.stream = stream;
          op.eager = true;  // ASTRA-sim's semantics: a send does not wait for its recv to be issued
          const auto size = a.non_negative("comm_size");
          if (!size) a.fail("comm_size", "a send or recv node needs a \"comm_size\" attribute (bytes)");
          op.bytes = *size;
          op.communicator = group_of(a, rank, comms, "p2p");
          const char* peer_key = send ? "comm_dst" : "comm_src";
          std::optional<std::int64_t> peer = a.integer(peer_key);
          const std::span<const int> group = comms.group(op.communicator, rank);
          const int n_group = static_cast<int>(group.size());
          if (!peer && n_group == 2) peer = group[0] == rank ? group[1] : group[0];  // the other rank of the pair
          if (!peer)
            a.fail(peer_key, std::string("a ") + (send ? "send" : "recv") + " node needs \"" + peer_key +
                                 "\" (the peer's global rank)");
          const auto peer_at = std::find(group.begin(), group.end(), *peer);
          if (*peer == rank || peer_at == group.end())
            a.fail(peer_key, "peer rank " + std::to_string(*peer) + " is not another rank of the node's group");
          const int offset = static_cast<int>(peer_at - group.begin()) - comms.position(op.communicator, rank);
          op.peer_offset = (offset % n_group + n_group) % n_group;
          if (const auto tag = a.integer("comm_tag")) {
            if (*tag < 0 || *tag > std::numeric_limits<std::uint32_t>::max())
              a.fail("comm_tag", "comm_tag " + std::to_string(*tag) + " is outside 0..4294967295");
            op.tag = static_cast<std::uint32_t>(*tag);
          }
          id = ops.add_p2p(op, deps);
          break;
        }
      }
      stands_for[i] = {id};
    }
    return ops;
  }

  std::string path_;
  int world_ = 0;
  std::vector<RankTrace> traces_;
  std::map<std::string, ProcessGroup> groups_;
};

}  // namespace

ExecutionGraph read_chakra_trace(const std::string& path) {
  return ChakraImporter(path).run();
}

}  // namespace clustersim
