#pragma once
// Classes of identical transfers: one simulated transfer per class (issue 21).
//
// A data-parallel step repeats one replica's traffic on every replica: the transfers of a batch (the
// transfers one start_transfers call starts together: a collective's phase on one group, a
// point-to-point channel's message) fall into classes whose members take equal times, and the links
// into classes whose members carry equal loads. The analytical backend fixes a transfer's rate at its
// start from, per link of its route, the bandwidth, the transfers in flight (per batch in flight: its
// transfers on the link) and its own batch's share there (count, bytes, smallest, largest). So:
//   1. links are coloured by (bandwidth, latency, technology) and the multiset of (batch, bytes,
//      pipelined) of the transfers crossing them: every link of a colour carries, from every batch,
//      the same transfers' count and bytes, hence the same load at every moment;
//   2. transfers by (batch, bytes, pipelined) and the multiset of their links' colours: the members
//      of a class start together and see equal bandwidths and loads, hence take equal rates and end
//      together (by induction over the events, whatever else is in flight);
//   3. links again, by their colour and the multiset of the transfer classes crossing them: every link
//      of a class is then crossed by the same number c(T, L) of transfers of each class T, so bytes,
//      busy time (the last of them to end) and the counts agree on every link of the class.
// One representative per transfer class, whose class route (sim/network/link_classes.hpp) holds every
// link class L its class crosses as L's canonical link repeated c(T, L) times, gives the backend the
// same counts on the canonical links as the exhaustive replay has on every link, hence the same times
// (its rate, the least over its class route, is the least over its own route: the classes of step 3
// refine those of step 1, and a transfer class crosses the same step-1 colours). The replay copies
// each canonical link's traffic to the other links of its class. Each step is one pass. The passes do
// not reach an equitable partition in general (a transfer class may cross links of different final
// classes), so the argument above is not a proof for every fabric and graph: exactness is what the
// tests and the bench's byte comparisons check (docs/performance.md). Refining until nothing splits
// (an equitable partition: 63 passes at 16,384 GPUs, 58,880 classes) gave the same step to every
// digit at 34 s CPU instead of 0.6: not used.
//
// Max-min sharing (the flow backend, SimGrid) is a fixed point over all flows in flight, not a rate
// fixed at the start, so the argument above does not carry over; another does. The flow backend gives
// each representative one communication on its class route, a canonical link listed c(T, L) times
// charged c(T, L) times its rate. Lift the representatives' max-min rates to every member. Feasible:
// every link of L carries what its canonical link does (step 3: c(T, L) on each link of L). Max-min:
// a representative has a saturated canonical link on which no class is faster; if every member of
// its class crosses some link of that class, the member has a saturated link on which no transfer is
// faster, which characterizes the max-min allocation, and that is unique: the lifted rates are the
// exhaustive system's, at every event (classes start and, by induction, end together). Proven where
// every member crosses every link class of its class route: members_cross_class_routes(), checked by
// refine(), true for the 405B-class step at 1,024 and 4,096 GPUs. Where it is false (the three passes
// do not reach it at 16,384 GPUs and beyond, and further passes split a ring by each member's distance
// to a leaf boundary, one pass per hop) the classes are an approximation whose error is measured
// against the exhaustive flow replay (docs/performance.md: none at 16,384 and 32,768 GPUs).
//
// What is checked: routes are computed once, so they must not depend on what changes between starts.
// The flow id (hashed picks: a route that hashed the flow id at some pick among several links,
// Cluster::route's flow_hashed, is computed for a second id, and a batch whose routes differ is
// refused: add_batch false; a hashed pick among c choices agrees for two ids with chance 1/c per
// transfer, so a batch of many transfers is refused almost surely; a route with no such pick is the
// same walk for every id and is computed once). The partition's integrality
// (c(T, L) whole) is checked when the class routes are built: where it fails, refine() is false and
// the exhaustive replay runs.
//
// Adaptive routing (the InfiniBand default) picks, at each switch, the first least loaded equal-cost
// link from the destination's digit on, the load being the transfers in flight when a transfer starts,
// the earlier transfers of its own batch included (the backend routes a batch transfer by transfer).
// The classes route each launch as the backend would on a fabric carrying nothing else: a launch is the
// batches that start together, one after the other, with nothing ending in between (a collective's
// groups, phase by phase: Replay::run_phase; a channel's message), each transfer routed against the
// launch's earlier ones (add_batch's same_launch). That alone is an approximation (session 16: three
// validation rows 2.4 to 6.3 % slower than the exhaustive replay), made exact by a check at every
// start of a batch (AdaptiveChecks), session 17:
//   Let P(l) be the load the formation routed batch b against on link l (the transfers of its launch's
//   earlier batches: add_batch's load), and A(l) the transfers in flight when the replay starts b.
//   The exhaustive replay routes b's transfer i against A + O_i (O_i: b's earlier transfers), the
//   formation against P + O_i; their difference D = A - P is the same for every transfer of b. At a
//   choice, the formation took p, the first least loaded from the digit under P + O_i; if D(p) <= D(c)
//   for every candidate c, p is also the first least loaded under A + O_i (it gains on none that were
//   behind or equal, loses to none ahead). So if that holds at every choice of b's routes, the
//   exhaustive replay takes b's routes, transfer by transfer (induction over i: O_i agree).
//   D is constant over a link class: A is (the replay has been exact so far, by induction over the
//   starts: every link of a class carries what its canonical link does) and P is (the first pass
//   colours links by the count of each batch's transfers crossing them). So the check is over link
//   classes, not links: per batch, the distinct (classes of the equal-cost links of a choice, class of
//   the link taken), each class with its P (links no route takes: load 0, P 0). Its cost is the
//   batch's distinct choices in class terms, independent of its transfers.
// Where a check fails, the exhaustive replay may route otherwise. A channel's message then gets a
// variant: its batch added again as a launch of its own routed against the load in flight then
// (add_batch's context; its check's P is that load), and each later message of the channel takes the
// first of the batch and its variants whose check holds; the replay starts over with the variants
// formed (replay_engine.cpp: it collects every failing message of one replay first). A variant formed
// under any load is right wherever its check holds, so one taken from a replay past a failure (not
// exact) is at worst unused; its load must only be the same on every link of each class its choices
// meet (checked here: where not, its check never holds). A collective's phase failing its check (its
// groups are one launch: no variant) makes the replay start over with every transfer. Every answer is
// the exhaustive replay's. Measured (docs/performance.md, session 17): the 405B-class step needs 31
// variants at 16,384 GPUs and 46 at 131,072 (its pipeline messages in the 1F1B steady state, where a
// stage's sends forward and backward leave the same leaves at once), no collective fails; a variant
// taking the routes of an earlier one of its message shares that one's classes (add_batch's
// same_transfers: 15 of the 31, 28 of the 46).
#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/network/link_classes.hpp"
#include "sim/network/network_backend.hpp"

