// Flow-level network backend on SimGrid 3.32.
//
// Model: every directed link of the cluster is one SimGrid link of the same bandwidth; a transfer is
// one SimGrid communication whose route is the cluster's route (our own routing, adaptive, D-mod-K or
// ECMP, with the transfers in flight as the load, supplied through a custom NetZoneImpl; SimGrid's
// built-in zones cannot express multi-NIC rail-optimized nodes and route fat-trees without either). Concurrent
// transfers share every link of their routes by max-min fairness, solved by SimGrid's LMM solver.
//
// Configuration (docs/architecture.md, "Network backends"): network/model:CM02 and network/crosstraffic:0, so that a
// flow gets exactly its max-min share (the default LV08 adds TCP effects NVLink and InfiniBand do not have).
// network/optim:Full re-solves the whole system at each event; the default Lazy keeps per-link
// bookkeeping whose cost grows with the square of a route's length (a pipelined unit's route joins
// thousands of links): Full is faster on our runs (GPT-3 175B on 1,024 GPUs 3.2 s -> 2.5 s) and
// gives the same rates.
// Links have zero latency in SimGrid: CM02 weights sharing by route latency (RTT-unfairness, a TCP
// trait), which RDMA fabrics do not show. Latency terms are added by the collective algorithms through
// schedule(), from the cluster's link latencies.
//
// Classes of identical transfers (use_link_classes, sim/replay/traffic_classes.hpp): the replay hands
// one representative per class with its class route; each is one communication on the canonical links,
// and the platform holds those links only (built at the first communication, once the mode is known).
//
// Callers start transfers from SimGrid's maestro (callbacks of schedule()); completions come back
// through Activity::on_completion, which SimGrid fires for activities maestro started.
#include "sim/network/flow_backend.hpp"

#include <cmath>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>

#include "sim/core/error.hpp"
#include "sim/network/action_slots.hpp"
#include "sim/network/network_profile.hpp"
#include "topologies/cluster.hpp"

namespace clustersim {
namespace {

namespace sg4 = simgrid::s4u;

// The longest route of one pipelined unit, in links (see FlowBackend::start_transfers).
constexpr std::size_t k_max_unit_links = 8192;

// The whole cluster as one SimGrid zone whose routes come from Cluster::route.
class ClusterZone final : public simgrid::kernel::routing::NetZoneImpl {
 public:
  explicit ClusterZone(const Cluster& cluster) : NetZoneImpl("cluster"), cluster_(cluster) {}

  // Link capacities are the profile's effective bandwidths (line rate x technology efficiency).
  // `classes`: every communication has an explicit class route (use_link_classes), so only the
  // canonical links exist and two hosts stand for every sender and receiver (routes are explicit).
  void build(const NetworkProfile& profile, const LinkClasses* classes) {
    const int gpus = classes != nullptr ? 2 : cluster_.gpu_count();
    hosts_.reserve(static_cast<std::size_t>(gpus));
    // Hosts are created first and in rank order, so NetPoint::id() == GPU rank.
    for (int g = 0; g < gpus; ++g)
      hosts_.push_back(create_host("gpu" + std::to_string(g), {1e12}));
    const auto links = cluster_.links();
    std::vector<std::pair<std::size_t, sg4::Link*>> created;
    for (std::size_t i = 0; i < links.size(); ++i) {
      if (classes != nullptr && classes->canonical[i] != static_cast<int>(i)) continue;
      sg4::Link* l = create_link("link" + std::to_string(i), {profile.effective_bandwidth_Bps(links[i])});
      l->set_latency(0.0);
      created.emplace_back(i, l);
    }
    for (auto* h : hosts_)
      h->seal();
    link_impls_.assign(links.size(), nullptr);
    for (auto [i, l] : created) {
      l->seal();
      link_impls_[i] = l->get_impl();
    }
    seal();
  }

  sg4::Host* host(int gpu) const { return hosts_[static_cast<std::size_t>(gpu)]; }
  std::size_t hosts() const { return hosts_.size(); }

  // The flow id of the transfer being started; read by get_local_route (SimGrid asks for the route
  // synchronously inside sendto_async, in maestro, so a member suffices).
  void set_current_flow(std::uint64_t flow_id, std::span<const int> link_load, int lane) {
    flow_id_ = flow_id;
    link_load_ = link_load;
    lane_ = lane;
  }
  const std::vector<int>& last_route() const { return route_; }
  // The links of the next communication instead of a route of ours (empty: route it). A link listed
  // k times is used k times: SimGrid's solver charges the communication's rate to it k times.
  void set_explicit_route(std::span<const int> links) { explicit_route_ = links; }

