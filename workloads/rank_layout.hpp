#pragma once
// Where each rank sits in the parallel layout: its tensor-, context-, expert-, data- and
// pipeline-parallel coordinates, and the process groups of each kind.
//
// Ranks are numbered as a mixed-radix number whose digits are the coordinates, innermost first in
// the order of ParallelismSpec::order (Megatron-LM's default "tp-cp-ep-dp-pp": the tp peers of a
// rank are its neighbours, so they share a node). Expert parallelism is carved out of data
// parallelism: the data-parallel coordinate d splits into ep = d mod EP (inner) and edp = d / EP.
//
// The expert layers lay the same ranks out again (Megatron-Core's expert_decoder_rank_generator,
// NVIDIA/Megatron-LM megatron/core/parallel_state.py at commit 00caa53: RankGenerator(tp=etp, ep=ep,
// dp=edp, pp=pp, cp=1, order)): sizes etp, 1, ep, edp = tp cp dp / (ep etp), pp in the same order, so
// that the pipeline groups agree when the order ends with pp (expert_rank_layout).
#include <array>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "workloads/workload_spec.hpp"

namespace clustersim {

enum class ParallelDim { tp, cp, ep, edp, pp };  // dp = {ep, edp}

// The expert layers' layout of `p` (resolved, etp x ep dividing tp x cp x dp): tp is etp, cp 1, dp the
// expert data parallelism times ep; its groups of ParallelDim::tp are the expert tensor-parallel groups,
// of ep the expert-parallel ones, of edp the expert data-parallel ones.
class RankLayout;
RankLayout expert_rank_layout(const ParallelismSpec& p);
// The attention (dense) layers' layout of `p`: ep 1 (the expert split is expert_rank_layout's).
RankLayout dense_rank_layout(const ParallelismSpec& p);

// True when `order` names tp, cp, ep, dp and pp once each, '-'-separated, with ep right before dp.
bool valid_rank_order(std::string_view order);

struct RankCoords {
  int tp = 0, cp = 0, dp = 0, pp = 0;  // dp includes the expert-parallel index (ep = dp mod EP)
};

class RankLayout {
 public:
  explicit RankLayout(const ParallelismSpec& p);  // p resolved (dp > 0), order valid

  int world_size() const { return world_size_; }
  int rank(const RankCoords& c) const;
  RankCoords coords(int rank) const;
  int coordinate(int rank, ParallelDim d) const;

  // The groups of ranks whose coordinates differ only in `varying`, each in ascending rank order
  // (the ring order), groups ordered by their first rank.
  std::vector<std::vector<int>> groups(std::initializer_list<ParallelDim> varying) const;
  // The ranks whose pipeline coordinate is `stage`, ascending.
  std::vector<int> stage_ranks(int stage) const;

 private:
  static constexpr std::size_t kDims = 5;
  std::array<int, kDims> size_{};    // by ParallelDim
  std::array<int, kDims> stride_{};  // by ParallelDim
  int world_size_ = 1;
};

}  // namespace clustersim
