#include "sim/collective_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <nlohmann/json.hpp>

#include "sim/core/child_process.hpp"
#include "sim/core/error.hpp"
#include "sim/hardware/gpu_spec.hpp"
#include "sim/network/network_backend.hpp"
#include "sim/network/network_profile.hpp"
#include "sim/replay/replay_engine.hpp"
#include "topologies/cluster.hpp"

namespace clustersim {

std::vector<int> parse_rank_list(const std::string& text, int gpus) {
  std::vector<int> ranks;
  std::vector<char> seen(static_cast<std::size_t>(std::max(gpus, 0)), 0);
  std::size_t pos = 0;
  auto fail = [&](const std::string& why) -> void {
    throw SpecError("--ranks " + text, "",
                    why + " (expected ranks like 0-63 or 0,8,16 in 0.." + std::to_string(gpus - 1) + ")");
  };
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    if (item.empty()) fail("empty item");
    const std::size_t dash = item.find('-');
    long lo = 0, hi = 0;
    try {
      std::size_t used = 0;
      lo = std::stol(item.substr(0, dash), &used);
      if (used != (dash == std::string::npos ? item.size() : dash)) fail("'" + item + "' is not a rank or a range");
      hi = lo;
      if (dash != std::string::npos) {
        const std::string rest = item.substr(dash + 1);
        hi = std::stol(rest, &used);
        if (used != rest.size()) fail("'" + item + "' is not a rank or a range");
      }
    } catch (const std::logic_error&) {
      fail("'" + item + "' is not a rank or a range");
    }
    if (hi < lo) fail("range '" + item + "' runs backwards");
    for (long r = lo; r <= hi; ++r) {
      if (r < 0 || r >= gpus) fail("rank " + std::to_string(r) + " is out of range");
      if (seen[static_cast<std::size_t>(r)]++ != 0) fail("rank " + std::to_string(r) + " appears twice");
      ranks.push_back(static_cast<int>(r));
    }
    pos = comma + 1;
  }
  if (ranks.size() < 2) fail("a communicator needs at least 2 ranks");
  return ranks;
}

namespace {

constexpr double kMaxSweepBytes = 1099511627776.0;  // 2^40 bytes: 1024G
constexpr int kMaxSweepSizes = 4096;

// The number at the start of `text` and how many characters it takes (0: none).
std::pair<double, std::size_t> leading_number(const std::string& text) {
  std::size_t used = 0;
  try {
    const double v = std::stod(text, &used);
    return {v, used};
  } catch (const std::logic_error&) {
    return {0.0, 0};
  }
}

}  // namespace

double parse_byte_size(const std::string& text, const std::string& option) {
  auto [v, used] = leading_number(text);
  double mult = 1;
  const std::string suffix = used > 0 ? text.substr(used) : "";
  if (suffix == "K" || suffix == "k")
    mult = 1024.0;
  else if (suffix == "M")
    mult = 1024.0 * 1024;
  else if (suffix == "G")
    mult = 1024.0 * 1024 * 1024;
  else if (!suffix.empty())
    used = 0;
  if (used == 0 || !(v > 0) || !std::isfinite(v))
    throw SpecError(option + " " + text, "", "expected a size in bytes like 8, 64K, 8M or 1G");
  if (v * mult > kMaxSweepBytes)
    throw SpecError(option + " " + text, "",
                    "expected a size of at most 1024G (2^40 bytes; nccl-tests sweeps reach a few G), got " +
                        nlohmann::json(v * mult).dump() + " bytes");
  return v * mult;
}

double parse_step_factor(const std::string& text) {
  const auto [v, used] = leading_number(text);
  if (used == 0 || used != text.size() || !(v > 1.0) || !std::isfinite(v))
    throw SpecError("--step-factor " + text, "", "expected a number > 1, like 2");
  return v;
}

