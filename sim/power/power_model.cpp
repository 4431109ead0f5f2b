#include "sim/power/power_model.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "sim/power/gpu_energy.hpp"
#include "sim/replay/replay_engine.hpp"
#include "topologies/cluster.hpp"
#include "topologies/topology_metrics.hpp"
#include "workloads/execution_graph.hpp"

namespace clustersim {
namespace {

constexpr double kBitsPerByte = 8.0;

double average_w(const DeviceLoad& d) {
  const double busy = std::clamp(d.busy_fraction, 0.0, 1.0);
  return d.count * (d.power.static_w + (d.power.max_w - d.power.static_w) * busy);
}

// A constant power replacing a catalogue figure (cluster spec power overrides).
void override_power(DevicePower& p, const std::optional<double>& w) {
  if (!w) return;
  p = {*w, *w, "cluster spec (power override)"};
}

// Mean busy fraction over the given links.
double busy_fraction(const std::vector<int>& links, const ReplayResult& r, double step_s) {
  if (links.empty() || step_s <= 0) return 0.0;
  double busy = 0.0;
  for (const int l : links)
    if (static_cast<std::size_t>(l) < r.link_busy_s.size()) busy += r.link_busy_s[static_cast<std::size_t>(l)];
  return std::clamp(busy / (static_cast<double>(links.size()) * step_s), 0.0, 1.0);
}

bool is_fabric_switch(DeviceKind k) {
  return k == DeviceKind::leaf_switch || k == DeviceKind::spine_switch || k == DeviceKind::core_switch;
}

}  // namespace

PowerStats compute_power(const PowerInputs& in) {
  PowerStats s;
  const double t = in.step_time_s;
  s.pue = in.pue;
  double gpu_energy = 0.0, gpu_peak = 0.0;
  int gpus = 0;
  for (const RankClassActivity& c : in.classes) {
    const GpuActivity a =
        gpu_activity(c.tensor_s, c.vector_s, c.communication_s, c.exposed_communication_s, t, c.low_precision_tensor_s);
    const double per_gpu = gpu_energy_j(in.gpu, a);
    GpuClassEnergy e;
    e.name = c.name;
    e.ranks = c.ranks;
    e.tensor_s = a.tensor_s;
    e.vector_s = a.vector_s;
    e.exposed_communication_s = a.exposed_communication_s;
    e.overlapped_communication_s = a.overlapped_communication_s;
    e.waiting_s = a.waiting_s;
    e.avg_w_per_gpu = t > 0 ? per_gpu / t : 0.0;
    e.energy_per_step_j = per_gpu * c.ranks;
    s.gpu_classes.push_back(e);
    gpu_energy += e.energy_per_step_j;
    gpu_peak += gpu_peak_w(in.gpu, a) * c.ranks;
    gpus += c.ranks;
  }
  s.by_device.push_back({"gpu", static_cast<double>(gpus), t > 0 ? gpu_energy / t : 0.0, gpu_energy,
                         "activity from the replay x power by activity, " + in.gpu.source});
  double it_energy = gpu_energy, it_peak_w = gpu_peak;
  for (const DeviceLoad& d : in.devices) {
    if (d.count <= 0) continue;
    const double w = average_w(d);
    s.by_device.push_back({d.device, d.count, w, w * t, d.power.source});
    it_energy += w * t;
    it_peak_w += d.count * d.power.max_w;
  }
  const double overhead = it_energy * (in.pue - 1.0);
  s.by_device.push_back(
      {"facility", 0.0, t > 0 ? overhead / t : 0.0, overhead, "cooling and power distribution: IT energy x (PUE - 1)"});
  s.energy_per_step_j = it_energy + overhead;
  s.gpu_avg_w = gpus > 0 && t > 0 ? gpu_energy / t / gpus : 0.0;
  s.it_avg_kw = t > 0 ? it_energy / t / 1e3 : 0.0;
  s.cluster_avg_kw = s.it_avg_kw * in.pue;
  s.peak_kw = it_peak_w * in.pue / 1e3;
  s.energy_per_token_j = in.tokens_per_step > 0 ? s.energy_per_step_j / in.tokens_per_step : 0.0;
  return s;
}

PowerInputs power_inputs(const Cluster& cluster, const TopologyMetrics& metrics, const GpuSpec& gpu,
                         const ExecutionGraph& graph, const ReplayResult& result, double tokens_per_step) {
  const ClusterSpec& spec = cluster.spec();
  const PowerSpec& o = spec.power;
  PowerInputs in;
  in.step_time_s = result.step_time_s;
  in.tokens_per_step = tokens_per_step;
  in.pue = o.pue;
  in.gpu = gpu_power_model(gpu);
  const auto set = [](double& figure, const std::optional<double>& v) {
    if (v) figure = *v;
  };
  set(in.gpu.tensor_w, o.gpu_tensor_w);  // the override sets every tensor kernel's power, fp8 included
  set(in.gpu.low_precision_tensor_w, o.gpu_tensor_w);
  set(in.gpu.vector_w, o.gpu_vector_w);
  set(in.gpu.communication_w, o.gpu_communication_w);
  set(in.gpu.overlap_communication_w, o.gpu_overlap_communication_w);
  set(in.gpu.waiting_w, o.gpu_waiting_w);
  set(in.gpu.host_w_per_gpu, o.host_w_per_gpu);
  for (const auto* figure : {&o.gpu_tensor_w, &o.gpu_vector_w, &o.gpu_communication_w, &o.gpu_waiting_w})
    if (*figure) in.gpu.tdp_w = std::max(in.gpu.tdp_w, **figure);
  if (o.gpu_tensor_w || o.gpu_vector_w || o.gpu_communication_w || o.gpu_overlap_communication_w || o.gpu_waiting_w)
    in.gpu.source += " with the cluster spec's power overrides";

  int ranks = 0;
  const auto& classes = graph.classes();
  for (std::size_t c = 0; c < classes.size() && c < result.classes.size(); ++c) {
    const ClassTimes& t = result.classes[c];
    const int n = static_cast<int>(classes[c].ranks.size());
    in.classes.push_back({classes[c].name, n, t.tensor_s, t.vector_s, t.communication_s, t.exposed_communication_s,
                          t.low_precision_tensor_s});
    ranks += n;
  }
  if (ranks < cluster.gpu_count())  // GPUs the workload does not use wait through the step
    in.classes.push_back({"unused GPUs", cluster.gpu_count() - ranks, 0.0, 0.0, 0.0, 0.0});

  DevicePower host{in.gpu.host_w_per_gpu, in.gpu.host_w_per_gpu,
                   o.host_w_per_gpu ? "cluster spec (power override)" : in.gpu.source};
  in.devices.push_back({"host", static_cast<double>(cluster.gpu_count()), host, 0.0});

  // Links leaving each kind of device, for the busy fractions.
  const auto devices = cluster.devices();
  const auto links = cluster.links();
  std::vector<int> nvswitch_links, nic_links;
  std::map<std::tuple<DeviceKind, LinkTechnology, double>, std::pair<long, std::vector<int>>> switches;
  long nvswitch_devices = 0, nics = 0;
  for (std::size_t d = 0; d < devices.size(); ++d) {
    const DeviceKind kind = devices[d].kind;
    const auto out = cluster.out_links(static_cast<int>(d));
    if (kind == DeviceKind::nvswitch) {
      ++nvswitch_devices;
      nvswitch_links.insert(nvswitch_links.end(), out.begin(), out.end());
    } else if (kind == DeviceKind::nic) {
      ++nics;
      for (const int l : out)
        if (links[static_cast<std::size_t>(l)].technology != LinkTechnology::pcie) nic_links.push_back(l);
    } else if (is_fabric_switch(kind) && !out.empty()) {
      const Link& first = links[static_cast<std::size_t>(out.front())];
      auto& group = switches[{kind, first.technology, first.bandwidth_Bps * kBitsPerByte / 1e9}];
      ++group.first;
      group.second.insert(group.second.end(), out.begin(), out.end());
    }
  }
  const double step = result.step_time_s;
  double chips = static_cast<double>(nvswitch_devices);
  for (const DeviceCount& dc : metrics.devices)
    if (dc.kind == "nvswitch_chip") chips = static_cast<double>(dc.count);
  if (chips > 0) {
    DevicePower p = nvswitch_chip_power(spec.node.scale_up.generation);
    override_power(p, o.nvswitch_chip_w);
    in.devices.push_back({"nvswitch_chip", chips, p, busy_fraction(nvswitch_links, result, step)});
  }
  if (nics > 0) {
    DevicePower p = nic_power(spec.node.nic_bandwidth_Gbps);
    override_power(p, o.nic_w);
    in.devices.push_back({"nic", static_cast<double>(nics), p, busy_fraction(nic_links, result, step)});
  }
  for (const auto& [key, group] : switches) {
    const auto& [kind, technology, speed_Gbps] = key;
    const int radix = kind == DeviceKind::spine_switch && spec.fabric.spine_radix > 0 ? spec.fabric.spine_radix
                                                                                      : spec.fabric.switch_radix;
    DevicePower p = switch_power(to_string(technology), speed_Gbps, radix);
    override_power(p, o.switch_w);
    in.devices.push_back(
        {to_string(kind), static_cast<double>(group.first), p, busy_fraction(group.second, result, step)});
  }
  for (const TransceiverCount& t : metrics.transceivers) {
    DevicePower p = transceiver_power(t.speed_Gbps);
    override_power(p, o.transceiver_w);
    in.devices.push_back({"transceiver", static_cast<double>(t.count), p, 0.0});
  }
  return in;
}

}  // namespace clustersim