namespace clustersim {

class Cluster;

// Per batch, what its adaptive choices need of the load in flight when it starts (above): records of
// [m, the taken link's class (its canonical link, -1: a link no route takes), its P, then m pairs
// (class, P) of the equal-cost links' classes].
struct AdaptiveChecks {
  std::vector<std::size_t> begin{0};  // batch b's records: items[begin[b], begin[b + 1])
  std::vector<int> items;
  // Whether batch b's routes are those the exhaustive replay takes under `load` (transfers in flight
  // per link, the replay's counts on canonical links).
  bool hold(std::size_t batch, std::span<const int> load) const;
};

class TrafficClasses {
 public:
  // `adaptive_checks`: record every adaptive choice of the routes for AdaptiveChecks.
  explicit TrafficClasses(const Cluster& cluster, bool adaptive_checks = false);

  // A batch of transfers, every one (bytes may be any common positive scale of the real ones).
  // `same_launch`: the batch starts right after the previous one, before any of it ends (the groups
  // of one collective call): routed with the previous batches of its launch in flight.
  // `context` (a launch of its own, adaptive routing): the transfers in flight when it starts, as (link,
  // count) for the links with some, in link order (a variant of a batch whose check failed under that
  // load: replay_engine.cpp), routed against them. False when a route depends on the flow id.
  // `same_transfers` (with a context): earlier batches of these very transfers (variants of the same
  // message); where one of them (not itself sharing) took the same routes, the batch shares its
  // transfers and classes (representatives) and adds only its own checks: the classes do not grow.
  bool add_batch(std::span<const Transfer> transfers, bool same_launch = false,
                 std::span<const std::pair<int, int>> context = {}, std::span<const std::uint32_t> same_transfers = {});
  // The classes of the batches' transfers and their routes' links (three passes); false where a
  // transfer class does not cross each link class a whole number of times (then no classes are used).
  bool refine();
  // After refine(): batch b's representatives, one per class, as (index in the batch, class route),
  // in index order.
  std::vector<std::pair<std::size_t, int>> representatives(std::size_t batch) const;
  LinkClasses& link_classes() { return classes_; }
  std::size_t transfers() const { return transfer_batch_.size(); }
  std::size_t transfer_classes() const { return classes_.route_begin.size() - 1; }
  std::size_t link_class_count() const { return link_class_count_; }
  // After refine(): whether every member of each transfer class crosses every link class of its class
  // route (what makes max-min sharing over the classes provably exact, above).
  bool members_cross_class_routes() const { return members_cross_class_routes_; }
  // After refine() with adaptive_checks: each batch's checks (empty records where no choice read the load).
  AdaptiveChecks& adaptive_checks() { return checks_; }

