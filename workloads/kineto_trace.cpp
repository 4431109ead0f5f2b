// PyTorch profiler traces (Kineto Chrome-trace JSON), one file per rank. docs/traces.md says what is
// mapped and what is dropped; in short:
//  - every GPU activity ("kernel", "gpu_memcpy", "gpu_memset" events) becomes an op on its CUDA
//    stream, in GPU start order; CPU-side events only describe them;
//  - NCCL kernels (names starting "nccl") are collectives or sends/recvs, described by the kernel's own
//    args or by the record_param_comms CPU op that launched them: "Collective name", "In/Out msg
//    nelems", "dtype", "Process Group Name/Description/Ranks", "Rank" (a send's or recv's peer);
//  - other kernels are compute ops that keep their measured duration (duration_s); their class and
//    precision come from their names, GEMM flops and shape from the launching aten::mm/addmm/bmm/
//    baddbmm's "Input Dims";
//  - cross-stream dependencies are inferred: a collective waits for the last kernel launched before
//    it on every other stream (ProcessGroupNCCL makes its stream wait on the caller's), and a kernel
//    that sat ready on an idle stream until an op of another stream ended waited on that op.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/spec_document.hpp"
#include "workloads/kernel_names.hpp"
#include "workloads/trace_files.hpp"
#include "workloads/trace_format.hpp"
#include "workloads/trace_groups.hpp"

