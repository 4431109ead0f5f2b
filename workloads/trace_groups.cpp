#include "workloads/trace_groups.hpp"

#include <algorithm>
#include <limits>

#include "sim/core/error.hpp"

namespace clustersim {

std::uint16_t TraceGroups::communicator(const std::string& label, const std::vector<int>& ranks) {
  std::vector<int> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  int copies = 0;
  for (std::size_t c = 0; c < entries_.size(); ++c) {
    Entry& e = entries_[c];
    if (e.label != label) continue;
    ++copies;
    for (const auto& g : e.comm.groups) {
      std::vector<int> gs = g;
      std::sort(gs.begin(), gs.end());
      if (gs == sorted) return static_cast<std::uint16_t>(c);
    }
    const bool disjoint =
        std::none_of(ranks.begin(), ranks.end(), [&](int r) { return e.position[static_cast<std::size_t>(r)] != -1; });
    if (disjoint) {
      for (std::size_t i = 0; i < ranks.size(); ++i) {
        e.position[static_cast<std::size_t>(ranks[i])] = static_cast<int>(i);
        e.group[static_cast<std::size_t>(ranks[i])] = static_cast<int>(e.comm.groups.size());
      }
      e.comm.groups.push_back(ranks);
      return static_cast<std::uint16_t>(c);
    }
  }
  if (entries_.size() > std::numeric_limits<std::uint16_t>::max())
    throw SimulationError("the trace uses more than 65536 process groups");
  Entry e;
  e.label = label;
  e.comm.name = copies == 0 ? label : label + "#" + std::to_string(copies + 1);
  e.comm.groups.push_back(ranks);
  e.position.assign(static_cast<std::size_t>(world_size_), -1);
  e.group.assign(static_cast<std::size_t>(world_size_), -1);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    e.position[static_cast<std::size_t>(ranks[i])] = static_cast<int>(i);
    e.group[static_cast<std::size_t>(ranks[i])] = 0;
  }
  entries_.push_back(std::move(e));
  return static_cast<std::uint16_t>(entries_.size() - 1);
}

int TraceGroups::position(std::uint16_t c, int rank) const {
  return entries_.at(c).position.at(static_cast<std::size_t>(rank));
}

int TraceGroups::group_size(std::uint16_t c, int rank) const {
  return static_cast<int>(group(c, rank).size());
}

std::span<const int> TraceGroups::group(std::uint16_t c, int rank) const {
  const Entry& e = entries_.at(c);
  const int g = e.group.at(static_cast<std::size_t>(rank));
  if (g < 0) return {};
  return e.comm.groups[static_cast<std::size_t>(g)];
}

void TraceGroups::add_to(ExecutionGraph& graph) const {
  for (const auto& e : entries_)
    graph.add_communicator(e.comm);
}

}  // namespace clustersim
