// Time intervals [start, end): their union, its length, and the length two of them share. The replay's
// breakdown (compute vs exposed communication) and calibrate --from-trace's overlap use them.
#pragma once

#include <utility>
#include <vector>

namespace clustersim {

using Interval = std::pair<double, double>;  // [start, end), end >= start

// The union of `intervals` as a sorted list of disjoint intervals (touching ones joined).
std::vector<Interval> merge_intervals(std::vector<Interval> intervals);

// The total length of a sorted, disjoint list.
double total_length(const std::vector<Interval>& merged);

// The length of the intersection of two sorted, disjoint lists.
double overlap_length(const std::vector<Interval>& a, const std::vector<Interval>& b);

// The length of the intersection of [lo, hi) with a sorted, disjoint list (binary search).
double overlap_with(double lo, double hi, const std::vector<Interval>& merged);

}  // namespace clustersim
