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
#include <cmath>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/spec_document.hpp"
#include "workloads/kernel_names.hpp"
#include "workloads/kernel_timeline.hpp"
#include "workloads/measured_host.hpp"
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
                                                              {"Float8_e5m2fnuz", 1},
                                                              // the C++ names of "Input type" (record_shapes)
                                                              {"c10::BFloat16", 2},
                                                              {"c10::Half", 2},
                                                              {"long int", 8},
                                                              {"short int", 2},
                                                              {"unsigned char", 1},
                                                              {"signed char", 1},
                                                              {"bool", 1},
                                                              {"c10::Float8_e4m3fn", 1},
                                                              {"c10::Float8_e5m2", 1},
                                                              {"c10::complex<float>", 8},
                                                              {"c10::complex<double>", 16}};
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
  double launch_ts = 0.0;            // CPU time of its launch (its GPU start when the launch is not in the trace)
  std::optional<double> launch_dur;  // the launch call's duration; unset when the launch is not in the trace
  std::string launch_tid;
};

struct CpuOp {
  std::size_t index = 0;
  std::string name;
  double ts = 0.0, dur = 0.0;
  std::string tid;
  const json* args = nullptr;
};

// A process group of distributedInfo.pg_config (PyTorch >= 2.2).
struct PgConfig {
  std::string name, desc;
  std::vector<int> ranks;
};

struct CommInfo {
  bool p2p = false;
  OpKind p2p_kind = OpKind::send;
  CollectiveKind kind = CollectiveKind::all_reduce;
  double bytes = 0.0;
  std::string label;
  std::vector<int> group;  // global ranks
  int peer = -1;           // p2p: the peer's global rank
  std::size_t event = 0;   // the trace event that describes it (error messages, cross-rank checks)
  int block = 0;           // > 0: the group is assumed to be one of the world's contiguous blocks of this size
};

// The ops of one list by thread, in order of start (ties: list order), with the latest end among each
// prefix: innermost() finds the op enclosing a time by a binary search and a short walk back instead of
// a scan of the list (a 50 MB trace has ~40,000 GEMM ops and as many kernels to attribute).
struct OpSpans {
  struct Thread {
    std::vector<std::size_t> order;  // indices into the list, by (ts, index)
    std::vector<double> max_end;     // max_end[k]: the latest ts + dur among order[0..k]
  };
  std::unordered_map<std::string, Thread> by_tid;
};

OpSpans index_spans(const std::vector<CpuOp>& ops) {
  OpSpans spans;
  for (std::size_t i = 0; i < ops.size(); ++i)
    spans.by_tid[ops[i].tid].order.push_back(i);
  for (auto& [tid, th] : spans.by_tid) {
    std::stable_sort(th.order.begin(), th.order.end(),
                     [&](std::size_t a, std::size_t b) { return ops[a].ts < ops[b].ts; });
    double end = -std::numeric_limits<double>::infinity();
    for (std::size_t i : th.order) {
      end = std::max(end, ops[i].ts + ops[i].dur);
      th.max_end.push_back(end);
    }
  }
  return spans;
}

struct RankTrace {
  std::string file;
  json doc;
  std::optional<int> rank, world_size;
  std::vector<PgConfig> pg_config;
  std::vector<GpuEvent> gpu;                                          // sorted by (ts, index)
  std::vector<CpuOp> comm_ops;                                        // record_param_comms
  std::unordered_map<std::int64_t, std::size_t> comm_by_external_id;  // index into comm_ops
  std::vector<CpuOp> nccl_ops;                                        // "nccl:<collective>" record functions
  std::vector<CpuOp> c10d_ops;                                        // "c10d::<collective>" dispatcher ops
  std::vector<CpuOp> cpu_ops;                                         // aten ops with Input Dims
  std::unordered_map<std::int64_t, std::size_t> cpu_by_external_id;   // index into cpu_ops
  std::vector<CpuOp> gemm_ops;              // the aten ops whose "Input Dims" give a GEMM shape (is_gemm_op)
  std::set<std::size_t> outer_gemm_ops;     // the events of those that enclose another (linear around addmm)
  std::vector<CpuOp> steps;                 // ProfilerStep#N
  std::optional<double> step_begin;         // the begin of the step cut_step kept (µs); unset: the whole trace
  std::optional<double> peak_memory_bytes;  // the largest "Total Reserved" of a GPU [memory] event
  // Spans of comm_ops, nccl_ops, c10d_ops and gemm_ops for innermost(), built once they are read.
  OpSpans comm_spans, nccl_spans, c10d_spans, gemm_spans;
};