 private:
  const Cluster& cluster_;
  std::vector<std::size_t> batch_begin_{0};  // batch b's transfers: [batch_begin_[b], batch_begin_[b + 1])
  std::vector<std::uint32_t> transfer_batch_;
  std::vector<double> transfer_bytes_;
  std::vector<char> transfer_pipelined_;
  std::vector<std::size_t> route_begin_{0};  // transfer i's route: route_links_[route_begin_[i], ...)
  std::vector<int> route_links_;
  std::vector<int> route_, check_route_;
  std::vector<int> load_;            // per link: the transfers of the batch being added that cross it
  std::vector<int> loaded_;          // the links whose load_ is not 0
  std::vector<int> class_route_of_;  // per transfer: its class route if it represents its class, else -1
  std::size_t link_class_count_ = 0;
  bool members_cross_class_routes_ = false;
  LinkClasses classes_;
  // Adaptive choices (adaptive_checks): the distinct sets of equal-cost links (sites: site s's links are
  // site_links_[site_begin_[s], ...)), found by a hash of their links; per batch, its (site, link taken)
  // pairs (entries_[entry_begin_[b], ...), distinct); the first batch of each batch's launch.
  bool record_choices_ = false;
  std::vector<int> choices_;
  std::vector<std::size_t> site_begin_{0};
  std::vector<int> site_links_;
  std::unordered_map<std::uint64_t, std::uint32_t> site_of_hash_;  // hash -> first site (chained by site_next_)
  std::vector<std::uint32_t> site_next_;
  std::vector<std::pair<std::uint32_t, int>> entries_;
  std::vector<std::size_t> entry_begin_{0};
  std::vector<std::uint32_t> launch_start_;
  std::vector<std::vector<std::pair<int, int>>> contexts_;  // add_batch's contexts
  std::vector<int> context_of_;                             // per batch: its context in contexts_, -1: none
  std::vector<std::uint32_t> shares_of_;  // per batch: the batch whose transfers it shares (add_batch), else itself
  AdaptiveChecks checks_;
};

}  // namespace clustersim
