#include "sim/core/intervals.hpp"

#include <algorithm>

namespace clustersim {

std::vector<Interval> merge_intervals(std::vector<Interval> intervals) {
  // The replay records most classes' intervals in order already: sorting them again was 3 % of a
  // GPT-3 175B simulate (docs/performance.md, session 15). A sorted input is left as it is.
  if (!std::is_sorted(intervals.begin(), intervals.end())) std::sort(intervals.begin(), intervals.end());
  std::vector<Interval> out;
  for (const auto& iv : intervals) {
    if (!out.empty() && iv.first <= out.back().second) {
      out.back().second = std::max(out.back().second, iv.second);
    } else {
      out.push_back(iv);
    }
  }
  return out;
}

double total_length(const std::vector<Interval>& merged) {
  double t = 0.0;
  for (const auto& iv : merged)
    t += iv.second - iv.first;
  return t;
}

double overlap_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  double t = 0.0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double lo = std::max(a[i].first, b[j].first);
    const double hi = std::min(a[i].second, b[j].second);
    if (hi > lo) t += hi - lo;
    if (a[i].second < b[j].second)
      ++i;
    else
      ++j;
  }
  return t;
}

double overlap_with(double lo, double hi, const std::vector<Interval>& merged) {
  auto it =
      std::lower_bound(merged.begin(), merged.end(), lo, [](const Interval& iv, double t) { return iv.second < t; });
  double t = 0.0;
  for (; it != merged.end() && it->first < hi; ++it)
    t += std::max(0.0, std::min(hi, it->second) - std::max(lo, it->first));
  return t;
}

}  // namespace clustersim