CollectiveSweepOptions collective_sweep_options(const ClusterSpec& cluster, const CollectiveSweepRequest& request) {
  CollectiveSweepOptions o;
  // send_recv: nccl-tests' sendrecv_perf (each rank sends to the next of the ranks, receives from the
  // previous); a peer offset K pairs rank i with rank i + K instead (K = n/2: halves facing each other).
  o.send_recv = is_send_recv_op(request.op);
  if (!o.send_recv) o.kind = parse_collective_kind(request.op);
  if (request.peer_offset) {
    if (!o.send_recv) throw SpecError("--peer-offset", "", "applies to --op send_recv only");
    o.peer_offset = *request.peer_offset;
  }
  o.ranks =
      parse_rank_list(request.ranks.value_or("0-" + std::to_string(cluster.gpu_count() - 1)), cluster.gpu_count());
  o.min_bytes = parse_byte_size(request.min_bytes, "--min-bytes");
  o.max_bytes = parse_byte_size(request.max_bytes, "--max-bytes");
  if (o.max_bytes < o.min_bytes)
    throw SpecError("--max-bytes " + request.max_bytes, "", "must be at least --min-bytes");
  o.step_factor = parse_step_factor(request.step_factor);
  // The sizes are min * factor^k <= max: their count is known before any is simulated.
  const double steps = std::floor(std::log(o.max_bytes / o.min_bytes) / std::log(o.step_factor)) + 1;
  if (steps > kMaxSweepSizes)
    throw SpecError("--step-factor " + request.step_factor, "",
                    "the sweep from --min-bytes " + request.min_bytes + " to --max-bytes " + request.max_bytes +
                        " would have " + std::to_string(static_cast<long long>(steps)) + " sizes; expected at most " +
                        std::to_string(kMaxSweepSizes) + " (a larger step factor)");
  if (request.sizes.size() > static_cast<std::size_t>(kMaxSweepSizes))
    throw SpecError(
        "sizes", "",
        "expected at most " + std::to_string(kMaxSweepSizes) + " sizes, got " + std::to_string(request.sizes.size()));
  for (double s : request.sizes)
    if (!(s > 0.0) || !std::isfinite(s) || s > kMaxSweepBytes)
      throw SpecError("sizes", "", "expected sizes in bytes > 0 and at most 2^40, got " + nlohmann::json(s).dump());
  o.sizes = request.sizes;
  o.fidelity = request.fidelity.value_or(o.fidelity);
  o.algorithm = request.algorithm.value_or(o.algorithm);
  o.network_profile = request.network_profile.value_or(o.network_profile);
  return o;
}

std::string collective_rows_json(const std::vector<CollectiveSweepRow>& rows, int indent) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const auto& r : rows) {
    j.push_back({{"size_bytes", r.bytes},
                 {"count", r.count},
                 {"type", "float"},
                 {"algorithm", r.algorithm},
                 {"time_us", r.time_s * 1e6},
                 {"algbw_GBps", r.algbw_Bps / 1e9},
                 {"busbw_GBps", r.busbw_Bps / 1e9},
                 {"protocol", r.protocol}});
  }
  return j.dump(indent);
}

bool is_send_recv_op(const std::string& text) {
  return text == "send_recv" || text == "sendrecv";
}

