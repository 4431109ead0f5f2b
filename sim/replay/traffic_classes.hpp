#pragma once
// Classes of identical transfers: one simulated transfer per class (issue 21).
//
// A data-parallel step repeats one replica's traffic on every replica: the transfers of a batch (the
// transfers one start_transfers call starts together: a collective's phase on one group, a
// point-to-point channel's message) fall into classes whose members take equal times, and the links
// into classes whose members carry equal loads. The coarsest such partition is computed by colour
// refinement (1-dimensional Weisfeiler-Leman) on the graph of transfers and the links of their routes:
// transfers start coloured by (batch, bytes, pipelined), links by (bandwidth, latency, technology);
// then, until no class splits, a transfer's colour becomes its colour and the multiset of its links'
// colours, and a link's its colour and the multiset of the colours of the transfers crossing it.
// The result is an equitable partition: every link of a class is crossed by the same number c(T, L)
// of transfers of each transfer class T, and every transfer of a class crosses the same multiset of
// link classes. On the analytical backend (a transfer's rate is the least bandwidth / transfers in
// flight over its links, fixed at its start) the transfers of a class then start together, take
// equal rates and end together, and the links of a class carry equal loads at every moment, whatever
// the other batches in flight: each batch's transfers load every link of a class equally. One
// representative per class, whose class route counts c(T, L) transfers on one link per class it
// crosses (sim/network/link_classes.hpp), gives the same times and the same per-link traffic as the
// exhaustive replay; the replay copies each canonical link's traffic to the other links of its class.
//
// What is checked: the routes are computed once, so they must not depend on anything that changes
// between starts: the load (adaptive routing: not used, the replay asks for static d_mod_k routing)
// and the flow id (ECMP hashing, hashed picks inside a node): each route is computed for two flow
// ids, and a batch whose routes differ is refused (add_batch: false).
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "sim/network/link_classes.hpp"
#include "sim/network/network_backend.hpp"

namespace clustersim {

class Cluster;

class TrafficClasses {
 public:
  explicit TrafficClasses(const Cluster& cluster);

  // A batch of transfers, every one (bytes may be any common positive scale of the real ones).
  // False when a route depends on the flow id.
  bool add_batch(std::span<const Transfer> transfers);
  // The coarsest equitable partition of the batches' transfers and their routes' links.
  void refine();
  // After refine(): batch b's representatives, one per class, as (index in the batch, class route),
  // in index order.
  std::vector<std::pair<std::size_t, int>> representatives(std::size_t batch) const;
  LinkClasses& link_classes() { return classes_; }
  std::size_t transfers() const { return transfer_batch_.size(); }
  std::size_t transfer_classes() const { return classes_.route_begin.size() - 1; }
  std::size_t link_class_count() const { return link_class_count_; }

 private:
  const Cluster& cluster_;
  std::vector<std::size_t> batch_begin_{0};  // batch b's transfers: [batch_begin_[b], batch_begin_[b + 1])
  std::vector<std::uint32_t> transfer_batch_;
  std::vector<double> transfer_bytes_;
  std::vector<char> transfer_pipelined_;
  std::vector<std::size_t> route_begin_{0};  // transfer i's route: route_links_[route_begin_[i], ...)
  std::vector<int> route_links_;
  std::vector<int> route_, check_route_;
  std::vector<int> class_route_of_;  // per transfer: its class route if it represents its class, else -1
  std::size_t link_class_count_ = 0;
  LinkClasses classes_;
};

}  // namespace clustersim
