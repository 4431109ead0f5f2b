// The analytical network backend: our own event queue and link-level accounting, no flow solver.
//
// Each transfer's rate is fixed when it starts: the bottleneck of its route, where a link of
// effective bandwidth B carrying n transfers at that moment (this one, the others of its group and
// any still running) offers B/n:
//     rate = min over route links l of B_l / n_l,     duration = bytes / rate.
// Where the group's own transfers on a link differ in size (a tree's merged edges, an all-to-allv),
// they share it in proportion to their bytes, so that the link drains the group's bytes b_l together
// (a transfer of b bytes counts b_l / b, each other transfer in flight 1):
//     rate = min over l of B_l / (n_l - k_l + b_l / b),  k_l the group's transfers on l.
// A group finishes with its slowest transfer. Rates are not revised when other transfers start or
// end: exact on an idle fabric and for a group's own contention (a ring, a tree, an all-to-all:
// these equal the max-min shares of the flow backend), approximate under changing cross-traffic,
// where it is pessimistic for transfers that outlive their competitors and optimistic for those that
// start first. It costs one route per transfer and no solver: sweeps of thousands of configurations.
// Given link classes (use_link_classes), a transfer with a route_class is the representative of a
// class of identical transfers and its route is its class route (link_classes.hpp): the counts above
// are then kept on each link class's canonical link (sim/replay/traffic_classes.hpp).
#include "sim/network/analytical_backend.hpp"

#include <algorithm>
#include <bit>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/stable_key_sort.hpp"
#include "sim/network/action_slots.hpp"
#include "sim/network/network_profile.hpp"
#include "topologies/cluster.hpp"

namespace clustersim {
namespace {

class AnalyticalBackend final : public NetworkBackend {
 public:
  AnalyticalBackend(const Cluster& cluster, const NetworkProfile& profile)
      : cluster_(cluster), usage_(cluster.links().size()) {
    links_.reserve(cluster.links().size());
    for (const Link& l : cluster.links())
      links_.push_back(LinkState{profile.effective_bandwidth_Bps(l), 0, -1});
  }

  const char* fidelity() const override { return "analytical"; }
  std::string description() const override {
    return "analytical: bottleneck bandwidth shared by the transfers on each link when they start, over " +
           std::to_string(cluster_.links().size()) + " directed links";
  }
  double now_s() const override { return now_s_; }

  void schedule(double time_s, std::function<void()> fn) override {
    push_event(time_s, actions_.put(std::move(fn)), k_action);
  }

