#pragma once
// Helpers for the trace format tests: every field of two execution graphs compared, files written to
// unique temporary paths, the checked-in example traces located and read.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "workloads/execution_graph.hpp"
#include "workloads/trace_format.hpp"

namespace clustersim::testing {

inline std::vector<OpId> deps_of(const OpTable& ops, OpId i) {
  return {ops.deps(i).begin(), ops.deps(i).end()};
}

inline std::string example_trace(const std::string& relative) {
  return std::string(CLUSTERSIM_SOURCE_DIR) + "/workloads/traces/" + relative;
}

// The checked-in examples, each read once per test process (a file's tests share it, read-only): the
// Chakra 4-rank pipeline- and data-parallel step, and the PyTorch profiler's 2-rank DDP step.
inline const ExecutionGraph& chakra_example() {
  static const ExecutionGraph g = read_chakra_trace(example_trace("chakra/pp2_dp2.{rank}.et"));
  return g;
}

inline const ExecutionGraph& pytorch_example() {
  static const ExecutionGraph g = read_pytorch_trace(example_trace("pytorch"));
  return g;
}

// A fresh directory for one test's files (ctest runs tests in parallel processes).
inline std::string temp_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "clustersim_trace_" + std::to_string(::getpid()) + "_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Writes files[r] as `pattern` with "{rank}" standing for r (the readers' per-rank naming) in a fresh
// directory for the test `name`; returns the directory.
inline std::string write_rank_files(const std::string& name, const std::string& pattern,
                                    const std::vector<std::string>& files) {
  const std::string dir = temp_dir(name);
  const std::size_t rank_at = pattern.find("{rank}");
  for (std::size_t r = 0; r < files.size(); ++r)
    write_file(dir + "/" + pattern.substr(0, rank_at) + std::to_string(r) + pattern.substr(rank_at + 6), files[r]);
  return dir;
}

// Every field of every op, class and communicator.
inline void expect_same_graph(const ExecutionGraph& a, const ExecutionGraph& b) {
  ASSERT_EQ(a.world_size(), b.world_size());
  EXPECT_EQ(a.tokens_per_step(), b.tokens_per_step());
  EXPECT_EQ(a.peak_memory_bytes_per_gpu(), b.peak_memory_bytes_per_gpu());
  ASSERT_EQ(a.communicators().size(), b.communicators().size());
  for (std::size_t c = 0; c < a.communicators().size(); ++c) {
    EXPECT_EQ(a.communicators()[c].name, b.communicators()[c].name);
    EXPECT_EQ(a.communicators()[c].groups, b.communicators()[c].groups);
  }
  ASSERT_EQ(a.classes().size(), b.classes().size());
  for (std::size_t c = 0; c < a.classes().size(); ++c) {
    const RankClass& x = a.classes()[c];
    const RankClass& y = b.classes()[c];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.ranks, y.ranks);
    ASSERT_EQ(x.ops.size(), y.ops.size());
    for (OpId i = 0; i < x.ops.size(); ++i) {
      SCOPED_TRACE("class " + std::to_string(c) + " op " + std::to_string(i));
      EXPECT_EQ(x.ops.kind(i), y.ops.kind(i));
      EXPECT_EQ(x.ops.name(i), y.ops.name(i));
      EXPECT_EQ(x.ops.stream(i), y.ops.stream(i));
      EXPECT_TRUE(std::equal(x.ops.deps(i).begin(), x.ops.deps(i).end(), y.ops.deps(i).begin(), y.ops.deps(i).end()));
      EXPECT_EQ(x.ops.bytes(i), y.ops.bytes(i));
      switch (x.ops.kind(i)) {
        case OpKind::compute:
          EXPECT_EQ(x.ops.kernel(i), y.ops.kernel(i));
          EXPECT_EQ(x.ops.precision(i), y.ops.precision(i));
          EXPECT_EQ(x.ops.flops(i), y.ops.flops(i));
          EXPECT_EQ(x.ops.m(i), y.ops.m(i));
          EXPECT_EQ(x.ops.n(i), y.ops.n(i));
          EXPECT_EQ(x.ops.k(i), y.ops.k(i));
          EXPECT_EQ(x.ops.batch(i), y.ops.batch(i));
          EXPECT_EQ(x.ops.causal(i), y.ops.causal(i));
          EXPECT_EQ(x.ops.backward(i), y.ops.backward(i));
          EXPECT_EQ(x.ops.duration_s(i), y.ops.duration_s(i));
          break;
        case OpKind::collective:
          EXPECT_EQ(x.ops.collective(i), y.ops.collective(i));
          EXPECT_EQ(x.ops.communicator(i), y.ops.communicator(i));
          ASSERT_EQ(x.ops.pair_bytes(i) == nullptr, y.ops.pair_bytes(i) == nullptr);
          if (x.ops.pair_bytes(i) != nullptr) {
            EXPECT_EQ(*x.ops.pair_bytes(i), *y.ops.pair_bytes(i));
          }
          break;
        case OpKind::send:
        case OpKind::recv:
          EXPECT_EQ(x.ops.communicator(i), y.ops.communicator(i));
          EXPECT_EQ(x.ops.peer_offset(i), y.ops.peer_offset(i));
          EXPECT_EQ(x.ops.tag(i), y.ops.tag(i));
          EXPECT_EQ(x.ops.eager(i), y.ops.eager(i));
          break;
      }
    }
  }
}

}  // namespace clustersim::testing
