#pragma once
// Token counts at which the iteration model tabulates its batch-size-dependent times, so that a call
// costs a lookup instead of a kernel-model or collective-model evaluation. Two spacings:
//
// tile_intervals (kernel times): every count from 1 to 128, then both ends of every interval
//   (16 j, 16 j + 16]: 16 j + 1 and 16 j + 16. The kernel model's GEMM time is constant in compute
//   inside such an interval (16 rows: the smallest tile, so every tile count and wave count is fixed
//   there: kernel_model.cpp) and linear in its bytes; the memory-bound kernels are linear in their
//   bytes. Linear interpolation between the two ends is then exact but at a compute/memory crossover
//   inside the interval, and the jumps at tile and wave boundaries are kept.
// geometric (collective times, smooth in the bytes): every count from 1 to 127, then 64 counts per
//   octave, from 2^o (o >= 7) in steps of 2^(o - 6): steps of at most 1/64 of the count.
// Both end at the first point at or beyond the largest count.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace clustersim {

class TokenGrid {
 public:
  enum class Spacing : std::uint8_t { tile_intervals, geometric };
  // Where a token count lies: between points `index` and `index + 1`, at `weight` (0..1) from the first.
  struct Position {
    std::size_t index = 0;
    double weight = 0.0;
  };

  TokenGrid(std::int64_t max_tokens, Spacing spacing);

  const std::vector<std::int64_t>& points() const { return points_; }
  std::int64_t max_tokens() const { return max_tokens_; }
  // tokens in 1..max_tokens (not checked: the caller's).
  Position locate(std::int64_t tokens) const;
  // A value tabulated at points() (same size), interpolated at `p`.
  static double at(const std::vector<double>& table, Position p) {
    return p.weight == 0.0 ? table[p.index] : table[p.index] + p.weight * (table[p.index + 1] - table[p.index]);
  }

 private:
  std::int64_t max_tokens_ = 1;
  Spacing spacing_ = Spacing::tile_intervals;
  std::vector<std::int64_t> points_;
};

}  // namespace clustersim
