// The token grids of token_grid.hpp.
#include "sim/serving/token_grid.hpp"

#include <algorithm>
#include <bit>

namespace clustersim {
namespace {

constexpr std::int64_t kExactBelow = 128;  // geometric: every count below this is a point
constexpr int kExactOctave = 7;            // log2(kExactBelow)
constexpr int kPointsPerOctaveLog2 = 6;    // 64 points per octave beyond
constexpr std::int64_t kExactUpTo = 128;   // tile intervals: every count up to this is a point
constexpr std::int64_t kInterval = 16;     // the smallest GEMM tile side (kernel_model.cpp)

int octave_of(std::int64_t t) {
  return static_cast<int>(std::bit_width(static_cast<std::uint64_t>(t))) - 1;
}

}  // namespace

TokenGrid::TokenGrid(std::int64_t max_tokens, Spacing spacing)
    : max_tokens_(std::max<std::int64_t>(max_tokens, 1)), spacing_(spacing) {
  if (spacing == Spacing::tile_intervals) {
    for (std::int64_t t = 1; t <= kExactUpTo; ++t) {
      points_.push_back(t);
      if (t >= max_tokens_) return;
    }
    for (std::int64_t start = kExactUpTo; start < max_tokens_; start += kInterval) {
      points_.push_back(start + 1);
      points_.push_back(start + kInterval);
    }
    return;
  }
  for (std::int64_t t = 1;; ++t) {
    if (t >= kExactBelow) {
      const std::int64_t step = std::int64_t{1} << (octave_of(t) - kPointsPerOctaveLog2);
      t = (t / step) * step;
      points_.push_back(t);
      if (t >= max_tokens_) break;
      t += step - 1;
      continue;
    }
    points_.push_back(t);
    if (t >= max_tokens_) break;
  }
}

TokenGrid::Position TokenGrid::locate(std::int64_t tokens) const {
  tokens = std::max<std::int64_t>(tokens, 1);
  if (spacing_ == Spacing::tile_intervals) {
    if (tokens <= kExactUpTo) return {static_cast<std::size_t>(tokens - 1), 0.0};
    const std::int64_t interval = (tokens - 1) / kInterval - kExactUpTo / kInterval;
    const std::int64_t low = kExactUpTo + interval * kInterval + 1;
    return {static_cast<std::size_t>(kExactUpTo + 2 * interval), double(tokens - low) / double(kInterval - 1)};
  }
  if (tokens < kExactBelow) return {static_cast<std::size_t>(tokens - 1), 0.0};
  const int octave = octave_of(tokens);
  const int shift = octave - kPointsPerOctaveLog2;
  const std::int64_t base = std::int64_t{1} << octave;
  const std::int64_t offset = (tokens - base) >> shift;
  const auto index = static_cast<std::size_t>(
      kExactBelow - 1 + (octave - kExactOctave) * (std::int64_t{1} << kPointsPerOctaveLog2) + offset);
  const std::int64_t below = base + (offset << shift);
  return {index, double(tokens - below) / double(std::int64_t{1} << shift)};
}

}  // namespace clustersim
