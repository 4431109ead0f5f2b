// clustersim's native trace: an ExecutionGraph as JSON, field by field (docs/traces.md).
//
// The writer's output is canonical: keys in a fixed order, one op per line, optional fields left out
// exactly when they hold their default (deps empty, GEMM shape 0 x 0 x 0 x 1, duration_s 0). Reading
// it back gives a graph equal on every field, and writing that again gives the same bytes (doubles
// are printed with the shortest text that reads back to the same value).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/spec_document.hpp"
#include "workloads/trace_format.hpp"

namespace clustersim {
namespace {

constexpr const char* kFormatTag = "clustersim-trace";
constexpr std::int64_t kVersion = 1;

using ordered_json = nlohmann::ordered_json;

template <typename Enum, std::size_t N>
std::vector<std::string> enum_names(const Enum (&values)[N]) {
  std::vector<std::string> names;
  for (Enum v : values)
    names.emplace_back(to_string(v));
  return names;
}

constexpr OpKind kOpKinds[] = {OpKind::compute, OpKind::collective, OpKind::send, OpKind::recv};
constexpr KernelClass kKernels[] = {KernelClass::gemm,          KernelClass::attention, KernelClass::elementwise,
                                    KernelClass::normalization, KernelClass::optimizer, KernelClass::embedding,
                                    KernelClass::loss};
constexpr CollectiveKind kCollectives[] = {CollectiveKind::all_reduce,     CollectiveKind::all_gather,
                                           CollectiveKind::reduce_scatter, CollectiveKind::all_to_all,
                                           CollectiveKind::broadcast,      CollectiveKind::reduce};
constexpr Precision kPrecisions[] = {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16,
                                     Precision::fp8};

template <typename Enum, std::size_t N>
Enum enum_from_name(const Enum (&values)[N], const std::string& name) {
  for (Enum v : values)
    if (name == to_string(v)) return v;
  return values[0];  // unreachable: the name was checked against enum_names()
}

// ---------------------------------------------------------------------------------------------------
// Writer

ordered_json op_json(const ExecutionGraph& graph, const OpTable& ops, OpId i) {
  ordered_json j;
  const OpKind kind = ops.kind(i);
  j["kind"] = to_string(kind);
  j["name"] = std::string(ops.name(i));
  j["stream"] = ops.stream(i);
  const auto deps = ops.deps(i);
  if (!deps.empty()) j["deps"] = std::vector<OpId>(deps.begin(), deps.end());
  switch (kind) {
    case OpKind::compute:
      j["kernel"] = to_string(ops.kernel(i));
      j["precision"] = to_string(ops.precision(i));
      j["flops"] = ops.flops(i);
      j["bytes"] = ops.bytes(i);
      if (ops.m(i) != 0 || ops.n(i) != 0 || ops.k(i) != 0 || ops.batch(i) != 1) {
        j["m"] = ops.m(i);
        j["n"] = ops.n(i);
        j["k"] = ops.k(i);
        j["batch"] = ops.batch(i);
      }
      if (ops.causal(i)) j["causal"] = true;
      if (ops.backward(i)) j["backward"] = true;
      if (ops.fp8_blockwise(i)) j["fp8_blockwise"] = true;
      if (ops.duration_s(i) != 0.0) j["duration_s"] = ops.duration_s(i);
      break;
    case OpKind::collective:
      j["collective"] = to_string(ops.collective(i));
      j["communicator"] = graph.communicators().at(ops.communicator(i)).name;
      j["bytes"] = ops.bytes(i);
      if (const std::vector<double>* m = ops.pair_bytes(i)) {
        const auto n = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(m->size()))));
        ordered_json rows = ordered_json::array();
        for (std::size_t r = 0; r < n; ++r)
          rows.push_back(std::vector<double>(m->begin() + static_cast<std::ptrdiff_t>(r * n),
                                             m->begin() + static_cast<std::ptrdiff_t>((r + 1) * n)));
        j["pair_bytes"] = rows;
      }
      break;
    case OpKind::send:
    case OpKind::recv:
      j["communicator"] = graph.communicators().at(ops.communicator(i)).name;
      j["peer_offset"] = ops.peer_offset(i);
      if (ops.tag(i) != 0) j["tag"] = ops.tag(i);
      if (ops.eager(i)) j["eager"] = true;
      j["bytes"] = ops.bytes(i);
      break;
  }
  return j;
}

