#pragma once
// Time, energy and cost to train a number of tokens on a cluster whose components fail
// (docs/time_to_train.md). A Monte Carlo of whole runs, seeded and portable (std::mt19937_64 with
// this file's own transforms): each run walks exponential failures by cause through the training
// segments between checkpoints, loses the work since the last checkpoint, and restarts.
//   per run: wall (the run's clock) = useful + checkpoint + lost + restart (accumulated apart)
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "sim/report/report.hpp"
#include "sim/training_run/checkpoint_model.hpp"
#include "sim/training_run/failure_model.hpp"
#include "topologies/cluster_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

struct TrainingRunInputs {
  double work_s = 0.0;                 // failure-free training time: steps x effective step time
  CheckpointCost checkpoint;           // stall_s per checkpoint, read_s per restart
  double checkpoint_interval_s = 0.0;  // training time between checkpoints; infinity: none
  std::vector<FailureCause> causes;
  RestartTimes restart;
};

// One run's outcome, seconds; interruptions counted per cause (in `causes` order).
struct RunOutcome {
  double wall_s = 0.0;  // the run's clock
  double useful_s = 0.0;
  double checkpoint_s = 0.0;
  double lost_s = 0.0;
  double restart_s = 0.0;
  std::vector<std::int64_t> interruptions;
};

// One run, drawing from `rng` (the same generator state gives the same run).
RunOutcome simulate_training_run(const TrainingRunInputs& in, std::mt19937_64& rng);
// `runs` runs from one generator seeded with `seed`.
std::vector<RunOutcome> simulate_training_runs(const TrainingRunInputs& in, int runs, std::uint64_t seed);

// What the caller asks for (sim/api/simulation_request checks the values).
struct TimeToTrainRequest {
  double tokens = 0.0;
  std::optional<double> checkpoint_interval_s;  // none: Young's interval
  int runs = 1000;
  std::uint64_t seed = 1;
};

// The report's time_to_train section for a simulated step: counts from its cost and power sections,
// checkpoint size from the workload, rates and storage from the cluster spec. Throws SpecError naming
// the cluster spec's JSON path for a checkpoint that cannot be written (zero storage bandwidth).
TimeToTrainStats time_to_train(const Report& step, const ClusterSpec& cluster, const WorkloadSpec& workload,
                               const TimeToTrainRequest& request);

}  // namespace clustersim