  void start_transfers(std::span<const Transfer> transfers, std::uint64_t flow_id,
                       std::function<void()> done) override {
    // Routes first: every transfer of the group counts on its links before rates are computed.
    const std::uint32_t group_index = take_group();
    Group* group = &groups_[group_index];  // nothing below adds a group: the pointer stays valid
    group->route_begin.reserve(transfers.size() + 1);
    group->route_begin.push_back(0);
    group->links.reserve(transfers.size() * hops_per_transfer_);
    for (std::size_t i = 0; i < transfers.size(); ++i) {
      const Transfer& t = transfers[i];
      if (t.src_gpu != t.dst_gpu && t.bytes > 0.0) {
        // Adaptive routing sees the transfers in flight, this group's earlier ones included.
        if (t.route_class >= 0) {
          const auto route = classes_->route(static_cast<std::size_t>(t.route_class));
          group->links.insert(group->links.end(), route.begin(), route.end());
        } else {
          cluster_.route(t.src_gpu, t.dst_gpu, flow_id + i, group->links, usage_.active(), t.lane);
        }
      }
      group->route_begin.push_back(group->links.size());
      // Bytes and busy time per link, transfer by transfer.
      if (group->route_begin[i + 1] != group->route_begin[i]) usage_.start(group->route(i), t.bytes, now_s_);
    }
    for (int l : group->links)
      ++links_[static_cast<std::size_t>(l)].active;
    if (!transfers.empty())  // the next group's guess of its routes' length (a reservation only)
      hops_per_transfer_ = std::max<std::size_t>(1, (group->links.size() + transfers.size() - 1) / transfers.size());
    // The group's own bytes per link, and whether its transfers there differ in size.
    for (std::size_t i = 0; i < transfers.size(); ++i) {
      for (const int l : group->route(i)) {
        int& slot = links_[static_cast<std::size_t>(l)].share_slot;
        if (slot < 0) {
          slot = static_cast<int>(shares_.size());
          shares_.push_back(LinkShare{0, 0.0, transfers[i].bytes, transfers[i].bytes});
          touched_.push_back(l);
        }
        LinkShare& share = shares_[static_cast<std::size_t>(slot)];
        ++share.count;
        share.bytes += transfers[i].bytes;
        share.smallest = std::min(share.smallest, transfers[i].bytes);
        share.largest = std::max(share.largest, transfers[i].bytes);
      }
    }
    double duration = 0.0;
    ends_.clear();
    for (std::size_t i = 0; i < transfers.size(); ++i) {
      if (group->route_begin[i + 1] == group->route_begin[i]) continue;
      const std::span<const int> route = group->route(i);
      const double bytes = transfers[i].bytes;
      double rate = std::numeric_limits<double>::infinity();
      for (const int l : route) {
        const LinkState& link = links_[static_cast<std::size_t>(l)];
        const LinkShare& share = shares_[static_cast<std::size_t>(link.share_slot)];
        // Equal transfers of the group share a link equally with each other and with the transfers
        // of other groups in flight; unequal ones of the group in proportion to their bytes (the
        // link drains the group's bytes in one go, as a pipelined steady state does).
        const double weight = share.smallest == share.largest
                                  ? static_cast<double>(link.active)
                                  : static_cast<double>(link.active - share.count) + share.bytes / bytes;
        rate = std::min(rate, link.bandwidth_Bps / weight);
      }
      const double d = bytes / rate;
      duration = std::max(duration, d);
      // Times are >= 0, whose IEEE-754 bit patterns order as the numbers do (+ 0.0 turns -0 into +0).
      ends_.emplace_back(std::bit_cast<std::uint64_t>(now_s_ + d + 0.0), static_cast<std::uint32_t>(i));
    }
    for (const int l : touched_)
      links_[static_cast<std::size_t>(l)].share_slot = -1;
    touched_.clear();
    shares_.clear();
    // The transfers end at their own times; those ending at the same time share one event, which
    // finishes them in the group's order (what one event per transfer, scheduled in that order, did).
    stable_sort_by_key(ends_);
    group->ending.reserve(ends_.size());
    group->batch_begin.reserve(ends_.size() + 1);
    for (std::size_t k = 0; k < ends_.size();) {
      const std::size_t first = k;
      for (; k < ends_.size() && ends_[k].first == ends_[first].first; ++k)
        group->ending.push_back(ends_[k].second);
      push_event(std::bit_cast<double>(ends_[first].first), static_cast<std::uint32_t>(group->batch_begin.size()),
                 group_index);
      group->batch_begin.push_back(first);
    }
    group->batch_begin.push_back(ends_.size());
    // Release the links when the group ends.
    group->done = std::move(done);
    push_event(now_s_ + duration, k_release, group_index);
  }

  void run() override {
    while (!events_.empty()) {
      std::pop_heap(events_.begin(), events_.end(), std::greater<>{});
      const Event e = events_.back();
      events_.pop_back();
      now_s_ = e.time_s;
      if (e.group == k_action) {
        actions_.take(e.slot)();
      } else if (e.slot != k_release) {  // a batch of the group's transfers ending together
        const Group& group = groups_[e.group];
        for (std::size_t j = group.batch_begin[e.slot]; j < group.batch_begin[e.slot + 1]; ++j)
          usage_.finish(group.route(group.ending[j]), now_s_);
      } else {  // the group's last event (scheduled after its batches, at the latest end): release it
        Group& group = groups_[e.group];
        for (int l : group.links)
          --links_[static_cast<std::size_t>(l)].active;
        const std::function<void()> done = std::move(group.done);
        give_back_group(e.group);
        done();  // may start groups, which may move groups_
      }
    }
  }