// One line, with a space after each ',' and ':' (scalars as nlohmann prints them: doubles in their
// shortest round-trip form).
void dump_to(std::string& out, const ordered_json& j) {
  if (j.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, value] : j.items()) {
      if (!first) out += ", ";
      first = false;
      out += ordered_json(key).dump();
      out += ": ";
      dump_to(out, value);
    }
    out += '}';
  } else if (j.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (i > 0) out += ", ";
      dump_to(out, j[i]);
    }
    out += ']';
  } else {
    out += j.dump(-1, ' ', false, ordered_json::error_handler_t::strict);
  }
}

std::string dump(const ordered_json& j) {
  std::string out;
  dump_to(out, j);
  return out;
}

// Appends `items` (already dumped) as a JSON array, one per line at `indent`, or "[]".
void append_lines(std::string& out, const std::vector<std::string>& items, const std::string& indent,
                  const std::string& closing_indent) {
  if (items.empty()) {
    out += "[]";
    return;
  }
  out += "[\n";
  for (std::size_t i = 0; i < items.size(); ++i) {
    out += indent + items[i];
    out += i + 1 < items.size() ? ",\n" : "\n";
  }
  out += closing_indent + "]";
}

// ---------------------------------------------------------------------------------------------------
// Reader

std::vector<int> read_rank_list(const nlohmann::json& v, const std::string& file, const std::string& path,
                                int world_size) {
  if (!v.is_array()) throw SpecError(file, path, "expected an array of ranks, got " + describe_json(v));
  std::vector<int> ranks;
  ranks.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto& r = v[i];
    if (!r.is_number_integer() || r.get<std::int64_t>() < 0 || r.get<std::int64_t>() >= world_size)
      throw SpecError(file, path + "/" + std::to_string(i),
                      "expected a rank between 0 and " + std::to_string(world_size - 1) + ", got " + describe_json(r));
    ranks.push_back(r.get<int>());
  }
  return ranks;
}

struct CommunicatorIndex {
  std::vector<std::string> names;
  // Per communicator: each global rank's group size (0: the rank is in no group of it).
  std::vector<std::vector<int>> group_size_of_rank;
};

std::uint16_t read_communicator_ref(JsonReader& r, const CommunicatorIndex& index, const std::vector<int>& ranks) {
  const std::string name = r.choice("communicator", index.names);
  std::uint16_t c = 0;
  while (index.names[c] != name)
    ++c;
  for (int rank : ranks) {
    if (index.group_size_of_rank[c][static_cast<std::size_t>(rank)] == 0)
      r.fail("communicator",
             "rank " + std::to_string(rank) + " of this class is in no group of communicator \"" + name + "\"");
  }
  return c;
}

