#include "topologies/topology_export.hpp"

#include <iomanip>
#include <map>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "sim/core/enum_names.hpp"
#include "sim/core/named_table.hpp"
#include "sim/core/xml_escape.hpp"

namespace clustersim {
namespace {

std::string dot_quote(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

std::string number(double x) {
  std::ostringstream os;
  os << std::setprecision(12) << x;
  return os.str();
}

std::string short_rate(double Bps) {
  const double Gbps = Bps * 8 / 1e9;
  std::ostringstream os;
  os << std::setprecision(4);
  if (Gbps >= 1000)
    os << Gbps / 1000 << "T";
  else
    os << Gbps << "G";
  return os.str();
}

// Links grouped by ordered (src, dst) pair: total bandwidth, the latency of the first, count.
struct Merged {
  double bandwidth_Bps = 0;
  double latency_s = 0;
  int count = 0;
  LinkTechnology technology = LinkTechnology::nvlink;
};

std::map<std::pair<int, int>, Merged> merge_links(const Cluster& c) {
  std::map<std::pair<int, int>, Merged> out;
  for (const Link& l : c.links()) {
    Merged& m = out[{l.src, l.dst}];
    if (m.count == 0) {
      m.latency_s = l.latency_s;
      m.technology = l.technology;
    }
    m.bandwidth_Bps += l.bandwidth_Bps;
    ++m.count;
  }
  return out;
}

constexpr EnumName<LinkTechnology> kDotColors[] = {
    {LinkTechnology::nvlink, "forestgreen"},
    {LinkTechnology::pcie, "gray40"},
    {LinkTechnology::infiniband, "royalblue"},
    {LinkTechnology::ethernet, "darkorange"},
};

// Switches of the fabric (leaf, spine, core) are the rest: box3d.
constexpr EnumName<DeviceKind> kDotShapes[] = {
    {DeviceKind::gpu, "box"},
    {DeviceKind::nic, "ellipse"},
    {DeviceKind::nvswitch, "hexagon"},
    {DeviceKind::pcie_switch, "hexagon"},
    {DeviceKind::host_bridge, "hexagon"},
};

const char* dot_color(LinkTechnology t) {
  return name_of(kDotColors, t, "black");
}

const char* dot_shape(DeviceKind k) {
  return name_of(kDotShapes, k, "box3d");
}

std::string write_simgrid(const Cluster& c) {
  return export_simgrid_xml(c);
}

constexpr ExportFormat k_formats[] = {
    {"simgrid", "SimGrid 3.32 platform XML (hosts = GPUs, routers, one-hop routes, Dijkstra routing)", &write_simgrid},
    {"dot", "GraphViz DOT (dot -Tsvg): nodes boxed, switches by tier, one edge per cable", &export_dot},
    {"json", "JSON: the spec, devices and directed links (SI units)", &export_json},
};

// The JSON array of `items`: each an object numbered by its index ("id"), then the fields `fields`
// gives it (export_json's devices and links).
template <class T, class Fields>
nlohmann::ordered_json numbered(std::span<const T> items, Fields fields) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < items.size(); ++i) {
    nlohmann::ordered_json o = {{"id", i}};
    o.update(fields(items[i]));
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace

std::string export_simgrid_xml(const Cluster& c, double host_speed_flops) {
  std::ostringstream os;
  const auto devices = c.devices();
  os << "<?xml version='1.0'?>\n"
     << "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
     << "<platform version=\"4.1\">\n"
     << "  <!-- clustersim topology export of '" << xml_escape(c.spec().name) << "': " << c.gpu_count()
     << " GPUs (hosts), " << devices.size() - static_cast<std::size_t>(c.gpu_count())
     << " routers. Parallel links are merged. -->\n"
     << "  <zone id=\"" << xml_escape(c.spec().name.empty() ? "cluster" : c.spec().name)
     << "\" routing=\"DijkstraCache\">\n";
  for (int g = 0; g < c.gpu_count(); ++g)
    os << "    <host id=\"" << xml_escape(devices[static_cast<std::size_t>(g)].name) << "\" speed=\""
       << number(host_speed_flops) << "f\"/>\n";
  for (std::size_t i = static_cast<std::size_t>(c.gpu_count()); i < devices.size(); ++i)
    os << "    <router id=\"" << xml_escape(devices[i].name) << "\"/>\n";
  const auto merged = merge_links(c);
  int id = 0;
  for (const auto& [pair, m] : merged) {
    os << "    <link id=\"l" << id << "\" bandwidth=\"" << number(m.bandwidth_Bps) << "Bps\" latency=\""
       << number(m.latency_s) << "s\"/>\n";
    ++id;
  }
  id = 0;
  for (const auto& [pair, m] : merged) {
    os << "    <route src=\"" << xml_escape(devices[static_cast<std::size_t>(pair.first)].name) << "\" dst=\""
       << xml_escape(devices[static_cast<std::size_t>(pair.second)].name) << "\" symmetrical=\"NO\"><link_ctn id=\"l"
       << id << "\"/></route>\n";
    ++id;
  }
  os << "  </zone>\n</platform>\n";
  return os.str();
}

std::string export_dot(const Cluster& c) {
  std::ostringstream os;
  const auto devices = c.devices();
  os << "digraph " << dot_quote(c.spec().name.empty() ? "cluster" : c.spec().name) << " {\n"
     << "  graph [rankdir=BT, newrank=true, nodesep=0.15, ranksep=1.2, fontname=\"Helvetica\"];\n"
     << "  node [fontname=\"Helvetica\", fontsize=10, style=filled, fillcolor=white];\n"
     << "  edge [fontname=\"Helvetica\", fontsize=8, arrowsize=0.5];\n";
  // Devices of one node in one box; rack-scale NVSwitches next to their domain.
  std::map<int, std::vector<std::size_t>> by_node;
  std::map<int, std::vector<std::size_t>> by_tier;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const Device& d = devices[i];
    if (d.node >= 0)
      by_node[d.node].push_back(i);
    else
      by_tier[static_cast<int>(d.kind)].push_back(i);
  }
  const auto declare = [&](std::size_t i) {
    const Device& d = devices[i];
    const char* fill = d.kind == DeviceKind::gpu ? "palegreen" : d.kind == DeviceKind::nic ? "lightblue" : "white";
    std::string label = d.name.substr(d.name.find('/') == std::string::npos ? 0 : d.name.find('/') + 1);
    os << "    " << dot_quote(d.name) << " [label=" << dot_quote(label) << ", shape=" << dot_shape(d.kind)
       << ", fillcolor=" << fill << "];\n";
  };
  for (const auto& [node, ids] : by_node) {
    os << "  subgraph " << dot_quote("cluster_node" + std::to_string(node))
       << " {\n    label=" << dot_quote("node" + std::to_string(node)) << "; style=rounded; color=gray60;\n";
    for (const std::size_t i : ids)
      declare(i);
    os << "  }\n";
  }
  for (const auto& [tier, ids] : by_tier) {
    os << "  { rank=same;\n";
    for (const std::size_t i : ids)
      declare(i);
    os << "  }\n";
  }
  // One edge per unordered pair: both directions present -> dir=both.
  const auto merged = merge_links(c);
  for (const auto& [pair, m] : merged) {
    const auto back = merged.find({pair.second, pair.first});
    const bool duplex = back != merged.end();
    if (duplex && pair.first > pair.second) continue;
    std::string label = short_rate(m.bandwidth_Bps / m.count);
    if (m.count > 1) label = std::to_string(m.count) + " x " + label;
    os << "  " << dot_quote(devices[static_cast<std::size_t>(pair.first)].name) << " -> "
       << dot_quote(devices[static_cast<std::size_t>(pair.second)].name) << " [dir=" << (duplex ? "both" : "forward")
       << ", color=" << dot_color(m.technology) << ", label=" << dot_quote(label) << "];\n";
  }
  os << "}\n";
  return os.str();
}

std::string export_json(const Cluster& c) {
  nlohmann::ordered_json j;
  j["spec"] = nlohmann::ordered_json::parse(cluster_spec_to_json(c.spec()));
  j["devices"] = numbered(c.devices(), [](const Device& d) -> nlohmann::ordered_json {
    return {{"name", d.name},   {"kind", to_string(d.kind)}, {"node", d.node}, {"local_index", d.local_index},
            {"group", d.group}, {"forwards", d.forwards}};
  });
  j["links"] = numbered(c.links(), [](const Link& l) -> nlohmann::ordered_json {
    return {{"src", l.src},
            {"dst", l.dst},
            {"bandwidth_Bps", l.bandwidth_Bps},
            {"latency_s", l.latency_s},
            {"technology", to_string(l.technology)}};
  });
  return j.dump(1);
}

std::span<const ExportFormat> export_formats() {
  return k_formats;
}

const ExportFormat* find_export_format(std::string_view name) {
  return find_by_name(export_formats(), name);
}

}  // namespace clustersim