  const LinkUsage& link_usage() const override { return usage_; }
  void set_traffic_label(std::uint16_t label) override { usage_.set_label(label); }
  bool use_link_classes(const LinkClasses* classes) override {
    classes_ = classes;
    return true;
  }
  bool restart() override {
    for (LinkState& l : links_) {
      l.active = 0;
      l.share_slot = -1;
    }
    usage_ = LinkUsage(links_.size());
    ends_.clear();
    shares_.clear();
    touched_.clear();
    events_.clear();
    actions_ = ActionSlots{};
    groups_.clear();
    free_groups_.clear();
    hops_per_transfer_ = 4;
    next_seq_ = 0;
    now_s_ = 0.0;
    classes_ = nullptr;
    return true;
  }

 private:
  // The heap holds times and slots only (cheap to move). Two kinds of event: a scheduled action
  // (group == k_action; the actions wait in actions_, ActionSlots), and a group's own events, typed
  // (no closure to allocate): the end of its batch `slot` of transfers, or (slot == k_release) its
  // release. Both kinds take their seq from one counter: equal times run in scheduling order.
  static constexpr std::uint32_t k_action = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::uint32_t k_release = std::numeric_limits<std::uint32_t>::max();
  struct Event {
    double time_s;
    std::uint64_t seq;  // equal times run in scheduling order: deterministic
    std::uint32_t slot;
    std::uint32_t group;
    bool operator>(const Event& o) const { return time_s != o.time_s ? time_s > o.time_s : seq > o.seq; }
  };
  void push_event(double time_s, std::uint32_t slot, std::uint32_t group) {
    events_.push_back(Event{std::max(time_s, now_s_), next_seq_++, slot, group});
    std::push_heap(events_.begin(), events_.end(), std::greater<>{});
  }

  // The routes of one group of transfers, read by its end events; kept in groups_ and reused (its
  // vectors keep their capacity) once released.
  struct Group {
    std::vector<int> links;                // every transfer's route, one after the other
    std::vector<std::size_t> route_begin;  // transfer i's route: links[route_begin[i], route_begin[i + 1])
    std::vector<std::size_t> ending;       // transfers by end time (then index)
    std::vector<std::size_t> batch_begin;  // end batch b: ending[batch_begin[b], batch_begin[b + 1])
    std::function<void()> done;            // run at the release
    std::span<const int> route(std::size_t i) const {
      return std::span<const int>(links).subspan(route_begin[i], route_begin[i + 1] - route_begin[i]);
    }
  };
  std::uint32_t take_group() {
    if (free_groups_.empty()) {
      groups_.emplace_back();
      return static_cast<std::uint32_t>(groups_.size() - 1);
    }
    const std::uint32_t g = free_groups_.back();
    free_groups_.pop_back();
    return g;
  }
  void give_back_group(std::uint32_t g) {
    Group& group = groups_[g];
    group.links.clear();
    group.route_begin.clear();
    group.ending.clear();
    group.batch_begin.clear();
    free_groups_.push_back(g);
  }

  const Cluster& cluster_;
  const LinkClasses* classes_ = nullptr;  // use_link_classes: the representatives' class routes
  // Per link, side by side (one cache miss per link of a route on a large fabric): its effective
  // bandwidth, the transfers of the groups in flight on it (a group releases its links when it ends),
  // and the index of the group being started's LinkShare there (-1 when unused).
  struct LinkState {
    double bandwidth_Bps;
    int active;
    int share_slot;
  };
  std::vector<LinkState> links_;
  LinkUsage usage_;
  std::vector<KeyedItem> ends_;  // (end time's bits, transfer) of the group being started
  // The transfers of the group being started on each link it uses: count, bytes, smallest, largest;
  // LinkState::share_slot indexes shares_.
  struct LinkShare {
    int count = 0;
    double bytes = 0.0, smallest = 0.0, largest = 0.0;
  };
  std::vector<LinkShare> shares_;
  std::vector<int> touched_;
  std::vector<Event> events_;  // a min-heap on (time, seq)
  ActionSlots actions_;
  std::vector<Group> groups_;               // the groups in flight, and released ones to reuse
  std::vector<std::uint32_t> free_groups_;  // released groups_
  std::size_t hops_per_transfer_ = 4;       // the last group's route length per transfer, rounded up
  std::uint64_t next_seq_ = 0;
  double now_s_ = 0.0;
};

}  // namespace

std::unique_ptr<NetworkBackend> make_analytical_backend(const Cluster& cluster, const NetworkProfile& profile) {
  return std::make_unique<AnalyticalBackend>(cluster, profile);
}

}  // namespace clustersim