// An all_to_allv's per-pair bytes: n rows of n numbers >= 0 for the class's groups of n ranks (row i:
// what group position i sends to each position). Checks that `bytes` is the largest row sum.
std::vector<double> read_pair_bytes(JsonReader& r, const CommunicatorIndex& comms, std::uint16_t communicator,
                                    const std::vector<int>& ranks, double bytes) {
  const std::size_t n =
      ranks.empty()
          ? 0
          : static_cast<std::size_t>(comms.group_size_of_rank[communicator][static_cast<std::size_t>(ranks[0])]);
  for (int rank : ranks)
    if (static_cast<std::size_t>(comms.group_size_of_rank[communicator][static_cast<std::size_t>(rank)]) != n)
      r.fail("pair_bytes", "the ranks of this class are in groups of different sizes; per-pair sizes need one size");
  const std::string path = r.path_of("pair_bytes");
  const auto& rows = r.array("pair_bytes");
  if (rows.size() != n)
    throw SpecError(r.file(), path,
                    "expected " + std::to_string(n) + " rows (the group has " + std::to_string(n) + " ranks), got " +
                        std::to_string(rows.size()));
  std::vector<double> matrix;
  matrix.reserve(n * n);
  double largest_row = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& row = rows[i];
    if (!row.is_array() || row.size() != n)
      throw SpecError(r.file(), path + "/" + std::to_string(i),
                      "expected an array of " + std::to_string(n) + " byte counts, got " + describe_json(row));
    double sum = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      const auto& v = row[j];
      if (!v.is_number() || !(v.get<double>() >= 0.0) || !std::isfinite(v.get<double>()))
        throw SpecError(r.file(), path + "/" + std::to_string(i) + "/" + std::to_string(j),
                        "expected a number of bytes >= 0, got " + describe_json(v));
      matrix.push_back(v.get<double>());
      sum += v.get<double>();
    }
    largest_row = std::max(largest_row, sum);
  }
  if (std::abs(bytes - largest_row) > 1e-9 * largest_row)
    r.fail("bytes", "an all_to_allv's bytes is the largest row sum of its pair_bytes, " +
                        nlohmann::json(largest_row).dump() + ", got " + nlohmann::json(bytes).dump());
  return matrix;
}

void read_op(JsonReader r, std::size_t index, OpTable& ops, const CommunicatorIndex& comms,
             const std::vector<int>& ranks) {
  const auto kind = enum_from_name(kOpKinds, r.choice("kind", enum_names(kOpKinds)));
  const std::string name = r.string("name");
  const auto stream = static_cast<std::uint8_t>(r.integer_or("stream", kind == OpKind::compute ? kComputeStream : 1, 0,
                                                             std::numeric_limits<std::uint8_t>::max()));
  std::vector<OpId> deps;
  if (r.has("deps")) {
    const auto& d = r.array("deps");
    for (std::size_t j = 0; j < d.size(); ++j) {
      const auto& v = d[j];
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
          static_cast<std::size_t>(v.get<std::int64_t>()) >= index)
        throw SpecError(r.file(), r.path_of("deps") + "/" + std::to_string(j),
                        "a dependency is the index of an earlier op of the class (0.." +
                            (index == 0 ? std::string("none") : std::to_string(index - 1)) + "), got " +
                            describe_json(v));
      deps.push_back(static_cast<OpId>(v.get<std::int64_t>()));
    }
  }
  constexpr auto kU32 = static_cast<std::int64_t>(std::numeric_limits<std::uint32_t>::max());
  switch (kind) {
    case OpKind::compute: {
      ComputeOp op;
      op.name = name;
      op.stream = stream;
      op.kernel = enum_from_name(kKernels, r.choice("kernel", enum_names(kKernels)));
      op.precision = enum_from_name(kPrecisions, r.choice_or("precision", enum_names(kPrecisions), "bf16"));
      op.flops = r.number_or("flops", 0.0, NumberRange::non_negative());
      op.bytes = r.number_or("bytes", 0.0, NumberRange::non_negative());
      op.m = static_cast<std::uint32_t>(r.integer_or("m", 0, 0, kU32));
      op.n = static_cast<std::uint32_t>(r.integer_or("n", 0, 0, kU32));
      op.k = static_cast<std::uint32_t>(r.integer_or("k", 0, 0, kU32));
      op.batch = static_cast<std::uint32_t>(r.integer_or("batch", 1, 0, kU32));
      op.causal = r.boolean_or("causal", false);
      op.backward = r.boolean_or("backward", false);
      op.fp8_blockwise = r.boolean_or("fp8_blockwise", false);
      op.duration_s = r.number_or("duration_s", 0.0, NumberRange::non_negative());
      r.finish();
      ops.add_compute(op, deps);
      return;
    }
    case OpKind::collective: {
      CollectiveOp op;
      op.name = name;
      op.stream = stream;
      op.collective = enum_from_name(kCollectives, r.choice("collective", enum_names(kCollectives)));
      op.communicator = read_communicator_ref(r, comms, ranks);
      op.bytes = r.number("bytes", NumberRange::non_negative());
      std::vector<double> pair_bytes;
      if (r.has("pair_bytes")) {
        if (op.collective != CollectiveKind::all_to_all)
          r.fail("pair_bytes", std::string("per-pair sizes (an all_to_allv) are for all_to_all only, not ") +
                                   to_string(op.collective));
        pair_bytes = read_pair_bytes(r, comms, op.communicator, ranks, op.bytes);
        op.pair_bytes = pair_bytes;
      }
      r.finish();
      ops.add_collective(op, deps);
      return;
    }
    case OpKind::send:
    case OpKind::recv: {
      P2POp op;
      op.name = name;
      op.kind = kind;
      op.stream = stream;
      op.communicator = read_communicator_ref(r, comms, ranks);
      op.peer_offset = static_cast<std::int32_t>(
          r.integer("peer_offset", std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
      for (int rank : ranks) {
        const int n = comms.group_size_of_rank[op.communicator][static_cast<std::size_t>(rank)];
        if (op.peer_offset % n == 0)
          r.fail("peer_offset", "peer offset " + std::to_string(op.peer_offset) + " makes rank " +
                                    std::to_string(rank) + " its own peer (its group has " + std::to_string(n) +
                                    " ranks)");
      }
      op.tag = static_cast<std::uint32_t>(r.integer_or("tag", 0, 0, kU32));
      op.eager = r.boolean_or("eager", false);
      op.bytes = r.number("bytes", NumberRange::non_negative());
      r.finish();
      ops.add_p2p(op, deps);
      return;
    }
  }
}

}  // namespace

