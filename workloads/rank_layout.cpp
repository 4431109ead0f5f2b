#include "workloads/rank_layout.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "sim/core/error.hpp"

namespace clustersim {
namespace {

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dash = s.find('-', start);
    parts.push_back(s.substr(start, dash == std::string_view::npos ? std::string_view::npos : dash - start));
    if (dash == std::string_view::npos) return parts;
    start = dash + 1;
  }
}

std::size_t index(ParallelDim d) {
  return static_cast<std::size_t>(d);
}

}  // namespace

bool valid_rank_order(std::string_view order) {
  const auto parts = split(order);
  std::vector<std::string_view> sorted = parts;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != std::vector<std::string_view>{"cp", "dp", "ep", "pp", "tp"}) return false;
  const auto ep = std::find(parts.begin(), parts.end(), "ep");
  return ep + 1 != parts.end() && *(ep + 1) == "dp";
}

RankLayout::RankLayout(const ParallelismSpec& p) {
  if (!valid_rank_order(p.order)) throw SimulationError("invalid rank order \"" + p.order + "\"");
  if (p.dp <= 0 || p.dp % p.ep != 0)
    throw SimulationError("rank layout: dp (" + std::to_string(p.dp) + ") must be a positive multiple of ep (" +
                          std::to_string(p.ep) + ")");
  size_[index(ParallelDim::tp)] = p.tp;
  size_[index(ParallelDim::cp)] = p.cp;
  size_[index(ParallelDim::ep)] = p.ep;
  size_[index(ParallelDim::edp)] = p.dp / p.ep;
  size_[index(ParallelDim::pp)] = p.pp;
  const std::map<std::string_view, ParallelDim> names = {{"tp", ParallelDim::tp},
                                                         {"cp", ParallelDim::cp},
                                                         {"ep", ParallelDim::ep},
                                                         {"dp", ParallelDim::edp},
                                                         {"pp", ParallelDim::pp}};
  int stride = 1;
  for (std::string_view part : split(p.order)) {
    const ParallelDim d = names.at(part);
    stride_[index(d)] = stride;
    stride *= size_[index(d)];
  }
  world_size_ = stride;
}

int RankLayout::coordinate(int rank, ParallelDim d) const {
  return rank / stride_[index(d)] % size_[index(d)];
}

RankCoords RankLayout::coords(int rank) const {
  RankCoords c;
  c.tp = coordinate(rank, ParallelDim::tp);
  c.cp = coordinate(rank, ParallelDim::cp);
  c.dp = coordinate(rank, ParallelDim::ep) + size_[index(ParallelDim::ep)] * coordinate(rank, ParallelDim::edp);
  c.pp = coordinate(rank, ParallelDim::pp);
  return c;
}

int RankLayout::rank(const RankCoords& c) const {
  const int ep = size_[index(ParallelDim::ep)];
  return c.tp * stride_[index(ParallelDim::tp)] + c.cp * stride_[index(ParallelDim::cp)] +
         (c.dp % ep) * stride_[index(ParallelDim::ep)] + (c.dp / ep) * stride_[index(ParallelDim::edp)] +
         c.pp * stride_[index(ParallelDim::pp)];
}

std::vector<std::vector<int>> RankLayout::groups(std::initializer_list<ParallelDim> varying) const {
  std::vector<char> vary(kDims, 0);
  for (ParallelDim d : varying)
    vary[index(d)] = 1;
  std::map<int, std::size_t> group_of_key;
  std::vector<std::vector<int>> out;
  for (int r = 0; r < world_size_; ++r) {
    int key = 0;
    for (std::size_t d = 0; d < kDims; ++d) {
      if (!vary[d]) key += coordinate(r, static_cast<ParallelDim>(d)) * stride_[d];
    }
    auto [it, inserted] = group_of_key.try_emplace(key, out.size());
    if (inserted) out.emplace_back();
    out[it->second].push_back(r);
  }
  return out;
}

RankLayout expert_rank_layout(const ParallelismSpec& p) {
  ParallelismSpec e = p;
  e.tp = p.effective_etp();
  e.cp = 1;
  e.dp = p.tp * p.cp * p.dp / e.tp;
  return RankLayout(e);
}

RankLayout dense_rank_layout(const ParallelismSpec& p) {
  ParallelismSpec d = p;
  d.ep = 1;
  return RankLayout(d);
}

std::vector<int> RankLayout::stage_ranks(int stage) const {
  std::vector<int> ranks;
  for (int r = 0; r < world_size_; ++r)
    if (coordinate(r, ParallelDim::pp) == stage) ranks.push_back(r);
  return ranks;
}

}  // namespace clustersim