  void get_local_route(const simgrid::kernel::routing::NetPoint* src, const simgrid::kernel::routing::NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* /*latency: added by the caller*/) override {
    if (!explicit_route_.empty()) {
      into->link_list_.reserve(into->link_list_.size() + explicit_route_.size());
      for (int l : explicit_route_)
        into->link_list_.push_back(link_impls_[static_cast<std::size_t>(l)]);
      return;
    }
    if (hosts_.size() != static_cast<std::size_t>(cluster_.gpu_count()))
      throw std::logic_error("flow backend: a communication without its class route under link classes");
    route_.clear();
    cluster_.route(static_cast<int>(src->id()), static_cast<int>(dst->id()), flow_id_, route_, link_load_, lane_);
    for (int l : route_)
      into->link_list_.push_back(link_impls_[static_cast<std::size_t>(l)]);
  }

 private:
  const Cluster& cluster_;
  std::vector<sg4::Host*> hosts_;
  // Per cluster link: its SimGrid link's implementation (null: not created, under link classes).
  std::vector<decltype(std::declval<sg4::Link&>().get_impl())> link_impls_;
  std::uint64_t flow_id_ = 0;
  int lane_ = -1;
  std::span<const int> link_load_;  // transfers in flight per link, for adaptive routing
  std::span<const int> explicit_route_;
  std::vector<int> route_;
};

class FlowBackend final : public NetworkBackend {
 public:
  FlowBackend(const Cluster& cluster, const NetworkProfile& profile)
      : cluster_(cluster), profile_(profile), usage_(cluster.links().size()) {}

  // The engine is a process-wide singleton that cannot be restarted: it is created at the backend's
  // first event or transfer, not before (a backend that never simulates leaves the process free to
  // fork children that each make their own: replay_engine.hpp), and never destroyed (the process ends
  // after the simulation; see sim/core/child_process.hpp).
  sg4::Engine& engine() {
    if (engine_ != nullptr) return *engine_;
    static const char* const kArgs[] = {"clustersim", "--log=root.thresh:critical", "--cfg=network/model:CM02",
                                        "--cfg=network/crosstraffic:0", "--cfg=network/optim:Full"};
    int argc = 5;
    std::vector<char*> argv;
    for (const char* a : kArgs)
      argv.push_back(const_cast<char*>(a));
    argv.push_back(nullptr);
    engine_ = new sg4::Engine(&argc, argv.data());
    sg4::Activity::on_completion_cb([](const sg4::Activity& activity) {
      auto* flow = activity.get_data<Flow>();
      if (flow == nullptr) return;
      Group* group = flow->group;
      group->backend->usage_.finish(flow->route, group->backend->now_s());
      if (--group->remaining == 0) group->finish();
    });
    return *engine_;
  }

  // The platform is built at the first communication or run(), once use_link_classes has said
  // whether every communication will carry a class route.
  ClusterZone& zone() {
    if (zone_ == nullptr) {
      engine();
      zone_ = new ClusterZone(cluster_);  // owned by SimGrid (the root zone)
      zone_->build(profile_, classes_);
    }
    return *zone_;
  }

  const char* fidelity() const override { return "flow"; }
  // SimGrid moves whole bytes: rounded half up (bytes >= 0).
  double delivered_bytes(double bytes) const override { return std::floor(bytes + 0.5); }
  std::string description() const override {
    return "SimGrid 3.32 flow model (CM02, max-min sharing, no cross-traffic) over " +
           std::to_string(cluster_.links().size()) + " directed links";
  }
  double now_s() const override { return engine_ != nullptr ? sg4::Engine::get_clock() : 0.0; }

  // The action waits in a slot; SimGrid's timer holds (this, slot), which fits its task's own storage
  // (a std::function does not: one allocation less per event).
  void schedule(double time_s, std::function<void()> fn) override {
    engine();
    simgrid::kernel::timer::Timer::set(time_s, [this, slot = actions_.put(std::move(fn))] { actions_.take(slot)(); });
  }