std::string write_native_trace(const ExecutionGraph& graph) {
  const auto& comms = graph.communicators();
  for (std::size_t a = 0; a < comms.size(); ++a)
    for (std::size_t b = a + 1; b < comms.size(); ++b)
      if (comms[a].name == comms[b].name)
        throw SimulationError("cannot write a native trace: two communicators are named \"" + comms[a].name + "\"");

  std::string out = "{\n";
  out += "  \"format\": \"" + std::string(kFormatTag) + "\",\n";
  out += "  \"version\": " + std::to_string(kVersion) + ",\n";
  out += "  \"world_size\": " + std::to_string(graph.world_size()) + ",\n";
  if (const auto tokens = graph.tokens_per_step())
    out += "  \"tokens_per_step\": " + dump(ordered_json(*tokens)) + ",\n";
  if (const auto peak = graph.peak_memory_bytes_per_gpu())
    out += "  \"peak_memory_bytes_per_gpu\": " + dump(ordered_json(*peak)) + ",\n";
  out += "  \"communicators\": ";
  std::vector<std::string> items;
  for (const auto& c : comms) {
    ordered_json j;
    j["name"] = c.name;
    j["groups"] = c.groups;
    items.push_back(dump(j));
  }
  append_lines(out, items, "    ", "  ");
  out += ",\n  \"classes\": ";
  if (graph.classes().empty()) {
    out += "[]";
  } else {
    out += "[\n";
    for (std::size_t c = 0; c < graph.classes().size(); ++c) {
      const RankClass& rc = graph.classes()[c];
      out += "    {\n";
      out += "      \"name\": " + dump(ordered_json(rc.name)) + ",\n";
      out += "      \"ranks\": " + dump(ordered_json(rc.ranks)) + ",\n";
      out += "      \"ops\": ";
      items.clear();
      for (OpId i = 0; i < rc.ops.size(); ++i)
        items.push_back(dump(op_json(graph, rc.ops, i)));
      append_lines(out, items, "        ", "      ");
      out += "\n    }";
      out += c + 1 < graph.classes().size() ? ",\n" : "\n";
    }
    out += "  ]";
  }
  out += "\n}\n";
  return out;
}

