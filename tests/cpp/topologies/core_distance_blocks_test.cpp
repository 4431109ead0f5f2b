// CoreDistanceBlocks: a key's view returns exactly the array it stored, and equal values of one block
// are stored once, so keys that differ only in their own pod take their own pod's values and nothing
// else.
#include "topologies/core_distance_blocks.hpp"

#include <array>

#include <gtest/gtest.h>

namespace clustersim {
namespace {

// A 3-tier fat-tree in miniature: 2 pods of 2 leaves (blocks 0 and 1) and 2 aggregation switches
// (blocks 2 and 3), 2 cores (block 4). Core order interleaves the blocks, as device order may.
constexpr std::array<std::uint32_t, 10> k_blocks = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4};

// Distances toward leaf `leaf` (0..3, pod leaf / 2): itself 0, the other leaf of its pod 2, its pod's
// aggregation switches 1, the cores 2, the other pod's aggregation switches 3 and leaves 4.
std::array<std::uint16_t, 10> toward_leaf(int leaf) {
  std::array<std::uint16_t, 10> d{};
  const int pod = leaf / 2;
  for (int l = 0; l < 4; ++l)
    d[static_cast<std::size_t>(l)] = l == leaf ? 0 : (l / 2 == pod ? 2 : 4);
  for (int a = 0; a < 4; ++a)
    d[static_cast<std::size_t>(4 + a)] = a / 2 == pod ? 1 : 3;
  d[8] = d[9] = 2;
  return d;
}

TEST(CoreDistanceBlocks, AViewReturnsTheStoredArray) {
  CoreDistanceBlocks store;
  store.build(k_blocks, 4);
  EXPECT_EQ(store.block_count(), 5u);
  for (std::uint32_t key = 0; key < 4; ++key) {
    EXPECT_FALSE(store.has(key));
    store.store(key, toward_leaf(static_cast<int>(key)));
  }
  for (std::uint32_t key = 0; key < 4; ++key) {
    ASSERT_TRUE(store.has(key));
    const auto expected = toward_leaf(static_cast<int>(key));
    const CoreDistanceBlocks::View view = store.view(key);
    for (int c = 0; c < 10; ++c)
      EXPECT_EQ(view[c], expected[static_cast<std::size_t>(c)]) << "key " << key << " core " << c;
  }
}

TEST(CoreDistanceBlocks, EqualBlocksAreStoredOnce) {
  CoreDistanceBlocks store;
  store.build(k_blocks, 4);
  for (std::uint32_t key = 0; key < 4; ++key)
    store.store(key, toward_leaf(static_cast<int>(key)));
  // Distinct values per block: pod 0's leaves {0,2} {2,0} {4,4}; pod 1's leaves likewise (3); pod 0's
  // and pod 1's aggregation switches {1,1} {3,3} (2 each); the cores {2,2} (1): 11 entries of 2 values,
  // 44 bytes, where 4 full arrays take 80. Plus 4 rows of 5 pointers.
  EXPECT_EQ(store.bytes(), 11 * 2 * sizeof(std::uint16_t) + 4 * 5 * sizeof(const std::uint16_t*));
  // Keys of one pod share their aggregation block and the cores; keys of two pods share only the cores.
  EXPECT_EQ(store.view(0).block(2), store.view(1).block(2));
  EXPECT_NE(store.view(0).block(0), store.view(1).block(0));
  EXPECT_NE(store.view(0).block(2), store.view(2).block(2));
  EXPECT_EQ(store.view(0).block(3), store.view(1).block(3));
  EXPECT_EQ(store.view(0).block(4), store.view(3).block(4));
  // bound_bytes: a full array and a row of pointers per key.
  EXPECT_EQ(store.bound_bytes(2), 2 * (10 * sizeof(std::uint16_t) + 5 * sizeof(const std::uint16_t*)));
}

TEST(CoreDistanceBlocks, ClearForgetsEveryKey) {
  CoreDistanceBlocks store;
  store.build(k_blocks, 2);
  store.store(0, toward_leaf(0));
  store.clear();
  EXPECT_FALSE(store.has(0));
  EXPECT_EQ(store.bytes(), 0u);
  store.store(1, toward_leaf(3));
  EXPECT_EQ(store.view(1)[3], 0);
  EXPECT_EQ(store.view(1)[0], 4);
  EXPECT_THROW(store.store(0, std::array<std::uint16_t, 3>{}), std::logic_error);
}

// A cluster without core devices (one node, no fabric) stores empty arrays: a key stored once stays
// stored (its distances are not recomputed per route).
TEST(CoreDistanceBlocks, AKeyWithoutCoreDevicesIsStored) {
  CoreDistanceBlocks store;
  store.build({}, 3);
  EXPECT_EQ(store.block_count(), 0u);
  EXPECT_FALSE(store.has(1));
  store.store(1, {});
  EXPECT_TRUE(store.has(1));
  EXPECT_FALSE(store.has(0));
}

}  // namespace
}  // namespace clustersim