  // Each transfer is one SimGrid communication, except pipelined ones (Transfer::pipelined): those of
  // equal bytes form units, each a single communication of that size whose route lists every member's
  // links. Its one rate r is each member's rate; a link carrying k members is charged k r, which is
  // what k flows at rate r put on it. The unit gets its max-min share like any flow and its members
  // end together, as the steps of a pipelined algorithm do. SimGrid 3.32 expands a communication's
  // route in time quadratic in its length (lmm::System::expand scans the links already added), so a
  // unit holds at most k_max_unit_links links: longer sets are cut, in the order given, into units
  // that share bandwidth with each other by max-min. Routes are chosen transfer by transfer in the
  // order given (adaptive routing sees the ones before); the units' communications start last.
  void start_transfers(std::span<const Transfer> transfers, std::uint64_t flow_id,
                       std::function<void()> done) override {
    auto* group = new Group{0, std::move(done), {}, {}, this};
    group->comms.reserve(transfers.size());
    group->flows.reserve(transfers.size());  // stable addresses: each comm points at its Flow
    struct Unit {
      int src_gpu;
      int dst_gpu;
      std::uint64_t bytes;
      std::vector<int> route;  // every member's route, one after the other
    };
    std::vector<Unit> units;
    std::map<std::uint64_t, std::size_t> unit_of_bytes;
    ClusterZone& zone = this->zone();
    // Under link classes every communication goes from host 0 to host 1 on its explicit class route.
    const auto host = [&](int gpu, int as) { return zone.host(classes_ != nullptr ? as : gpu); };
    for (std::size_t i = 0; i < transfers.size(); ++i) {
      const Transfer& t = transfers[i];
      if (t.src_gpu == t.dst_gpu || t.bytes <= 0.0) continue;
      const auto bytes = static_cast<std::uint64_t>(delivered_bytes(t.bytes));
      if (bytes == 0) continue;
      std::span<const int> class_route;
      if (t.route_class >= 0) class_route = classes_->route(static_cast<std::size_t>(t.route_class));
      if (t.pipelined) {
        const auto [it, inserted] = unit_of_bytes.try_emplace(bytes, units.size());
        if (!inserted && units[it->second].route.size() >= k_max_unit_links) it->second = units.size();
        if (it->second == units.size()) units.push_back(Unit{t.src_gpu, t.dst_gpu, bytes, {}});
        std::vector<int>& route = units[it->second].route;
        const std::size_t begin = route.size();
        if (t.route_class >= 0)
          route.insert(route.end(), class_route.begin(), class_route.end());
        else
          cluster_.route(t.src_gpu, t.dst_gpu, flow_id + i, route, usage_.active(), t.lane);
        usage_.start(std::span<const int>(route).subspan(begin), static_cast<double>(bytes), now_s());
        continue;
      }
      zone.set_current_flow(flow_id + i, usage_.active(), t.lane);
      zone.set_explicit_route(class_route);
      sg4::CommPtr comm = sg4::Comm::sendto_async(host(t.src_gpu, 0), host(t.dst_gpu, 1), bytes);
      zone.set_explicit_route({});
      if (t.route_class >= 0)
        group->flows.push_back(Flow{group, std::vector<int>(class_route.begin(), class_route.end())});
      else
        group->flows.push_back(Flow{group, zone.last_route()});
      usage_.start(group->flows.back().route, static_cast<double>(bytes), now_s());
      comm->set_data(&group->flows.back());
      group->comms.push_back(std::move(comm));
      ++group->remaining;
    }
    for (Unit& unit : units) {
      zone.set_explicit_route(unit.route);
      sg4::CommPtr comm = sg4::Comm::sendto_async(host(unit.src_gpu, 0), host(unit.dst_gpu, 1), unit.bytes);
      zone.set_explicit_route({});
      group->flows.push_back(Flow{group, std::move(unit.route)});
      comm->set_data(&group->flows.back());
      group->comms.push_back(std::move(comm));
      ++group->remaining;
    }
    if (group->remaining == 0) {
      // Nothing to send: finish at the current time, through the event queue like any completion.
      schedule(now_s(), [group] { group->finish(); });
    }
  }

  void run() override {
    zone();
    engine().run();
  }
  const LinkUsage& link_usage() const override { return usage_; }
  void set_traffic_label(std::uint16_t label) override { usage_.set_label(label); }
  // Representatives of classes of identical transfers: one communication per class on its class
  // route, a canonical link listed c times charged c times the rate, which is what the c transfers of
  // the class crossing each link of that class put on it. When every link of a class is crossed by
  // the same transfers of each class (c(T, L): the replay's third pass) and every member of a transfer
  // class crosses each link class of its class route (checked: TrafficClasses), the max-min shares of
  // the representatives, lifted to every member, are feasible and leave every member a saturated link
  // on which no transfer is faster: the max-min shares of the exhaustive system, which are unique.
  // Only before the platform is built (the first communication or run()).
  bool use_link_classes(const LinkClasses* classes) override {
    if (zone_ != nullptr) return false;
    classes_ = classes;
    return true;
  }

 private:
  struct Group;
  struct Flow {
    Group* group;
    std::vector<int> route;
  };
  struct Group {
    std::size_t remaining;
    std::function<void()> done;
    std::vector<sg4::CommPtr> comms;
    std::vector<Flow> flows;
    FlowBackend* backend;
    void finish() {
      auto callback = std::move(done);
      // Release the comms after the completion signal has returned, not inside it.
      backend->schedule(backend->now_s(), [this] { delete this; });
      callback();
    }
  };

  const Cluster& cluster_;
  NetworkProfile profile_;
  sg4::Engine* engine_ = nullptr;
  ClusterZone* zone_ = nullptr;
  const LinkClasses* classes_ = nullptr;  // use_link_classes: the representatives' class routes
  LinkUsage usage_;
  ActionSlots actions_;  // scheduled, by slot
};

}  // namespace

std::unique_ptr<NetworkBackend> make_flow_backend(const Cluster& cluster, const NetworkProfile& profile) {
  return std::make_unique<FlowBackend>(cluster, profile);
}

}  // namespace clustersim