namespace clustersim {
namespace {

using json = nlohmann::json;

// A kernel that starts this long (µs) after it could have started, right (within this long) after an
// op of another stream ended, waited on that op.
constexpr double kGateToleranceUs = 5.0;

std::string lower_alnum(std::string_view s) {
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<std::int64_t> int_arg(const json* args, const char* key) {
  if (args == nullptr || !args->contains(key)) return std::nullopt;
  const json& v = (*args)[key];
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float() && v.get<double>() == static_cast<double>(static_cast<std::int64_t>(v.get<double>())))
    return static_cast<std::int64_t>(v.get<double>());
  if (v.is_string()) {
    try {
      std::size_t used = 0;
      const long long x = std::stoll(v.get<std::string>(), &used);
      if (used == v.get<std::string>().size()) return x;
    } catch (const std::exception&) {
    }
  }
  return std::nullopt;
}

std::string string_arg(const json* args, const char* key) {
  if (args == nullptr || !args->contains(key)) return "";
  const json& v = (*args)[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// Bytes of one element of a PyTorch dtype as record_param_comms names it.
std::optional<double> dtype_bytes(const std::string& dtype) {
  static constexpr std::pair<const char*, double> kSizes[] = {{"Float", 4},
                                                              {"float", 4},
                                                              {"Double", 8},
                                                              {"double", 8},
                                                              {"Half", 2},
                                                              {"half", 2},
                                                              {"BFloat16", 2},
                                                              {"bfloat16", 2},
                                                              {"Int", 4},
                                                              {"int", 4},
                                                              {"Long", 8},
                                                              {"long", 8},
                                                              {"Short", 2},
                                                              {"Char", 1},
                                                              {"Byte", 1},
                                                              {"Bool", 1},
                                                              {"Float8_e4m3fn", 1},
                                                              {"Float8_e5m2", 1},
                                                              {"ComplexFloat", 8},
                                                              {"ComplexDouble", 16},
                                                              {"Float8_e4m3fnuz", 1},
                                                              {"Float8_e5m2fnuz", 1}};
  for (const auto& [name, size] : kSizes)
    if (dtype == name) return size;
  return std::nullopt;
}

struct GpuEvent {
  std::size_t index = 0;  // in traceEvents
  std::string name;
  bool memcpy = false;
  double ts = 0.0, dur = 0.0;  // µs
  std::int64_t stream = 0;
  std::optional<std::int64_t> correlation, external_id;
  const json* args = nullptr;
  bool nccl = false;
  double launch_ts = 0.0;  // CPU time of its launch (its GPU start when the launch is not in the trace)
  std::string launch_tid;
};

struct CpuOp {
  std::size_t index = 0;
  std::string name;
  double ts = 0.0, dur = 0.0;
  std::string tid;
  const json* args = nullptr;
};

struct CommInfo {
  bool p2p = false;
  OpKind p2p_kind = OpKind::send;
  CollectiveKind kind = CollectiveKind::all_reduce;
  double bytes = 0.0;
  std::string label;
  std::vector<int> group;  // global ranks
  int peer = -1;           // p2p: the peer's global rank
};

struct RankTrace {
  std::string file;
  json doc;
  std::optional<int> rank, world_size;
  std::vector<GpuEvent> gpu;  // sorted by (ts, index)
  std::vector<CpuOp> comm_ops;
  std::unordered_map<std::int64_t, std::size_t> cpu_by_external_id;  // index into cpu_ops
  std::vector<CpuOp> cpu_ops;                                        // aten ops with Input Dims
  std::unordered_map<std::int64_t, std::size_t> comm_by_external_id;
};

std::string event_path(std::size_t i) {
  return "/traceEvents/" + std::to_string(i);
}

RankTrace read_rank_file(const std::string& file) {
  RankTrace t;
  t.file = file;
  t.doc = parse_spec_text(read_text_file(file, "PyTorch profiler trace"), file).json;
  const json* events = nullptr;
  if (t.doc.is_object()) {
    JsonReader root(t.doc, file);
    events = &root.array("traceEvents");
    if (const auto info = root.optional_object("distributedInfo")) {
      JsonReader d = *info;
      if (d.has("rank")) t.rank = static_cast<int>(d.integer("rank", 0, std::numeric_limits<int>::max()));
      if (d.has("world_size"))
        t.world_size = static_cast<int>(d.integer("world_size", 1, std::numeric_limits<int>::max()));
    }
  } else if (t.doc.is_array()) {
    events = &t.doc;
  } else {
    throw SpecError(file, "", "expected a Chrome trace: an object with \"traceEvents\" or an array of events");
  }

  std::unordered_map<std::int64_t, std::pair<double, std::string>> launches;  // correlation -> (ts, tid)
  for (std::size_t i = 0; i < events->size(); ++i) {
    const json& e = (*events)[i];
    if (!e.is_object()) throw SpecError(file, event_path(i), "expected an event object, got " + describe_json(e));
    if (e.value("ph", "") != "X") continue;
    const std::string cat = e.contains("cat") && e["cat"].is_string() ? e["cat"].get<std::string>() : "";
    const std::string lcat = lower_alnum(cat);
    const bool gpu = lcat == "kernel" || lcat == "gpumemcpy" || lcat == "gpumemset";
    const bool cpu = lcat == "cpuop" || lcat == "usercpuop";
    const bool runtime = lcat == "cudaruntime" || lcat == "cudadriver";
    if (!gpu && !cpu && !runtime) continue;
    JsonReader r(e, file, event_path(i));
    const double ts = r.number("ts");
    const double dur = r.number("dur", NumberRange::non_negative());
    const json* args = e.contains("args") && e["args"].is_object() ? &e["args"] : nullptr;
    const std::string name = r.string("name");
    const std::string tid = e.contains("tid") ? e["tid"].dump() : "";
    if (runtime) {
      if (const auto c = int_arg(args, "correlation")) launches[*c] = {ts, tid};
    } else if (cpu) {
      CpuOp op{i, name, ts, dur, tid, args};
      const auto ext = int_arg(args, "External id");
      if (name == "record_param_comms") {
        if (ext) t.comm_by_external_id[*ext] = t.comm_ops.size();
        t.comm_ops.push_back(op);
      } else if (args != nullptr && args->contains("Input Dims") && ext) {
        t.cpu_by_external_id[*ext] = t.cpu_ops.size();
        t.cpu_ops.push_back(op);
      }
    } else {
      GpuEvent g;
      g.index = i;
      g.name = name;
      g.memcpy = lcat != "kernel";
      g.ts = ts;
      g.dur = dur;
      g.args = args;
      const auto stream = int_arg(args, "stream");
      if (!stream && !int_arg(&e, "tid"))
        throw SpecError(file, event_path(i) + "/args", "a GPU event needs its CUDA stream (args.stream)");
      g.stream = stream ? *stream : *int_arg(&e, "tid");
      g.correlation = int_arg(args, "correlation");
      g.external_id = int_arg(args, "External id");
      g.nccl = !g.memcpy && name.rfind("nccl", 0) == 0;
      t.gpu.push_back(std::move(g));
    }
  }
  for (auto& g : t.gpu) {
    g.launch_ts = g.ts;
    if (g.correlation) {
      if (const auto it = launches.find(*g.correlation); it != launches.end()) {
        g.launch_ts = it->second.first;
        g.launch_tid = it->second.second;
      }
    }
  }
  std::stable_sort(t.gpu.begin(), t.gpu.end(), [](const GpuEvent& a, const GpuEvent& b) { return a.ts < b.ts; });
  return t;
}

class KinetoImporter {
 public:
  explicit KinetoImporter(const std::string& path) : path_(path) {}

  ExecutionGraph run() {
    const auto files = list_rank_files(path_, ".json");
    std::vector<RankTrace> traces;
    for (const auto& f : files)
      traces.push_back(read_rank_file(f.path));
    std::optional<int> declared_world;
    for (const auto& t : traces) {
      if (!t.world_size) continue;
      if (declared_world && *declared_world != *t.world_size)
        throw SpecError(t.file, "/distributedInfo/world_size",
                        "world_size " + std::to_string(*t.world_size) + " differs from another rank's (" +
                            std::to_string(*declared_world) + ")");
      declared_world = t.world_size;
    }
    // One file standing for every rank of a larger world: each rank is assumed to do the same work
    // (data parallelism); its collectives must then span the whole world and it may not send or recv.
    replicated_ = traces.size() == 1 && declared_world && *declared_world > 1;
    world_ = replicated_ ? *declared_world : static_cast<int>(traces.size());
    if (!replicated_ && declared_world && *declared_world != world_)
      throw SpecError(path_, "",
                      "the trace has " + std::to_string(world_) +
                          " rank files but its distributedInfo says world_size " + std::to_string(*declared_world) +
                          ": give every rank's file (or a single rank's)");
    std::vector<int> ranks(1, traces[0].rank.value_or(0));
    if (!replicated_) {
      std::vector<std::optional<int>> declared;
      for (const auto& t : traces)
        declared.push_back(t.rank);
      ranks = assign_ranks(files, declared);
    }

    TraceGroups comms(world_);
    std::vector<OpTable> tables;
    for (std::size_t i = 0; i < traces.size(); ++i)
      tables.push_back(build_rank(traces[i], ranks[i], comms));
    ExecutionGraph graph(world_);
    comms.add_to(graph);
    if (replicated_) {
      std::vector<int> all(static_cast<std::size_t>(world_));
      for (int r = 0; r < world_; ++r)
        all[static_cast<std::size_t>(r)] = r;
      graph.add_class("all ranks (rank " + std::to_string(ranks[0]) + "'s trace)", all).ops = std::move(tables[0]);
    } else {
      std::vector<std::size_t> file_of(traces.size());
      for (std::size_t i = 0; i < traces.size(); ++i)
        file_of[static_cast<std::size_t>(ranks[i])] = i;
      for (int r = 0; r < world_; ++r)
        graph.add_class("rank " + std::to_string(r), {r}).ops = std::move(tables[file_of[static_cast<std::size_t>(r)]]);
    }
    return graph;
  }

 private:
  // The collective metadata of an NCCL kernel: its own args, or its record_param_comms op.
  const json* comm_args(const RankTrace& t, const GpuEvent& g) const {
    if (g.args != nullptr && g.args->contains("Collective name")) return g.args;
    if (g.external_id) {
      if (const auto it = t.comm_by_external_id.find(*g.external_id); it != t.comm_by_external_id.end())
        return t.comm_ops[it->second].args;
    }
    // The innermost record_param_comms on the launching thread that encloses the launch.
    const CpuOp* best = nullptr;
    for (const auto& op : t.comm_ops) {
      if (op.tid != g.launch_tid || op.ts > g.launch_ts || op.ts + op.dur < g.launch_ts) continue;
      if (best == nullptr || op.ts >= best->ts) best = &op;
    }
    return best != nullptr ? best->args : nullptr;
  }

  CommInfo comm_info(const RankTrace& t, const GpuEvent& g, int rank) const {
    const std::string where = event_path(g.index);
    const json* a = comm_args(t, g);
    if (a == nullptr)
      throw SpecError(t.file, where,
                      "NCCL kernel \"" + g.name +
                          "\" has no collective metadata: neither its args nor a record_param_comms op launching it "
                          "give \"Collective name\" and \"In msg nelems\" (profile with PyTorch >= 2.1)");
    const auto fail = [&](const std::string& msg) -> void {
      throw SpecError(t.file, where, "NCCL kernel \"" + g.name + "\": " + msg);
    };
    CommInfo c;
    const std::string coll = lower_alnum(string_arg(a, "Collective name"));
    const std::string kernel = lower_alnum(g.name);
    const std::string what = coll.empty() ? kernel : coll;
    if (what.find("send") != std::string::npos && what.find("sendrecv") == std::string::npos) {
      c.p2p = true;
      c.p2p_kind = OpKind::send;
    } else if (what.find("recv") != std::string::npos && what.find("sendrecv") == std::string::npos) {
      c.p2p = true;
      c.p2p_kind = OpKind::recv;
    } else if (what.find("alltoall") != std::string::npos) {
      c.kind = CollectiveKind::all_to_all;
    } else if (what.find("allreduce") != std::string::npos || what.find("barrier") != std::string::npos) {
      c.kind = CollectiveKind::all_reduce;
    } else if (what.find("allgather") != std::string::npos) {
      c.kind = CollectiveKind::all_gather;
    } else if (what.find("reducescatter") != std::string::npos) {
      c.kind = CollectiveKind::reduce_scatter;
    } else if (what.find("broadcast") != std::string::npos) {
      c.kind = CollectiveKind::broadcast;
    } else if (what.find("reduce") != std::string::npos) {
      c.kind = CollectiveKind::reduce;
    } else {
      fail("unrecognized collective \"" + string_arg(a, "Collective name") +
           "\" (known: all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, barrier, send, recv)");
    }
    const auto in = int_arg(a, "In msg nelems");
    const auto out = int_arg(a, "Out msg nelems");
    if (!in && !out) fail("no \"In msg nelems\" / \"Out msg nelems\": the message size is unknown");
    const std::string dtype = string_arg(a, "dtype");
    const auto elem = dtype_bytes(dtype);
    if (!elem) fail("unknown dtype \"" + dtype + "\"");
    // nccl-tests counts the larger buffer: all_gather's output, reduce_scatter's input.
    c.bytes = static_cast<double>(std::max(in.value_or(0), out.value_or(0))) * *elem;

    // The process group: its ranks, else global rank start/stride and size, else the whole world.
    const auto size = int_arg(a, "Group size");
    if (a->contains("Process Group Ranks")) {
      json ranks = (*a)["Process Group Ranks"];
      if (ranks.is_string()) {
        try {
          ranks = json::parse(ranks.get<std::string>());
        } catch (const json::exception&) {
          fail("unreadable \"Process Group Ranks\"");
        }
      }
      if (!ranks.is_array()) fail("\"Process Group Ranks\" is not a list of ranks");
      for (const auto& r : ranks) {
        if (!r.is_number_integer()) fail("\"Process Group Ranks\" is not a list of ranks");
        c.group.push_back(r.get<int>());
      }
    } else if (const auto start = int_arg(a, "Global rank start"), stride = int_arg(a, "Global rank stride");
               start && stride && size && *start >= 0 && *stride > 0) {
      for (std::int64_t i = 0; i < *size; ++i)
        c.group.push_back(static_cast<int>(*start + i * *stride));
    }
    if (c.group.empty()) {
      if (size && *size != world_)
        fail("its process group has " + std::to_string(*size) +
             " ranks but the trace gives no \"Process Group Ranks\"");
      for (int r = 0; r < world_; ++r)
        c.group.push_back(r);
    }
    for (int r : c.group)
      if (r < 0 || r >= world_)
        fail("its process group has rank " + std::to_string(r) + ", outside the trace's ranks 0.." +
             std::to_string(world_ - 1));
    if (std::find(c.group.begin(), c.group.end(), rank) == c.group.end())
      fail("rank " + std::to_string(rank) + " is not in its process group");
    if (replicated_ && static_cast<int>(c.group.size()) != world_)
      fail(
          "a single rank's trace can stand for every rank only when its collectives span the whole world; give "
          "every rank's file");
    const std::string desc = string_arg(a, "Process Group Description");
    const std::string name = string_arg(a, "Process Group Name");
    c.label = !desc.empty() && desc != "undefined"         ? desc
              : !name.empty()                              ? "pg " + name
              : static_cast<int>(c.group.size()) == world_ ? "world"
                                                           : "group";
    if (c.p2p) {
      if (replicated_) fail("a single rank's trace cannot stand for every rank when it sends or receives");
      const auto peer = int_arg(a, "Rank");  // record_param_comms gets the peer's group rank for send/recv
      if (!peer || *peer < 0 || *peer >= static_cast<std::int64_t>(c.group.size()))
        fail("a send or recv needs the peer's rank in its group (record_param_comms \"Rank\")");
      c.peer = c.group[static_cast<std::size_t>(*peer)];
      if (c.peer == rank) fail("a send or recv to itself");
    }
    return c;
  }

  // GEMM flops and shape from the aten op that launched a kernel.
  static void describe_gemm(const RankTrace& t, const GpuEvent& g, ComputeOp& op) {
    if (!g.external_id) return;
    const auto it = t.cpu_by_external_id.find(*g.external_id);
    if (it == t.cpu_by_external_id.end()) return;
    const CpuOp& cpu = t.cpu_ops[it->second];
    const json& dims = (*cpu.args)["Input Dims"];
    const auto dim = [&](std::size_t input, std::size_t axis) -> std::int64_t {
      if (!dims.is_array() || input >= dims.size() || !dims[input].is_array() || axis >= dims[input].size() ||
          !dims[input][axis].is_number_integer())
        return -1;
      return dims[input][axis].get<std::int64_t>();
    };
    std::int64_t b = 1, m = -1, n = -1, k = -1;
    if (cpu.name == "aten::mm") {
      m = dim(0, 0), k = dim(0, 1), n = dim(1, 1);
    } else if (cpu.name == "aten::addmm") {
      m = dim(1, 0), k = dim(1, 1), n = dim(2, 1);
    } else if (cpu.name == "aten::bmm") {
      b = dim(0, 0), m = dim(0, 1), k = dim(0, 2), n = dim(1, 2);
    } else if (cpu.name == "aten::baddbmm") {
      b = dim(1, 0), m = dim(1, 1), k = dim(1, 2), n = dim(2, 2);
    } else {
      return;
    }
    constexpr auto kMax = static_cast<std::int64_t>(std::numeric_limits<std::uint32_t>::max());
    if (b <= 0 || m <= 0 || n <= 0 || k <= 0 || b > kMax || m > kMax || n > kMax || k > kMax) return;
    op.kernel = KernelClass::gemm;
    op.precision = precision_from_name(g.name, precision_from_name(string_arg(cpu.args, "Input type"), op.precision));
    op.m = static_cast<std::uint32_t>(m);
    op.n = static_cast<std::uint32_t>(n);
    op.k = static_cast<std::uint32_t>(k);
    op.batch = static_cast<std::uint32_t>(b);
    const double bd = static_cast<double>(b), md = static_cast<double>(m), nd = static_cast<double>(n),
                 kd = static_cast<double>(k);
    op.flops = 2.0 * bd * md * nd * kd;
    op.bytes = bd * (md * kd + kd * nd + md * nd) * bytes_per_element(op.precision);
  }

  OpTable build_rank(const RankTrace& t, int rank, TraceGroups& comms) {
    // Streams: the one with the most compute kernels is 0, the others number from 1 in order of use.
    std::map<std::int64_t, std::size_t> compute_count;
    std::vector<std::int64_t> first_use;
    for (const auto& g : t.gpu) {
      if (std::find(first_use.begin(), first_use.end(), g.stream) == first_use.end()) first_use.push_back(g.stream);
      if (!g.nccl) ++compute_count[g.stream];
    }
    std::map<std::int64_t, std::uint8_t> stream_of;
    if (!first_use.empty()) {
      std::int64_t main = first_use.front();
      for (auto s : first_use)
        if (compute_count[s] > compute_count[main]) main = s;
      stream_of[main] = kComputeStream;
      std::uint8_t next = 1;
      for (auto s : first_use) {
        if (stream_of.count(s)) continue;
        if (next == std::numeric_limits<std::uint8_t>::max())
          throw SpecError(t.file, "/traceEvents", "more than 255 CUDA streams in one rank's trace");
        stream_of[s] = next++;
      }
    }

    OpTable ops;
    std::map<std::int64_t, OpId> last_on_stream;  // the latest op of each stream so far
    for (std::size_t i = 0; i < t.gpu.size(); ++i) {
      const GpuEvent& g = t.gpu[i];
      const auto id = static_cast<OpId>(i);
      std::vector<OpId> deps;
      // A collective waits for the last kernel launched before it on every other stream.
      if (g.nccl) {
        std::map<std::int64_t, std::pair<double, OpId>> latest;  // stream -> (launch ts, op)
        for (std::size_t j = 0; j < i; ++j) {
          const GpuEvent& h = t.gpu[j];
          if (h.stream == g.stream || h.nccl || h.launch_ts > g.launch_ts) continue;
          const auto it = latest.find(h.stream);
          if (it == latest.end() || h.launch_ts >= it->second.first)
            latest[h.stream] = {h.launch_ts, static_cast<OpId>(j)};
        }
        for (const auto& [s, l] : latest)
          deps.push_back(l.second);
      }
      // A kernel that sat ready until an op of another stream ended waited on that op.
      double ready = g.launch_ts;
      if (const auto it = last_on_stream.find(g.stream); it != last_on_stream.end()) {
        const GpuEvent& prev = t.gpu[it->second];
        ready = std::max(ready, prev.ts + prev.dur);
      }
      if (g.ts > ready + kGateToleranceUs) {
        std::optional<OpId> gate;
        double gate_end = -std::numeric_limits<double>::infinity();
        for (std::size_t j = 0; j < i; ++j) {
          const GpuEvent& h = t.gpu[j];
          const double end = h.ts + h.dur;
          if (h.stream == g.stream || end > g.ts || g.ts - end > kGateToleranceUs || end < ready) continue;
          if (end > gate_end) gate = static_cast<OpId>(j), gate_end = end;
        }
        if (gate) deps.push_back(*gate);
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());

      const std::uint8_t stream = stream_of.at(g.stream);
      if (g.nccl) {
        const CommInfo c = comm_info(t, g, rank);
        const std::uint16_t comm = comms.communicator(c.label, c.group);
        if (c.p2p) {
          P2POp op;
          op.name = c.p2p_kind == OpKind::send ? "nccl:send" : "nccl:recv";
          op.kind = c.p2p_kind;
          op.stream = stream;
          op.communicator = comm;
          op.bytes = c.bytes;
          const auto n = static_cast<int>(c.group.size());
          const int self = comms.position(comm, rank);
          const int peer = static_cast<int>(std::find(c.group.begin(), c.group.end(), c.peer) - c.group.begin());
          op.peer_offset = ((peer - self) % n + n) % n;
          ops.add_p2p(op, deps);
        } else {
          CollectiveOp op;
          op.name = std::string("nccl:") + to_string(c.kind);
          op.collective = c.kind;
          op.stream = stream;
          op.communicator = comm;
          op.bytes = c.bytes;
          ops.add_collective(op, deps);
        }
      } else {
        ComputeOp op;
        const std::string name = g.name.substr(0, g.name.find('('));  // drop the argument list of templated names
        op.name = name;
        op.stream = stream;
        op.kernel = g.memcpy ? KernelClass::elementwise : kernel_class_from_name(g.name);
        op.precision = precision_from_name(g.name, Precision::bf16);
        if (g.memcpy) op.bytes = static_cast<double>(std::max<std::int64_t>(0, int_arg(g.args, "bytes").value_or(0)));
        if (!g.memcpy) describe_gemm(t, g, op);
        op.duration_s = std::max(g.dur, 1e-3) * 1e-6;  // a 0 µs record stays measured (1 ns)
        ops.add_compute(op, deps);
      }
      last_on_stream[g.stream] = id;
    }
    return ops;
  }

  std::string path_;
  int world_ = 1;
  bool replicated_ = false;
};

}  // namespace

ExecutionGraph read_pytorch_trace(const std::string& path) {
  return KinetoImporter(path).run();
}

}  // namespace clustersim
