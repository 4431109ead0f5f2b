#pragma once
// One collective over the first `ranks` ranks, timed by the analytical backend: the CollectiveRun of
// the scale-up collective tests (NVL72, the xGMI mesh), which set what else they vary.
#include <string>
#include <utility>

#include "sim_test_support.hpp"

namespace clustersim::testing {

inline CollectiveRun analytical_run(int ranks, double bytes, std::string algorithm,
                                    CollectiveKind kind = CollectiveKind::all_reduce) {
  CollectiveRun run;
  run.groups = {iota_ranks(ranks)};
  run.kind = kind;
  run.bytes = bytes;
  run.algorithm = std::move(algorithm);
  run.fidelity = "analytical";
  return run;
}

}  // namespace clustersim::testing
