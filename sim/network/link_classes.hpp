#pragma once
// Classes of links and transfers that behave alike (sim/replay/traffic_classes.hpp): when the replay
// hands a backend one representative transfer per class of identical transfers, the representative
// carries its route as class routes: each class of links it crosses once, as that class's canonical
// link (its smallest) repeated as many times as transfers of the representative's class cross each
// link of the class. Counts on the canonical link are then every link's of the class.
#include <span>
#include <vector>

namespace clustersim {

struct LinkClasses {
  std::vector<int> canonical;  // per cluster link: its class's canonical link (-1: no class route takes it)
  // Class routes (Transfer::route_class): route k is links[route_begin[k], route_begin[k + 1]).
  std::vector<std::size_t> route_begin{0};
  std::vector<int> links;
  std::span<const int> route(std::size_t k) const {
    return std::span<const int>(links).subspan(route_begin[k], route_begin[k + 1] - route_begin[k]);
  }
};

}  // namespace clustersim