std::vector<CollectiveSweepRow> run_collective_sweep_in_this_process(const ClusterSpec& spec,
                                                                     const CollectiveSweepOptions& o,
                                                                     const NetworkProfile& profile) {
  const Cluster cluster = Cluster::build(spec);
  const NetworkBackendEntry* backend_entry = find_network_backend(o.fidelity);
  if (backend_entry == nullptr) throw SpecError("--fidelity " + o.fidelity, "", "expected flow or analytical");

  std::vector<double> sizes = o.sizes;
  for (double s = o.min_bytes; sizes.empty() || (o.sizes.empty() && s <= o.max_bytes * (1 + 1e-12));
       s *= o.step_factor) {
    sizes.push_back(std::max<double>(o.element_bytes, std::floor(s / o.element_bytes) * o.element_bytes));
    if (o.step_factor <= 1.0) break;
  }
  ExecutionGraph graph(cluster.gpu_count());
  RankClass& members = graph.add_class("communicator", o.ranks);
  std::vector<int> others;
  std::vector<char> in_group(static_cast<std::size_t>(cluster.gpu_count()), 0);
  for (const int r : o.ranks)
    in_group[static_cast<std::size_t>(r)] = 1;
  for (int r = 0; r < cluster.gpu_count(); ++r)
    if (in_group[static_cast<std::size_t>(r)] == 0) others.push_back(r);
  if (!others.empty()) graph.add_class("idle", others);
  // Send/recv: one communicator per size, so that the replay's per-communicator record is that size's
  // time. Sends and receives on two streams (a cyclic shift on one in-order stream would deadlock),
  // each size after the previous one's receive, as nccl-tests runs them.
  std::vector<std::uint16_t> p2p_comms;
  if (o.send_recv) {
    const auto n = static_cast<std::int32_t>(o.ranks.size());
    const std::int32_t offset = ((o.peer_offset % n) + n) % n;
    if (offset == 0)
      throw SpecError(
          "--peer-offset " + std::to_string(o.peer_offset), "",
          "a rank cannot send to itself: the offset must not be a multiple of the " + std::to_string(n) + " ranks");
    std::vector<OpId> previous;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      p2p_comms.push_back(graph.add_communicator({"sendrecv " + std::to_string(i), {o.ranks}}));
      const OpId send = members.ops.add_p2p({"send", OpKind::send, p2p_comms.back(), offset, 0, sizes[i], 1}, previous);
      const OpId recv =
          members.ops.add_p2p({"recv", OpKind::recv, p2p_comms.back(), -offset, 0, sizes[i], 2}, previous);
      previous = {send, recv};
    }
  } else {
    const auto comm = graph.add_communicator({"sweep", {o.ranks}});
    for (double s : sizes)
      members.ops.add_collective({"sweep", o.kind, comm, s, 1});
  }

  auto backend = backend_entry->make(cluster, profile);
  ReplayOptions ro;
  ro.collective_algorithm = o.algorithm;
  ro.network_profile = profile;
  const ReplayResult r = replay(graph, cluster, GpuSpec{}, *backend, ro);
  if (o.send_recv) {
    std::vector<CollectiveSweepRow> rows;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const auto it = r.p2p.find(p2p_comms[i]);
      CollectiveSweepRow row;
      row.bytes = sizes[i];
      row.count = static_cast<std::int64_t>(sizes[i] / o.element_bytes);
      row.algorithm = "p2p";
      row.time_s = it == r.p2p.end() ? 0.0 : it->second.time_s;
      row.algbw_Bps = row.time_s > 0 ? row.bytes / row.time_s : 0.0;
      row.busbw_Bps = row.algbw_Bps;  // nccl-tests' sendrecv: bus factor 1
      rows.push_back(row);
    }
    return rows;
  }
  std::vector<CollectiveSweepRow> rows;
  for (std::size_t i = 0; i < r.collectives.size(); ++i) {
    const auto& rec = r.collectives[i];
    CollectiveSweepRow row;
    row.bytes = rec.bytes;
    row.count = static_cast<std::int64_t>(rec.bytes / o.element_bytes);
    row.algorithm = rec.algorithm;
    row.protocol = rec.protocol;
    row.time_s = rec.end_s - rec.start_s;
    row.algbw_Bps = row.time_s > 0 ? row.bytes / row.time_s : 0.0;
    row.busbw_Bps = row.algbw_Bps * bus_factor(o.kind, static_cast<int>(o.ranks.size()));
    rows.push_back(row);
  }
  return rows;
}

std::string collective_sweep_profile_name(const ClusterSpec& cluster, const CollectiveSweepOptions& options) {
  return options.network_profile == kAutoNetworkProfile ? network_profile_for_gpu(cluster.gpu_id)
                                                        : options.network_profile;
}

std::vector<CollectiveSweepRow> simulate_collective_sweep(const ClusterSpec& cluster,
                                                          const CollectiveSweepOptions& options) {
  const NetworkProfile profile = load_network_profile(collective_sweep_profile_name(cluster, options));
  const std::string text = run_in_child_process([&] {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : run_collective_sweep_in_this_process(cluster, options, profile))
      j.push_back({r.bytes, r.count, r.algorithm, r.time_s, r.algbw_Bps, r.busbw_Bps, r.protocol});
    return j.dump();
  });
  std::vector<CollectiveSweepRow> rows;
  for (const auto& a : nlohmann::json::parse(text)) {
    rows.push_back({a[0].get<double>(), a[1].get<std::int64_t>(), a[2].get<std::string>(), a[6].get<std::string>(),
                    a[3].get<double>(), a[4].get<double>(), a[5].get<double>()});
  }
  return rows;
}

}  // namespace clustersim
