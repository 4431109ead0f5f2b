#include "sim/report/timeline.hpp"

#include <map>
#include <set>

#include <nlohmann/json.hpp>

namespace clustersim {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kMicroseconds = 1e6;

std::string ranks_label(const RankClass& c) {
  const auto n = c.ranks.size();
  std::string label = c.name + " (rank " + std::to_string(c.ranks.front());
  if (n > 1) label += " and " + std::to_string(n - 1) + " more: identical work";
  return label + ")";
}

// "compute", or the communicators whose ops run on the stream: "dp", "tp + ep", ...
std::string stream_label(const ExecutionGraph& graph, const OpTable& ops, std::uint8_t stream) {
  std::set<std::string> comms;
  bool compute = false;
  for (OpId i = 0; i < ops.size(); ++i) {
    if (ops.stream(i) != stream) continue;
    if (ops.kind(i) == OpKind::compute)
      compute = true;
    else
      comms.insert(graph.communicators()[ops.communicator(i)].name);
  }
  std::string label = "stream " + std::to_string(stream) + (compute ? ": compute" : ":");
  for (const auto& c : comms)
    label += (label.back() == ':' ? " " : " + ") + c;
  return label;
}

}  // namespace

std::string timeline_to_chrome_json(const ExecutionGraph& graph, const ReplayResult& result) {
  Json events = Json::array();
  for (std::size_t c : result.timeline_classes) {
    const RankClass& rc = graph.classes()[c];
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", c}, {"args", {{"name", ranks_label(rc)}}}});
    events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", c}, {"args", {{"sort_index", c}}}});
    std::set<std::uint8_t> streams;
    for (OpId i = 0; i < rc.ops.size(); ++i)
      streams.insert(rc.ops.stream(i));
    for (std::uint8_t s : streams)
      events.push_back({{"ph", "M"},
                        {"name", "thread_name"},
                        {"pid", c},
                        {"tid", s},
                        {"args", {{"name", stream_label(graph, rc.ops, s)}}}});
  }
  for (const TimelineSlice& s : result.timeline) {
    const OpTable& ops = graph.classes()[s.rank_class].ops;
    const OpId i = s.op;
    Json args;
    std::string category;
    switch (ops.kind(i)) {
      case OpKind::compute:
        category = "compute";
        args["kernel"] = to_string(ops.kernel(i));
        args["flops"] = ops.flops(i);
        args["bytes"] = ops.bytes(i);
        if (ops.m(i) > 0) args["shape_mnk_batch"] = {ops.m(i), ops.n(i), ops.k(i), ops.batch(i)};
        break;
      case OpKind::collective:
        category = "collective";
        args["collective"] = to_string(ops.collective(i));
        args["communicator"] = graph.communicators()[ops.communicator(i)].name;
        args["bytes"] = ops.bytes(i);
        args["algorithm"] = s.algorithm;
        break;
      case OpKind::send:
      case OpKind::recv:
        category = "p2p";
        args["communicator"] = graph.communicators()[ops.communicator(i)].name;
        args["peer_offset"] = ops.peer_offset(i);
        args["tag"] = ops.tag(i);
        args["bytes"] = ops.bytes(i);
        break;
    }
    args["op"] = i;
    const double ts = s.start_s * kMicroseconds;
    events.push_back({{"ph", "X"},
                      {"name", std::string(ops.name(i))},
                      {"cat", category},
                      {"pid", s.rank_class},
                      {"tid", s.stream},
                      {"ts", ts},
                      {"dur", (s.end_s - s.start_s) * kMicroseconds},
                      {"args", std::move(args)}});
    if (s.flow != 0) {  // the arrow from the send's slice to the recv's slice
      const bool send = ops.kind(i) == OpKind::send;
      Json flow = {{"ph", send ? "s" : "f"}, {"name", "p2p"},   {"cat", "p2p"}, {"id", s.flow},
                   {"pid", s.rank_class},    {"tid", s.stream}, {"ts", ts}};
      if (!send) flow["bp"] = "e";
      events.push_back(std::move(flow));
    }
  }
  Json doc;
  doc["displayTimeUnit"] = "ms";
  doc["otherData"] = {{"step_time_s", result.step_time_s}, {"generator", "clustersim"}};
  doc["traceEvents"] = std::move(events);
  return doc.dump();
}

}  // namespace clustersim