// The aten ops whose "Input Dims" give the shape of the GEMM they launch (describe_gemm).
bool is_gemm_op(const std::string& name) {
  static constexpr std::string_view kNames[] = {"aten::mm",      "aten::addmm",  "aten::bmm",
                                                "aten::baddbmm", "aten::linear", "aten::matmul"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

std::string event_path(std::size_t i) {
  return "/traceEvents/" + std::to_string(i);
}

// Counts the complete events of a Chrome-trace text that does not parse, to say where it broke: a SAX
// pass that tracks the depth of the "traceEvents" array's elements.
struct EventCounter : json::json_sax_t {
  int depth = 0;          // nesting of objects and arrays
  int events_depth = -1;  // the depth inside the events array ("traceEvents", or a top-level array)
  bool next_is_events = false;
  std::size_t events_done = 0;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(json::number_integer_t) override { return true; }
  bool number_unsigned(json::number_unsigned_t) override { return true; }
  bool number_float(json::number_float_t x, const json::string_t&) override {
    return std::isfinite(x);  // a number beyond a double (1e400) stops the parse there, as the DOM parser does
  }
  bool string(json::string_t&) override { return true; }
  bool binary(json::binary_t&) override { return true; }
  bool key(json::string_t& k) override {
    next_is_events = depth == 1 && k == "traceEvents";
    return true;
  }
  bool start_object(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(true); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  // depth counts the open containers; an event has ended when a close returns to the events array's.
  bool open(bool array) {
    if (array && events_depth < 0 && (next_is_events || depth == 0)) events_depth = depth + 1;
    next_is_events = false;
    ++depth;
    return true;
  }
  bool close() {
    --depth;
    if (depth == events_depth) ++events_done;
    return true;
  }
};

// Parses a Chrome-trace JSON text. A malformed or truncated file is refused with the index of the
// event the parser stopped in (the events before it were complete).
json parse_trace_json(const std::string& text, const std::string& file) {
  try {
    return json::parse(text);
  } catch (const json::out_of_range& e) {
    EventCounter counter;
    json::sax_parse(text, &counter);
    throw SpecError(file, counter.events_depth > 0 ? event_path(counter.events_done) : "",
                    std::string("a number beyond the range of a double (") + e.what() + ")");
  } catch (const json::parse_error& e) {
    EventCounter counter;
    json::sax_parse(text, &counter);
    throw SpecError(file, counter.events_depth > 0 ? event_path(counter.events_done) : "",
                    "not a complete Chrome-trace JSON file (byte " + std::to_string(e.byte) + ": " + e.what() +
                        "); the parser stopped inside this event: the file is truncated or malformed");
  }
}

RankTrace read_rank_file(const std::string& file) {
  RankTrace t;
  t.file = file;
  t.doc = parse_trace_json(read_trace_bytes(file, "PyTorch profiler trace"), file);
  const json* events = nullptr;
  if (t.doc.is_object()) {
    JsonReader root(t.doc, file);
    events = &root.array("traceEvents");
    if (const auto info = root.optional_object("distributedInfo")) {
      JsonReader d = *info;
      if (d.has("rank")) t.rank = static_cast<int>(d.integer("rank", 0, std::numeric_limits<int>::max()));
      if (d.has("world_size"))
        t.world_size = static_cast<int>(d.integer("world_size", 1, std::numeric_limits<int>::max()));
      if (d.has("pg_config")) {
        const json& pgs = d.raw("pg_config");
        const std::string at = "/distributedInfo/pg_config";
        if (!pgs.is_array()) throw SpecError(file, at, "expected a list of process groups, got " + describe_json(pgs));
        for (std::size_t i = 0; i < pgs.size(); ++i) {
          JsonReader g(pgs[i], file, at + "/" + std::to_string(i));
          PgConfig c;
          c.name = string_arg(&pgs[i], "pg_name");
          c.desc = string_arg(&pgs[i], "pg_desc");
          const json& ranks = g.raw("ranks");
          if (!ranks.is_array())
            throw SpecError(file, g.path_of("ranks"), "expected the group's global ranks, got " + describe_json(ranks));
          for (const auto& r : ranks) {
            if (!r.is_number_integer())
              throw SpecError(file, g.path_of("ranks"), "expected integer ranks, got " + describe_json(r));
            c.ranks.push_back(r.get<int>());
          }
          t.pg_config.push_back(std::move(c));
        }
      }
    }
  } else if (t.doc.is_array()) {
    events = &t.doc;
  } else {
    throw SpecError(file, "", "expected a Chrome trace: an object with \"traceEvents\" or an array of events");
  }

  std::unordered_map<std::int64_t, std::pair<double, std::string>> launches;  // correlation -> (ts, tid)
  std::unordered_map<std::int64_t, double> launch_durations;                  // correlation -> dur
  for (std::size_t i = 0; i < events->size(); ++i) {
    const json& e = (*events)[i];
    if (!e.is_object()) throw SpecError(file, event_path(i), "expected an event object, got " + describe_json(e));
    const std::string ph = e.contains("ph") && e["ph"].is_string() ? e["ph"].get<std::string>() : "";
    // Memory use: "[memory]" instant events of the caching allocator (profile_memory=True).
    if ((ph == "i" || ph == "I") && e.contains("name") && e["name"] == "[memory]") {
      const json* args = e.contains("args") && e["args"].is_object() ? &e["args"] : nullptr;
      const auto device = int_arg(args, "Device Id");
      const auto reserved = int_arg(args, "Total Reserved");
      const auto allocated = int_arg(args, "Total Allocated");
      const auto bytes = reserved ? reserved : allocated;
      if (device && *device >= 0 && bytes)
        t.peak_memory_bytes = std::max(t.peak_memory_bytes.value_or(0.0), static_cast<double>(*bytes));
      continue;
    }
    if (ph != "X") continue;
    const std::string cat = e.contains("cat") && e["cat"].is_string() ? e["cat"].get<std::string>() : "";
    const std::string lcat = lower_alnum(cat);
    const bool gpu = lcat == "kernel" || lcat == "gpumemcpy" || lcat == "gpumemset";
    const bool cpu = lcat == "cpuop" || lcat == "usercpuop" || lcat == "userannotation" || lcat == "operator";
    const bool runtime = lcat == "cudaruntime" || lcat == "cudadriver" || lcat == "runtime";
    if (!gpu && !cpu && !runtime) continue;
    JsonReader r(e, file, event_path(i));
    const double ts = r.number("ts");
    const double dur = r.number("dur", NumberRange::non_negative());
    const json* args = e.contains("args") && e["args"].is_object() ? &e["args"] : nullptr;
    const std::string name = r.string("name");
    const std::string tid = e.contains("tid") ? e["tid"].dump() : "";
    if (runtime) {
      if (const auto c = int_arg(args, "correlation")) {
        launches[*c] = {ts, tid};
        launch_durations[*c] = dur;
      }
    } else if (cpu) {
      CpuOp op{i, name, ts, dur, tid, args};
      const auto ext = int_arg(args, "External id");
      if (name.rfind("ProfilerStep#", 0) == 0) {
        t.steps.push_back(op);
      } else if (name == "record_param_comms") {
        if (ext) t.comm_by_external_id[*ext] = t.comm_ops.size();
        t.comm_ops.push_back(op);
      } else if (name.rfind("nccl:", 0) == 0) {
        t.nccl_ops.push_back(op);
      } else if (name.rfind("c10d::", 0) == 0) {
        t.c10d_ops.push_back(op);
      } else if (args != nullptr && args->contains("Input Dims")) {
        if (is_gemm_op(name)) t.gemm_ops.push_back(op);
        if (ext) {
          t.cpu_by_external_id[*ext] = t.cpu_ops.size();
          t.cpu_ops.push_back(op);
        }
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
        g.launch_dur = launch_durations[*g.correlation];
      }
    }
  }
  std::stable_sort(t.gpu.begin(), t.gpu.end(), [](const GpuEvent& a, const GpuEvent& b) { return a.ts < b.ts; });
  // A GEMM op that encloses another on its thread (aten::linear -> aten::matmul -> aten::mm) launches its
  // GEMM through it: only the innermost describes kernels, so that the GEMM counts once.
  std::vector<const CpuOp*> gemms;
  for (const auto& op : t.gemm_ops)
    gemms.push_back(&op);
  std::stable_sort(gemms.begin(), gemms.end(),
                   [](const CpuOp* a, const CpuOp* b) { return std::tie(a->tid, a->ts) < std::tie(b->tid, b->ts); });
  for (std::size_t i = 0; i < gemms.size(); ++i)
    for (std::size_t j = i + 1;
         j < gemms.size() && gemms[j]->tid == gemms[i]->tid && gemms[j]->ts <= gemms[i]->ts + gemms[i]->dur; ++j)
      if (gemms[j]->ts + gemms[j]->dur <= gemms[i]->ts + gemms[i]->dur) {
        t.outer_gemm_ops.insert(gemms[i]->index);
        break;
      }
  t.comm_spans = index_spans(t.comm_ops);
  t.nccl_spans = index_spans(t.nccl_ops);
  t.c10d_spans = index_spans(t.c10d_ops);
  t.gemm_spans = index_spans(t.gemm_ops);
  return t;
}

// The number N of a "ProfilerStep#N" name; nullopt when it has none.
std::optional<std::int64_t> step_number(const std::string& name) {
  const std::string digits = name.substr(std::string("ProfilerStep#").size());
  if (digits.empty() || digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return std::nullopt;
  return std::stoll(digits);
}

// Keeps the GPU events launched inside one ProfilerStep ("last": the rank's last one; else its number).
void cut_step(RankTrace& t, const std::string& step) {
  if (t.steps.empty())
    throw SpecError(t.file, "/traceEvents",
                    "the trace has no ProfilerStep#N annotations (record it with torch.profiler's schedule and "
                    "prof.step()), so step " +
                        step + " cannot be cut out: remove \"step\"");
  const CpuOp* chosen = nullptr;
  if (step == "last") {
    for (const auto& s : t.steps)
      if (chosen == nullptr || s.ts > chosen->ts) chosen = &s;
  } else {
    const std::int64_t n = std::stoll(step);
    std::string have;
    for (const auto& s : t.steps) {
      if (step_number(s.name) == n) chosen = &s;
      have += (have.empty() ? "" : ", ") + s.name;
    }
    if (chosen == nullptr)
      throw SpecError(t.file, "/traceEvents",
                      "no ProfilerStep#" + step + " in this rank's trace (it has " + have + ")");
  }
  const double begin = chosen->ts, end = chosen->ts + chosen->dur;
  t.step_begin = begin;
  std::erase_if(t.gpu, [&](const GpuEvent& g) { return g.launch_ts < begin || g.launch_ts > end; });
}

// The innermost op of `ops` (indexed by `spans`) on thread `tid` whose span holds time `ts`: of those
// that start at or before `ts` and end at or after it, the latest to start (ties: the later in `ops`);
// null when none does.
const CpuOp* innermost(const std::vector<CpuOp>& ops, const OpSpans& spans, const std::string& tid, double ts) {
  const auto it = spans.by_tid.find(tid);
  if (it == spans.by_tid.end()) return nullptr;
  const OpSpans::Thread& th = it->second;
  // The ops that start at or before ts: order[0 .. k); walk back from the latest until one still runs.
  auto k = static_cast<std::size_t>(
      std::upper_bound(th.order.begin(), th.order.end(), ts, [&](double v, std::size_t i) { return v < ops[i].ts; }) -
      th.order.begin());
  while (k > 0 && th.max_end[k - 1] >= ts) {
    const CpuOp& op = ops[th.order[--k]];
    if (op.ts + op.dur >= ts) return &op;
  }
  return nullptr;
}

// The number of elements and the bytes of the tensors of an op's "Input Dims" / "Input type" (the
// first `inputs` tensors; scalars and empty lists count nothing). nullopt when a tensor's dtype is unknown.
std::optional<double> input_bytes(const json* args, std::size_t inputs) {
  if (args == nullptr || !args->contains("Input Dims")) return std::nullopt;
  const json& dims = (*args)["Input Dims"];
  const json* types = args->contains("Input type") ? &(*args)["Input type"] : nullptr;
  if (!dims.is_array()) return std::nullopt;
  double total = 0.0;
  bool any = false;
  for (std::size_t i = 0; i < dims.size() && i < inputs; ++i) {
    if (!dims[i].is_array() || dims[i].empty()) continue;
    double n = 1.0;
    for (const auto& d : dims[i]) {
      if (!d.is_number_integer() || d.get<std::int64_t>() < 0) return std::nullopt;
      n *= static_cast<double>(d.get<std::int64_t>());
    }
    const std::string type = types != nullptr && types->is_array() && i < types->size() && (*types)[i].is_string()
                                 ? (*types)[i].get<std::string>()
                                 : "";
    const auto elem = dtype_bytes(type);
    if (!elem) return std::nullopt;
    total += n * *elem;
    any = true;
  }
  if (!any) return std::nullopt;
  return total;
}

class KinetoImporter {
 public:
  KinetoImporter(const std::string& path, std::string step) : path_(path), step_(std::move(step)) {}

  ExecutionGraph run() {
    static constexpr std::string_view kExtensions[] = {".json", ".json.gz"};
    const auto files = list_rank_files(path_, kExtensions);
    std::vector<RankTrace> traces;
    for (const auto& f : files) {
      traces.push_back(read_rank_file(f.path));
      if (!step_.empty()) cut_step(traces.back(), step_);
    }
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
    std::vector<std::vector<std::size_t>> events;  // per file, the trace event of each op
    std::vector<std::vector<double>> issue_s;      // per file, when the host had issued each op (MeasuredHostTrace)
    for (std::size_t i = 0; i < traces.size(); ++i) {
      events.emplace_back();
      issue_s.emplace_back();
      tables.push_back(build_rank(traces[i], ranks[i], comms, events.back(), issue_s.back()));
    }
    if (!replicated_) check_ranks_agree(traces, ranks, tables, events, comms);
    ExecutionGraph graph(world_);
    comms.add_to(graph);
    if (replicated_) {
      std::vector<int> all(static_cast<std::size_t>(world_));
      for (int r = 0; r < world_; ++r)
        all[static_cast<std::size_t>(r)] = r;
      graph.add_class("all ranks (rank " + std::to_string(ranks[0]) + "'s trace)", all).ops = std::move(tables[0]);
      issue_s_.push_back(std::move(issue_s[0]));
    } else {
      std::vector<std::size_t> file_of(traces.size());
      for (std::size_t i = 0; i < traces.size(); ++i)
        file_of[static_cast<std::size_t>(ranks[i])] = i;
      for (int r = 0; r < world_; ++r) {
        const std::size_t f = file_of[static_cast<std::size_t>(r)];
        graph.add_class("rank " + std::to_string(r), {r}).ops = std::move(tables[f]);
        issue_s_.push_back(std::move(issue_s[f]));
      }
    }
    for (const auto& t : traces) {
      if (!t.peak_memory_bytes) continue;
      graph.set_peak_memory_bytes_per_gpu(
          std::max(graph.peak_memory_bytes_per_gpu().value_or(0.0), *t.peak_memory_bytes));
    }
    return graph;
  }

 private:
  // How an NCCL kernel (or one call of a coalesced group) is described: its record_param_comms-style
  // metadata (args with "Collective name"), else the ProcessGroupNCCL record function "nccl:<name>"
  // that launched it (its name and input tensors), else only the kernel's name.
  struct Source {
    const json* meta = nullptr;
    const CpuOp* nccl_op = nullptr;
    std::size_t event = 0;
  };

  // The collective metadata of an NCCL kernel: its own args, or its record_param_comms op.
  static const CpuOp* comm_op_of(const RankTrace& t, const GpuEvent& g) {
    if (g.external_id) {
      if (const auto it = t.comm_by_external_id.find(*g.external_id); it != t.comm_by_external_id.end())
        if (t.comm_ops[it->second].args != nullptr && t.comm_ops[it->second].args->contains("Collective name"))
          return &t.comm_ops[it->second];
    }
    // The innermost record_param_comms on the launching thread that encloses the launch.
    const CpuOp* op = innermost(t.comm_ops, t.comm_spans, g.launch_tid, g.launch_ts);
    return op != nullptr && op->args != nullptr && op->args->contains("Collective name") ? op : nullptr;
  }

  static Source source_of(const RankTrace& t, const GpuEvent& g) {
    Source s;
    s.event = g.index;
    if (g.args != nullptr && g.args->contains("Collective name")) {
      s.meta = g.args;
    } else if (const CpuOp* op = comm_op_of(t, g)) {
      s.meta = op->args;
    }
    s.nccl_op = innermost(t.nccl_ops, t.nccl_spans, g.launch_tid, g.launch_ts);
    return s;
  }

  static bool coalesced(const Source& s) {
    if (s.meta != nullptr) return lower_alnum(string_arg(s.meta, "Collective name")) == "coalesced";
    return s.nccl_op != nullptr && s.nccl_op->name == "nccl:coalesced";
  }

  // The calls a coalesced kernel (batch_isend_irecv, a _coalescing_manager block) stands for: the
  // record_param_comms ops (else the "nccl:" record functions) issued on its launching thread since
  // the previous NCCL kernel's launch there that launched no kernel of their own.
  std::vector<Source> members_of(const RankTrace& t, const GpuEvent& g, double window_start,
                                 const std::set<std::size_t>& owned_events) const {
    std::vector<Source> out;
    for (const auto& op : t.comm_ops) {
      if (op.tid != g.launch_tid || op.ts <= window_start || op.ts >= g.launch_ts || owned_events.count(op.index))
        continue;
      if (op.args == nullptr || !op.args->contains("Collective name")) continue;
      const std::string name = lower_alnum(string_arg(op.args, "Collective name"));
      if (name == "coalesced" || name == "wait" || name.empty()) continue;
      out.push_back({op.args, innermost(t.nccl_ops, t.nccl_spans, op.tid, op.ts), op.index});
    }
    if (!out.empty()) return out;
    for (const auto& op : t.nccl_ops) {
      if (op.tid != g.launch_tid || op.ts <= window_start || op.ts >= g.launch_ts || owned_events.count(op.index) ||
          op.name == "nccl:coalesced")
        continue;
      out.push_back({nullptr, &op, op.index});
    }
    return out;
  }

  // The group size a gather or scatter implies: the c10d op that issued it (its "Input Dims": output
  // then input) holds both buffers, and the larger is the group size times the smaller. nullopt for
  // other collectives or when the op or its shapes are not in the trace.
  static std::optional<int> implied_group_size(const RankTrace& t, const GpuEvent& g, CollectiveKind kind) {
    if (kind != CollectiveKind::all_gather && kind != CollectiveKind::reduce_scatter) return std::nullopt;
    const CpuOp* op = innermost(t.c10d_ops, t.c10d_spans, g.launch_tid, g.launch_ts);
    if (op == nullptr) return std::nullopt;
    const auto out = input_bytes(op->args, 1);
    const json* args = op->args;
    if (!out || args == nullptr || !(*args)["Input Dims"].is_array() || (*args)["Input Dims"].size() < 2)
      return std::nullopt;
    json second = *args;
    second["Input Dims"] = json::array({(*args)["Input Dims"][1]});
    if (args->contains("Input type") && (*args)["Input type"].is_array() && (*args)["Input type"].size() >= 2)
      second["Input type"] = json::array({(*args)["Input type"][1]});
    const auto in = input_bytes(&second, 1);
    if (!in || *in <= 0.0 || *out <= 0.0) return std::nullopt;
    const double ratio = std::max(*in, *out) / std::min(*in, *out);
    if (ratio != std::floor(ratio) || ratio > static_cast<double>(std::numeric_limits<int>::max())) return std::nullopt;
    return static_cast<int>(ratio);
  }

  // The process group of a call whose trace names none: the world, unless the call's buffers imply a
  // smaller group (then distributedInfo.pg_config's only group of that size with this rank), or
  // pg_config lists other groups this rank is in (then which one is unknown: refused).
  const PgConfig* default_group(const RankTrace& t, int rank, std::optional<int> size,
                                const std::function<void(const std::string&)>& fail) const {
    std::vector<const PgConfig*> mine;
    for (const auto& pg : t.pg_config)
      if (static_cast<int>(pg.ranks.size()) != world_ && pg.ranks.size() > 1 &&
          std::find(pg.ranks.begin(), pg.ranks.end(), rank) != pg.ranks.end())
        mine.push_back(&pg);
    if (size && *size != world_) {
      const PgConfig* found = nullptr;
      std::size_t matches = 0;
      for (const PgConfig* pg : mine)
        if (static_cast<int>(pg->ranks.size()) == *size) found = pg, ++matches;
      if (matches == 0 && world_ % *size == 0) return nullptr;  // the caller assumes contiguous blocks
      if (matches != 1)
        fail("its input and output buffers (the launching c10d op's \"Input Dims\") imply a group of " +
             std::to_string(*size) + " ranks in a world of " + std::to_string(world_) +
             ", but the trace does not say which ranks (no record_param_comms group, and distributedInfo.pg_config "
             "has " +
             std::to_string(matches) + " groups of that size with rank " + std::to_string(rank) +
             "): profile with PyTorch >= 2.1");
      return found;
    }
    if (!mine.empty())
      fail("the trace records no process group for it and distributedInfo.pg_config lists " +
           std::to_string(mine.size()) +
           " groups besides the world that this rank is in, so its group is unknown (profile with PyTorch >= 2.2, "
           "whose record_param_comms names the group)");
    return nullptr;
  }

  CommInfo comm_info(const RankTrace& t, const GpuEvent& g, const Source& src, int rank) const {
    const std::string where = event_path(src.event);
    const auto fail = [&](const std::string& msg) -> void {
      throw SpecError(t.file, where, "NCCL kernel \"" + g.name + "\": " + msg);
    };
    const json* a = src.meta;
    CommInfo c;
    c.event = src.event;
    const std::string coll = lower_alnum(string_arg(a, "Collective name"));
    const std::string op_name = src.nccl_op != nullptr ? lower_alnum(src.nccl_op->name.substr(5)) : "";
    const std::string kernel = lower_alnum(g.name);
    // The kind: the metadata's name, else the launching record function's, else the kernel's (a
    // SendRecv kernel alone does not say which: ProcessGroupNCCL runs all_to_all as grouped sends/recvs).
    const std::string what = !coll.empty() ? coll : !op_name.empty() ? op_name : kernel;
    const bool sendrecv = what.find("sendrecv") != std::string::npos;
    if (!sendrecv && what.find("send") != std::string::npos) {
      c.p2p = true;
      c.p2p_kind = OpKind::send;
    } else if (!sendrecv && what.find("recv") != std::string::npos) {
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
    } else if (sendrecv) {
      fail(
          "a SendRecv kernel with neither record_param_comms metadata nor a launching \"nccl:<collective>\" record "
          "function: whether it is an all_to_all or a send/recv pair, its size and its peers are unknown");
    } else {
      fail("unrecognized collective \"" + (a != nullptr ? string_arg(a, "Collective name") : g.name) +
           "\" (known: all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, barrier, send, recv)");
    }

    // The process group: its ranks, else global rank start/stride and size, else the whole world.
    const auto size = int_arg(a, "Group size");
    std::string group_label;  // the name of a pg_config group it was found in
    if (a != nullptr && a->contains("Process Group Ranks")) {
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
      const std::optional<int> implied = a == nullptr ? implied_group_size(t, g, c.kind) : std::nullopt;
      if (const PgConfig* pg = default_group(t, rank, implied, fail)) {
        c.group = pg->ranks;
        group_label = !pg->desc.empty() && pg->desc != "undefined" ? pg->desc : "pg " + pg->name;
      } else if (implied && *implied != world_) {
        // A smaller group the trace does not name: assumed to be the contiguous block of the rank
        // (TorchRec's and DDP's intra-node groups are: ranks node*k .. node*k + k - 1).
        c.block = *implied;
        for (int r = rank / *implied * *implied; r < (rank / *implied + 1) * *implied; ++r)
          c.group.push_back(r);
        group_label = "block of " + std::to_string(*implied);
      } else {
        for (int r = 0; r < world_; ++r)
          c.group.push_back(r);
      }
    }
    for (int r : c.group)
      if (r < 0 || r >= world_)
        fail("its process group has rank " + std::to_string(r) + ", outside the trace's ranks 0.." +
             std::to_string(world_ - 1));
    if (std::find(c.group.begin(), c.group.end(), rank) == c.group.end())
      fail("rank " + std::to_string(rank) + " is not in its process group");
    if (replicated_ && static_cast<int>(c.group.size()) != world_ && c.block == 0)
      fail(
          "a single rank's trace can stand for every rank only when its collectives span the whole world; give "
          "every rank's file");

    // The size: the metadata's element counts, else the launching record function's input tensors.
    const auto in = int_arg(a, "In msg nelems");
    const auto out = int_arg(a, "Out msg nelems");
    if (in || out) {
      const std::string dtype = string_arg(a, "dtype");
      const auto elem = dtype_bytes(dtype);
      if (!elem) fail("unknown dtype \"" + dtype + "\"");
      // nccl-tests counts the larger buffer: all_gather's output, reduce_scatter's input.
      c.bytes = static_cast<double>(std::max(in.value_or(0), out.value_or(0))) * *elem;
    } else if (src.nccl_op != nullptr) {
      // ProcessGroupNCCL records a collective's input tensors: all_gather's is one rank's shard, every
      // other collective's the full buffer (reduce_scatter's input, all_to_all's send buffer).
      const auto bytes = input_bytes(src.nccl_op->args, std::numeric_limits<std::size_t>::max());
      if (!bytes)
        throw SpecError(t.file, event_path(src.nccl_op->index),
                        "NCCL kernel \"" + g.name + "\" at " + where + ": its launching \"" + src.nccl_op->name +
                            "\" gives no input tensor sizes and types (\"Input Dims\", \"Input type\"), and no "
                            "record_param_comms gives \"In msg nelems\": the message size is unknown");
      c.bytes = *bytes;
      if (!c.p2p && c.kind == CollectiveKind::all_gather) c.bytes *= static_cast<double>(c.group.size());
    } else {
      fail(
          "no record_param_comms metadata (\"Collective name\", \"In msg nelems\") and no launching "
          "\"nccl:<collective>\" "
          "record function with its input sizes: the message size is unknown (profile with record_shapes=True, or "
          "PyTorch >= 2.1)");
    }

    const std::string desc = string_arg(a, "Process Group Description");
    const std::string name = string_arg(a, "Process Group Name");
    c.label = !group_label.empty()                         ? group_label
              : !desc.empty() && desc != "undefined"       ? desc
              : !name.empty()                              ? "pg " + name
              : static_cast<int>(c.group.size()) == world_ ? "world"
                                                           : "group";
    if (c.p2p) {
      if (replicated_) fail("a single rank's trace cannot stand for every rank when it sends or receives");
      const auto peer = int_arg(a, "Rank");  // record_param_comms gets the peer's group rank for send/recv
      if (peer && *peer >= 0 && *peer < static_cast<std::int64_t>(c.group.size())) {
        c.peer = c.group[static_cast<std::size_t>(*peer)];
      } else if (c.group.size() == 2) {
        c.peer = c.group[0] == rank ? c.group[1] : c.group[0];  // the other rank of the pair
      } else {
        fail(
            "a send or recv needs the peer's rank in its group (record_param_comms \"Rank\"); the trace does not "
            "give it and the group has " +
            std::to_string(c.group.size()) + " ranks");
      }
      if (c.peer == rank) fail("a send or recv to itself");
    }
    return c;
  }

  // The aten GEMM op that launched a kernel: the op with the kernel's External id (PyTorch >= 2.1 links
  // them so), else the innermost GEMM op enclosing the launch on its thread (older traces give the
  // kernel its correlation id as "External id", which names no CPU op). Null when none did.
  // A GEMM op that encloses another describes none (its GEMM is the inner op's; what it launches
  // itself, a layout copy, is no GEMM).
  static const CpuOp* gemm_op_of(const RankTrace& t, const GpuEvent& g) {
    const CpuOp* op = nullptr;
    if (g.external_id)
      if (const auto it = t.cpu_by_external_id.find(*g.external_id); it != t.cpu_by_external_id.end())
        if (is_gemm_op(t.cpu_ops[it->second].name)) op = &t.cpu_ops[it->second];
    if (op == nullptr && !g.launch_tid.empty())  // without a launch event in the trace nothing encloses it
      op = innermost(t.gemm_ops, t.gemm_spans, g.launch_tid, g.launch_ts);
    return op != nullptr && !t.outer_gemm_ops.count(op->index) ? op : nullptr;
  }

  // GEMM flops and shape from the aten op that launched the kernel (its "Input Dims").
  static void describe_gemm(const CpuOp& cpu, const GpuEvent& g, ComputeOp& op) {
    const json& dims = (*cpu.args)["Input Dims"];
    const auto dim = [&](std::size_t input, std::size_t axis) -> std::int64_t {
      if (!dims.is_array() || input >= dims.size() || !dims[input].is_array() || axis >= dims[input].size() ||
          !dims[input][axis].is_number_integer())
        return -1;
      return dims[input][axis].get<std::int64_t>();
    };
    const auto rank_of = [&](std::size_t input) -> std::size_t {
      return input < dims.size() && dims[input].is_array() ? dims[input].size() : 0;
    };
    // The product of an input's leading dimensions (all but its last `keep`): the rows of a batched
    // activation [b, s, h] that linear / matmul fold into one GEMM.
    const auto leading = [&](std::size_t input, std::size_t keep) -> std::int64_t {
      std::int64_t p = 1;
      for (std::size_t a = 0; a + keep < rank_of(input); ++a) {
        const std::int64_t d = dim(input, a);
        if (d < 0 || (d > 0 && p > std::numeric_limits<std::int64_t>::max() / d)) return -1;
        p *= d;
      }
      return p;
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
    } else if (cpu.name == "aten::linear" && rank_of(0) >= 1 && rank_of(1) == 2) {
      // y = x W^T: x [..., in], W [out, in].
      m = leading(0, 1), k = dim(0, rank_of(0) - 1), n = dim(1, 0);
      if (dim(1, 1) != k) return;
    } else if (cpu.name == "aten::matmul" && rank_of(0) >= 2 && rank_of(1) == 2) {
      // x [..., m', k] @ W [k, n]: one GEMM of the folded rows.
      m = leading(0, 1), k = dim(0, rank_of(0) - 1), n = dim(1, 1);
      if (dim(1, 0) != k) return;
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

  // event_of_op: the trace event of each op; issue_s_of_op: when the host had issued it (its launch call's
  // end), in seconds after the rank's step began (cut_step), else after its first launch; at least 0.
  OpTable build_rank(const RankTrace& t, int rank, TraceGroups& comms, std::vector<std::size_t>& event_of_op,
                     std::vector<double>& issue_s_of_op) {
    double origin_us = std::numeric_limits<double>::infinity();
    for (const auto& g : t.gpu)
      origin_us = std::min(origin_us, g.launch_ts);
    if (t.step_begin) origin_us = *t.step_begin;
    const auto issued_s = [&](const GpuEvent& g) {
      return std::max(0.0, g.launch_ts + g.launch_dur.value_or(0.0) - origin_us) * 1e-6;
    };
    // Streams: the one with the most compute kernels is 0, the others number from 1 in order of use;
    // a coalesced group's recvs get a companion stream of the NCCL stream (below).
    std::map<std::int64_t, std::size_t> compute_count;
    std::vector<std::int64_t> first_use;
    for (const auto& g : t.gpu) {
      if (std::find(first_use.begin(), first_use.end(), g.stream) == first_use.end()) first_use.push_back(g.stream);
      if (!g.nccl) ++compute_count[g.stream];
    }
    std::map<std::int64_t, std::uint8_t> stream_of, companion_of;
    std::uint8_t next = 1;
    const auto new_stream = [&]() {
      if (next == std::numeric_limits<std::uint8_t>::max())
        throw SpecError(t.file, "/traceEvents", "more than 255 CUDA streams in one rank's trace");
      return next++;
    };
    if (!first_use.empty()) {
      std::int64_t main = first_use.front();
      for (auto s : first_use)
        if (compute_count[s] > compute_count[main]) main = s;
      stream_of[main] = kComputeStream;
      for (auto s : first_use)
        if (!stream_of.count(s)) stream_of[s] = new_stream();
    }

    // The NCCL kernels' descriptions, and the record_param_comms / nccl: ops that describe a kernel
    // of their own (so they are not members of a later coalesced group).
    std::vector<Source> sources(t.gpu.size());
    std::set<std::size_t> owned;
    for (std::size_t i = 0; i < t.gpu.size(); ++i) {
      if (!t.gpu[i].nccl) continue;
      sources[i] = source_of(t, t.gpu[i]);
      if (const CpuOp* op = comm_op_of(t, t.gpu[i])) owned.insert(op->index);
      if (sources[i].nccl_op != nullptr) owned.insert(sources[i].nccl_op->index);
    }
    // A GEMM op's shape describes one of its kernels, its longest (the GEMM itself, not a split-K
    // reduction or a layout copy it also launched): its flops are counted once.
    std::vector<const CpuOp*> gemm_of(t.gpu.size(), nullptr);
    {
      std::map<const CpuOp*, std::size_t> longest;
      for (std::size_t i = 0; i < t.gpu.size(); ++i) {
        if (t.gpu[i].nccl || t.gpu[i].memcpy) continue;
        const CpuOp* op = gemm_op_of(t, t.gpu[i]);
        if (op == nullptr) continue;
        const auto [it, fresh] = longest.try_emplace(op, i);
        if (!fresh && t.gpu[i].dur > t.gpu[it->second].dur) it->second = i;
      }
      for (const auto& [op, i] : longest)
        gemm_of[i] = op;
    }
    // Per NCCL kernel, the launch time of the previous NCCL kernel launched on its thread.
    std::vector<double> previous_launch(t.gpu.size(), -std::numeric_limits<double>::infinity());
    {
      std::vector<std::size_t> nccl;
      for (std::size_t i = 0; i < t.gpu.size(); ++i)
        if (t.gpu[i].nccl) nccl.push_back(i);
      std::stable_sort(nccl.begin(), nccl.end(),
                       [&](std::size_t a, std::size_t b) { return t.gpu[a].launch_ts < t.gpu[b].launch_ts; });
      std::map<std::string, double> last;
      for (std::size_t i : nccl) {
        const auto it = last.find(t.gpu[i].launch_tid);
        if (it != last.end()) previous_launch[i] = it->second;
        last[t.gpu[i].launch_tid] = t.gpu[i].launch_ts;
      }
    }

    OpTable ops;
    std::vector<std::vector<OpId>> ops_of(t.gpu.size());  // the ops each GPU event became
    std::map<std::int64_t, std::size_t> last_on_stream;   // the latest event of each stream so far
    std::map<std::int64_t, std::vector<OpId>> join;       // companion-stream ops the stream's next op waits for
    // Non-NCCL events processed so far, per stream, by launch time (launch order is stream order).
    std::map<std::int64_t, std::vector<std::pair<double, std::size_t>>> launched;
    std::multimap<double, std::size_t> by_end;  // processed events by end time
    for (std::size_t i = 0; i < t.gpu.size(); ++i) {
      const GpuEvent& g = t.gpu[i];
      std::vector<OpId> deps;
      const auto depend_on = [&](std::size_t j) { deps.insert(deps.end(), ops_of[j].begin(), ops_of[j].end()); };
      // A collective waits for the last kernel launched before it on every other stream.
      if (g.nccl) {
        for (const auto& [s, list] : launched) {
          if (s == g.stream) continue;
          auto it = std::upper_bound(list.begin(), list.end(), std::make_pair(g.launch_ts, t.gpu.size()));
          if (it != list.begin()) depend_on(std::prev(it)->second);
        }
      }
      // A kernel that sat ready until an op of another stream ended waited on that op.
      double ready = g.launch_ts;
      if (const auto it = last_on_stream.find(g.stream); it != last_on_stream.end()) {
        const GpuEvent& prev = t.gpu[it->second];
        ready = std::max(ready, prev.ts + prev.dur);
      }
      if (g.ts > ready + kGateToleranceUs) {
        const double lo = std::max(ready, g.ts - kGateToleranceUs);
        for (auto it = by_end.upper_bound(g.ts); it != by_end.begin();) {
          --it;
          if (it->first < lo) break;
          if (t.gpu[it->second].stream == g.stream) continue;
          depend_on(it->second);
          break;
        }
      }
      if (auto j = join.find(g.stream); j != join.end()) {
        deps.insert(deps.end(), j->second.begin(), j->second.end());
        join.erase(j);
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());

      const std::uint8_t stream = stream_of.at(g.stream);
      if (g.nccl) {
        std::vector<Source> calls{sources[i]};
        if (coalesced(sources[i])) {
          calls = members_of(t, g, previous_launch[i], owned);
          if (calls.empty())
            throw SpecError(t.file, event_path(g.index),
                            "NCCL kernel \"" + g.name +
                                "\" runs a coalesced group (\"coalesced\") but no send, recv or collective call "
                                "was recorded on its thread before it: what it transfers is unknown");
        }
        for (const Source& src : calls) {
          const CommInfo c = comm_info(t, g, src, rank);
          // Assumed contiguous blocks: every block is a group of the communicator (a single rank's
          // trace stands for the ranks of all of them).
          for (int b = 0; c.block > 0 && b < world_ / c.block; ++b) {
            std::vector<int> block(static_cast<std::size_t>(c.block));
            for (int k = 0; k < c.block; ++k)
              block[static_cast<std::size_t>(k)] = b * c.block + k;
            comms.communicator(c.label, block);
          }
          const std::uint16_t comm = comms.communicator(c.label, c.group);
          OpId id = 0;
          if (c.p2p) {
            P2POp op;
            op.name = c.p2p_kind == OpKind::send ? "nccl:send" : "nccl:recv";
            op.kind = c.p2p_kind;
            op.stream = stream;
            // In a group, a recv must not queue behind the group's sends (each would wait for the
            // peer's recv, which waits behind the peer's sends): recvs go on a companion stream that
            // the NCCL stream's next op waits for.
            if (calls.size() > 1 && c.p2p_kind == OpKind::recv) {
              if (!companion_of.count(g.stream)) companion_of[g.stream] = new_stream();
              op.stream = companion_of.at(g.stream);
            }
            op.communicator = comm;
            op.bytes = c.bytes;
            const auto n = static_cast<int>(c.group.size());
            const int self = comms.position(comm, rank);
            const int peer = static_cast<int>(std::find(c.group.begin(), c.group.end(), c.peer) - c.group.begin());
            op.peer_offset = ((peer - self) % n + n) % n;
            id = ops.add_p2p(op, deps);
            if (op.stream != stream) join[g.stream].push_back(id);
          } else {
            // The op holds a view of its name until add_collective interns it: the string must outlive
            // the call (a temporary here was read after its end; found by fuzz_kineto_trace under ASan).
            const std::string name = std::string("nccl:") + to_string(c.kind);
            CollectiveOp op;
            op.name = name;
            op.collective = c.kind;
            op.stream = stream;
            op.communicator = comm;
            op.bytes = c.bytes;
            id = ops.add_collective(op, deps);
          }
          ops_of[i].push_back(id);
          event_of_op.push_back(c.event);
          issue_s_of_op.push_back(issued_s(g));
        }
      } else {
        ComputeOp op;
        const std::string name = g.name.substr(0, g.name.find('('));  // drop the argument list of templated names
        op.name = name;
        op.stream = stream;
        op.kernel = g.memcpy ? KernelClass::elementwise : kernel_class_from_name(g.name);
        op.precision = precision_from_name(g.name, Precision::bf16);
        if (g.memcpy) op.bytes = static_cast<double>(std::max<std::int64_t>(0, int_arg(g.args, "bytes").value_or(0)));
        if (gemm_of[i] != nullptr) describe_gemm(*gemm_of[i], g, op);
        op.duration_s = std::max(g.dur, 1e-3) * 1e-6;  // a 0 µs record stays measured (1 ns)
        ops_of[i].push_back(ops.add_compute(op, deps));
        event_of_op.push_back(g.index);
        issue_s_of_op.push_back(issued_s(g));
        launched[g.stream].emplace_back(g.launch_ts, i);
      }
      last_on_stream[g.stream] = i;
      by_end.emplace(g.ts + g.dur, i);
    }
    return ops;
  }

  // The ranks of each group must issue the same collectives in the same order, and every send must
  // have its recv: a trace whose ranks disagree (cut at different steps, or contradictory) is refused
  // with the first event where they part.
  void check_ranks_agree(const std::vector<RankTrace>& traces, const std::vector<int>& ranks,
                         const std::vector<OpTable>& tables, const std::vector<std::vector<std::size_t>>& events,
                         const TraceGroups& comms) const {
    std::vector<std::size_t> file_of(traces.size());
    for (std::size_t i = 0; i < traces.size(); ++i)
      file_of[static_cast<std::size_t>(ranks[i])] = i;
    struct Call {
      std::size_t file, event;
      std::string what;
    };
    const auto describe_op = [](const OpTable& ops, OpId o) {
      return std::string(ops.kind(o) == OpKind::collective ? to_string(ops.collective(o)) : to_string(ops.kind(o))) +
             " of " + std::to_string(static_cast<long long>(ops.bytes(o))) + " bytes";
    };
    // Collectives, per (communicator, group's first rank): each rank's sequence.
    std::map<std::pair<std::uint16_t, int>, std::map<int, std::vector<Call>>> coll;
    // Point-to-point, per (communicator, sender, receiver, tag): sends and recvs.
    std::map<std::tuple<std::uint16_t, int, int, std::uint32_t>, std::pair<std::vector<Call>, std::vector<Call>>> p2p;
    for (std::size_t f = 0; f < traces.size(); ++f) {
      const int rank = ranks[f];
      const OpTable& ops = tables[f];
      for (OpId o = 0; o < ops.size(); ++o) {
        if (ops.kind(o) == OpKind::compute) continue;
        const std::uint16_t c = ops.communicator(o);
        const auto group = comms.group(c, rank);
        const Call call{f, events[f][o], describe_op(ops, o)};
        if (ops.kind(o) == OpKind::collective) {
          coll[{c, group.front()}][rank].push_back(call);
          continue;
        }
        const int n = static_cast<int>(group.size());
        const int peer = group[static_cast<std::size_t>((comms.position(c, rank) + ops.peer_offset(o)) % n)];
        if (ops.kind(o) == OpKind::send)
          p2p[{c, rank, peer, ops.tag(o)}].first.push_back(call);
        else
          p2p[{c, peer, rank, ops.tag(o)}].second.push_back(call);
      }
    }
    const auto refuse = [&](const Call& a, const std::string& msg) {
      throw SpecError(traces[a.file].file, event_path(a.event), msg);
    };
    for (const auto& [key, per_rank] : coll) {
      const auto group = comms.group(key.first, key.second);
      const auto& [first_rank, first] = *per_rank.begin();
      for (int r : group) {
        const auto it = per_rank.find(r);
        const std::vector<Call> none;
        const std::vector<Call>& calls = it == per_rank.end() ? none : it->second;
        for (std::size_t k = 0; k < std::max(calls.size(), first.size()); ++k) {
          const std::string name =
              "collective #" + std::to_string(k + 1) + " of process group '" + comms.name(key.first) + "'";
          if (k >= calls.size())
            refuse(first[k], "rank " + std::to_string(first_rank) + "'s " + name + " (" + first[k].what +
                                 ") has no counterpart in rank " + std::to_string(r) + "'s trace (" +
                                 traces[file_of[static_cast<std::size_t>(r)]].file +
                                 "): the ranks' traces cover different work (cut them at the same step)");
          if (k >= first.size())
            refuse(calls[k], "rank " + std::to_string(r) + "'s " + name + " (" + calls[k].what +
                                 ") has no counterpart in rank " + std::to_string(first_rank) + "'s trace (" +
                                 traces[first[0].file].file + ")");
          if (calls[k].what != first[k].what)
            refuse(calls[k], "rank " + std::to_string(r) + "'s " + name + " is " + calls[k].what + " but rank " +
                                 std::to_string(first_rank) + "'s is " + first[k].what + " (" +
                                 traces[first[k].file].file + event_path(first[k].event) + ")");
        }
      }
    }
    for (const auto& [key, pair] : p2p) {
      const auto& [sends, recvs] = pair;
      const int sender = std::get<1>(key), receiver = std::get<2>(key);
      for (std::size_t k = 0; k < std::max(sends.size(), recvs.size()); ++k) {
        if (k >= recvs.size())
          refuse(sends[k], "rank " + std::to_string(sender) + "'s send #" + std::to_string(k + 1) + " to rank " +
                               std::to_string(receiver) + " (" + sends[k].what + ") has no matching recv in rank " +
                               std::to_string(receiver) + "'s trace");
        if (k >= sends.size())
          refuse(recvs[k], "rank " + std::to_string(receiver) + "'s recv #" + std::to_string(k + 1) + " from rank " +
                               std::to_string(sender) + " (" + recvs[k].what + ") has no matching send in rank " +
                               std::to_string(sender) + "'s trace");
        if (sends[k].what.substr(4) != recvs[k].what.substr(4))
          refuse(recvs[k], "rank " + std::to_string(receiver) + "'s recv #" + std::to_string(k + 1) + " from rank " +
                               std::to_string(sender) + " is " + recvs[k].what + " but the send is " + sends[k].what);
      }
    }
  }

 public:
  // Per rank class of the graph run() returned, per op: when the host had issued it (build_rank).
  std::vector<std::vector<double>> issue_s_;

 private:
  std::string path_;
  std::string step_;
  int world_ = 1;
  bool replicated_ = false;
};

}  // namespace

ExecutionGraph read_pytorch_trace(const std::string& path) {
  return KinetoImporter(path, "").run();
}

ExecutionGraph read_pytorch_trace_step(const std::string& path, const std::string& step) {
  return KinetoImporter(path, step).run();
}

MeasuredHostTrace read_pytorch_trace_with_host(const std::string& path, const std::string& step) {
  KinetoImporter importer(path, step);
  MeasuredHostTrace out{importer.run(), {}};
  out.issue_s = std::move(importer.issue_s_);
  return out;
}

KernelTimeline read_kernel_timeline(const std::string& path, const std::string& step) {
  // Checked here, for every caller (calibrate --from-trace's --step, Python's calibrate_from_trace):
  // a step number of up to 18 digits fits std::stoll below.
  if (step != "last" && (step.empty() || step.size() > 18 || !std::all_of(step.begin(), step.end(), [](char c) {
                           return std::isdigit(static_cast<unsigned char>(c));
                         })))
    throw SpecError("--step", "", "expected a step number >= 0 (ProfilerStep#N) or \"last\", got \"" + step + "\"");
  RankTrace t = read_rank_file(path);
  KernelTimeline out;
  out.file = path;
  const CpuOp* chosen = nullptr;
  if (!t.steps.empty() || step != "last") {
    cut_step(t, step);  // refuses a missing step, or any step number of a trace without steps
    for (const auto& s : t.steps)
      if (step == "last" ? chosen == nullptr || s.ts > chosen->ts : step_number(s.name) == std::stoll(step))
        chosen = &s;
  }
  if (t.gpu.empty())
    throw SpecError(path, "/traceEvents",
                    "no GPU kernel events (\"cat\": \"kernel\") " +
                        (chosen ? "launched inside " + chosen->name : std::string("in the trace")) +
                        ": record the step with torch.profiler's ProfilerActivity.CUDA");
  double first = std::numeric_limits<double>::infinity(), last = -first;
  for (const auto& g : t.gpu) {
    TimelineKernel k;
    k.name = g.name;
    k.memcpy = g.memcpy;
    k.communication = !g.memcpy && (g.nccl || g.name.rfind("rccl", 0) == 0);
    k.kernel = kernel_class_from_name(g.name);
    k.stream = g.stream;
    k.start_us = g.ts;
    k.duration_us = g.dur;
    if (g.launch_dur) {
      k.launch_start_us = g.launch_ts;
      k.launch_duration_us = *g.launch_dur;
    }
    first = std::min(first, g.launch_ts);
    last = std::max(last, g.ts + g.dur);
    out.kernels.push_back(std::move(k));
  }
  out.step = chosen ? chosen->name : "";
  out.step_start_us = chosen ? chosen->ts : first;
  out.step_end_us = chosen ? std::max(chosen->ts + chosen->dur, last) : last;
  return out;
}

}  // namespace clustersim
