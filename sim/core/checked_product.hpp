#pragma once
// Products of spec values computed without overflow: a product of user-typed integers (tp * pp * cp,
// pp * virtual_stages, micro_batch * dp) either fits in 64 bits or is reported, never wrapped (a
// wrapped tp * pp * cp of 2^30 * 2^30 * 16 was 0 and a division by it raised SIGFPE).
#include <cstdint>
#include <initializer_list>
#include <optional>

namespace clustersim {

// The product of `factors`, or nullopt when it does not fit in a std::int64_t.
inline std::optional<std::int64_t> checked_product(std::initializer_list<std::int64_t> factors) {
  std::int64_t product = 1;
  for (const std::int64_t f : factors)
    if (__builtin_mul_overflow(product, f, &product)) return std::nullopt;
  return product;
}

}  // namespace clustersim