ExecutionGraph parse_native_trace(std::string_view text, const std::string& file) {
  const SpecDocument doc = parse_spec_text(text, file);
  if (!doc.json.is_object()) throw SpecError(file, "", "expected a JSON object (a clustersim trace)");
  JsonReader root(doc.json, file);
  const std::string tag = root.string("format");
  if (tag != kFormatTag)
    root.fail("format",
              std::string("expected \"") + kFormatTag + "\" (a clustersim native trace), got \"" + tag + "\"");
  root.integer("version", kVersion, kVersion);
  // At most the GPUs a cluster may have (2^20): 2^31 - 1 ran into std::bad_alloc building per-rank tables.
  const int world_size = static_cast<int>(root.integer("world_size", 1, std::int64_t{1} << 20));
  ExecutionGraph graph(world_size);
  graph.set_tokens_per_step(root.optional_number("tokens_per_step", NumberRange::positive()));
  graph.set_peak_memory_bytes_per_gpu(root.optional_number("peak_memory_bytes_per_gpu", NumberRange::positive()));

  CommunicatorIndex comms;
  const auto& comm_array = root.array("communicators");
  for (std::size_t c = 0; c < comm_array.size(); ++c) {
    JsonReader cr = root.element("communicators", c);
    Communicator comm;
    comm.name = cr.string("name");
    if (comm.name.empty()) cr.fail("name", "a communicator needs a name");
    for (const auto& n : comms.names)
      if (n == comm.name) cr.fail("name", "communicator \"" + comm.name + "\" is defined twice");
    std::vector<int> size_of(static_cast<std::size_t>(world_size), 0);
    const auto& groups = cr.array("groups");
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const std::string gpath = cr.path_of("groups") + "/" + std::to_string(g);
      std::vector<int> group = read_rank_list(groups[g], file, gpath, world_size);
      if (group.empty()) throw SpecError(file, gpath, "a group needs at least one rank");
      for (std::size_t i = 0; i < group.size(); ++i) {
        auto& s = size_of[static_cast<std::size_t>(group[i])];
        if (s != 0)
          throw SpecError(
              file, gpath + "/" + std::to_string(i),
              "rank " + std::to_string(group[i]) + " is already in a group of communicator \"" + comm.name + "\"");
        s = static_cast<int>(group.size());
      }
      comm.groups.push_back(std::move(group));
    }
    cr.finish();
    if (comms.names.size() > std::numeric_limits<std::uint16_t>::max())
      cr.fail_here("too many communicators (at most 65536)");
    comms.names.push_back(comm.name);
    comms.group_size_of_rank.push_back(std::move(size_of));
    graph.add_communicator(std::move(comm));
  }

  std::vector<int> class_of(static_cast<std::size_t>(world_size), -1);
  const auto& class_array = root.array("classes");
  for (std::size_t c = 0; c < class_array.size(); ++c) {
    JsonReader cr = root.element("classes", c);
    std::string name = cr.string("name");
    std::vector<int> ranks = read_rank_list(cr.raw("ranks"), file, cr.path_of("ranks"), world_size);
    if (ranks.empty()) cr.fail("ranks", "a rank class needs at least one rank");
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      auto& owner = class_of[static_cast<std::size_t>(ranks[i])];
      if (owner != -1)
        throw SpecError(file, cr.path_of("ranks") + "/" + std::to_string(i),
                        "rank " + std::to_string(ranks[i]) + " is already in class " + std::to_string(owner));
      owner = static_cast<int>(c);
    }
    RankClass& rc = graph.add_class(std::move(name), ranks);
    const auto& op_array = cr.array("ops");
    for (std::size_t i = 0; i < op_array.size(); ++i) {
      if (!op_array[i].is_object())
        throw SpecError(file, cr.path_of("ops") + "/" + std::to_string(i),
                        "expected an op object, got " + describe_json(op_array[i]));
      read_op(JsonReader(op_array[i], file, cr.path_of("ops") + "/" + std::to_string(i)), i, rc.ops, comms, rc.ranks);
    }
    cr.finish();
  }
  for (int r = 0; r < world_size; ++r) {
    if (class_of[static_cast<std::size_t>(r)] == -1)
      root.fail("classes", "rank " + std::to_string(r) + " (of world_size " + std::to_string(world_size) +
                               ") is in no rank class");
  }
  root.finish();
  return graph;
}

ExecutionGraph read_native_trace(const std::string& path) {
  return parse_native_trace(read_text_file(path, "trace"), path);
}

}  // namespace clustersim
