#pragma once
// The process groups met in an imported trace, gathered into ExecutionGraph communicators.
// Internal to the trace readers.
//
// Each process group is one NCCL communicator in the traced run. Groups with the same label (a
// PyTorch process group description such as "default_pg", a Chakra pg_name) that share no rank
// become groups of one communicator, so that e.g. every tensor-parallel group is a group of one "tp"
// communicator; a group that overlaps one already under its label gets its own communicator,
// "<label>#2", "<label>#3", ...
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "workloads/execution_graph.hpp"

namespace clustersim {

class TraceGroups {
 public:
  explicit TraceGroups(int world_size) : world_size_(world_size) {}

  // The communicator index of the process group `ranks` (global ranks in ring order, distinct, in
  // range) labelled `label`. The same (label, rank set) always gives the same communicator.
  std::uint16_t communicator(const std::string& label, const std::vector<int>& ranks);
  // The position of `rank` in its group of communicator `c`, and the group's size; -1 and 0 when the
  // rank is in no group of it.
  int position(std::uint16_t c, int rank) const;
  int group_size(std::uint16_t c, int rank) const;
  // The group of `rank` in communicator `c` (global ranks in ring order); empty when it is in none.
  std::span<const int> group(std::uint16_t c, int rank) const;
  // The communicator's name ("dp", "pg 3", "default_pg#2").
  const std::string& name(std::uint16_t c) const { return entries_.at(c).comm.name; }

  // Adds the communicators to `graph`, in index order (call once, before any op refers to them).
  void add_to(ExecutionGraph& graph) const;

 private:
  struct Entry {
    Communicator comm;
    std::string label;
    std::vector<int> position;  // per global rank, -1: in no group
    std::vector<int> group;     // per global rank, the index of its group, -1: in no group
  };
  int world_size_;
  std::vector<Entry> entries_;
};

}  // namespace clustersim
