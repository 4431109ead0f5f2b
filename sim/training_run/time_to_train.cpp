#include "sim/training_run/time_to_train.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "sim/core/error.hpp"
#include "sim/core/quantile.hpp"
#include "sim/core/random_draw.hpp"
#include "sim/training_run/straggler_model.hpp"
#include "sim/training_run/young_daly.hpp"

namespace clustersim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kDayS = 86400.0;
constexpr double kHourS = 3600.0;

using random_draw::exponential;  // portable transforms (sim/core/random_draw)
using random_draw::uniform01;

// The cause of a failure, drawn in proportion to the rates.
std::size_t draw_cause(const std::vector<FailureCause>& causes, double total, std::mt19937_64& g) {
  const double u = uniform01(g) * total;
  double sum = 0.0;
  for (std::size_t i = 0; i < causes.size(); ++i) {
    sum += causes[i].per_s;
    if (u < sum && causes[i].per_s > 0.0) return i;
  }
  for (std::size_t i = causes.size(); i-- > 0;)  // rounding: the last cause with a rate
    if (causes[i].per_s > 0.0) return i;
  return 0;
}

// The time to wait, from `now`, until at most `spares` nodes are under repair (repairs sorted).
double spare_wait_s(std::vector<double>& repairs, double now, int spares) {
  std::erase_if(repairs, [now](double done) { return done <= now; });
  std::sort(repairs.begin(), repairs.end());
  const std::size_t over = repairs.size() > static_cast<std::size_t>(spares) ? repairs.size() - spares : 0;
  return over == 0 ? 0.0 : repairs[over - 1] - now;
}

}  // namespace

RunOutcome simulate_training_run(const TrainingRunInputs& in, std::mt19937_64& rng) {
  RunOutcome out;
  out.interruptions.assign(in.causes.size(), 0);
  const double rate = total_rate_per_s(in.causes);
  const double tau = in.checkpoint_interval_s;
  const double c = in.checkpoint.stall_s;
  std::vector<double> repairs;  // when each node under repair comes back
  double left = in.work_s;      // training still to do since the last checkpoint's start
  double now = 0.0;
  while (left > 0.0) {
    // Segments of tau training, each followed by a checkpoint but the last.
    const double segments = std::isinf(tau) ? 1.0 : std::ceil(left / tau);
    const double finish = left + (segments - 1.0) * c;
    const double t = rate > 0.0 ? exponential(rng, rate) : kInf;
    if (t >= finish) {
      out.useful_s += left;
      out.checkpoint_s += (segments - 1.0) * c;
      now += finish;
      break;
    }
    // Full cycles (segment + checkpoint) completed before the failure, then where it fell.
    const double cycle = tau + c;
    const double done = std::isinf(tau) ? 0.0 : std::min(std::floor(t / cycle), segments - 1.0);
    out.useful_s += done * tau;
    out.checkpoint_s += done * c;
    left -= done * tau;
    const double into = t - done * cycle;  // time into the interrupted segment (and its checkpoint)
    const double segment = std::min(tau, left);
    const double worked = std::min(into, segment);
    const std::size_t cause = draw_cause(in.causes, rate, rng);
    const FailureCause& f = in.causes[cause];
    ++out.interruptions[cause];
    if (f.rate.planned) {  // a checkpoint is taken first: the work is kept
      out.useful_s += worked;
      left -= worked;
      out.checkpoint_s += (into - worked) + c;
      now += t + c;
    } else {
      out.lost_s += worked;
      out.checkpoint_s += into - worked;
      now += t;
    }
    // Restart: detect, get nodes (a spare, or wait for a repair), start, initialise, load. Components
    // fail whatever the job does: a failure during the restart is an interruption too and starts the
    // restart again.
    for (std::size_t failed = cause;;) {
      const FailureCause& g = in.causes[failed];
      for (int k = 0; k < static_cast<int>(std::lround(g.nodes_down)); ++k)
        repairs.push_back(now + in.restart.repair_s);
      const double wait = spare_wait_s(repairs, now, in.restart.spare_nodes);
      const double nodes = g.nodes_down > 0.0 ? std::max(in.restart.reschedule_s, wait) : 0.0;
      const double restart =
          in.restart.detection_s + nodes + in.restart.process_start_s + in.restart.nccl_init_s + in.checkpoint.read_s;
      const double next = restart > 0.0 ? exponential(rng, rate) : kInf;
      if (next >= restart) {
        out.restart_s += restart;
        now += restart;
        break;
      }
      out.restart_s += next;
      now += next;
      failed = draw_cause(in.causes, rate, rng);
      ++out.interruptions[failed];
    }
  }
  out.wall_s = now;  // the run's clock; its four parts were summed separately (conservation, tests)
  return out;
}

std::vector<RunOutcome> simulate_training_runs(const TrainingRunInputs& in, int runs, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<RunOutcome> out;
  out.reserve(static_cast<std::size_t>(runs));
  for (int i = 0; i < runs; ++i)
    out.push_back(simulate_training_run(in, rng));
  return out;
}

TimeToTrainStats time_to_train(const Report& step, const ClusterSpec& cluster, const WorkloadSpec& workload,
                               const TimeToTrainRequest& request) {
  TimeToTrainStats s;
  s.tokens = request.tokens;
  s.runs = request.runs;
  s.seed = request.seed;
  s.step_time_s = step.step_time_s;
  const double tokens_per_step = step.tokens_per_s * step.step_time_s;
  if (!(tokens_per_step > 0.0) || !std::isfinite(tokens_per_step))
    throw SimulationError("time to train: the step's tokens are unknown (" + step.unknown_reason("tokens_per_s") + ")");
  s.steps = std::ceil(request.tokens / tokens_per_step);

  // Stragglers: the synchronous step waits for the slowest GPU.
  s.straggler_inflation = expected_max_slowdown(straggler_cv(cluster.reliability), step.run.gpus);
  s.effective_step_time_s = s.step_time_s * s.straggler_inflation;

  // Failures.
  const ComponentCounts counts = component_counts(step);
  TrainingRunInputs in;
  in.work_s = s.steps * s.effective_step_time_s;
  in.causes = failure_causes(failure_rates(cluster.reliability), counts);
  in.restart = restart_times(cluster.reliability);
  const double rate = total_rate_per_s(in.causes);
  s.mtbf_s = rate > 0.0 ? 1.0 / rate : kInf;

  // Checkpoints: written whenever a failure can happen or an interval is set.
  const Storage storage = storage_of(cluster);
  s.storage_kind = storage.kind;
  s.asynchronous_checkpoints = storage.asynchronous;
  const bool checkpoints = rate > 0.0 || request.checkpoint_interval_s.has_value();
  if (checkpoints) {
    const auto refuse_zero = [&](double value, std::optional<double> given, const char* key) {
      if (value <= 0.0)
        throw SpecError(cluster.source_file, std::string("/storage/") + key,
                        "expected a bandwidth > 0 GB/s: checkpoints are written (the run can fail or sets an "
                        "interval), got " +
                            std::to_string(given.value_or(value)));
    };
    refuse_zero(storage.per_node_GBps, cluster.storage.per_node_GBps, "per_node_GBps");
    if (storage.kind != "local_nvme_async")
      refuse_zero(storage.aggregate_GBps, cluster.storage.aggregate_GBps, "aggregate_GBps");
    if (storage.asynchronous) refuse_zero(storage.snapshot_GBps, cluster.storage.snapshot_GBps, "snapshot_GBps");
  }
  in.checkpoint = checkpoint_cost(checkpoint_bytes(workload), storage, step.run.nodes, step.run.gpus);
  if (!checkpoints) in.checkpoint = CheckpointCost{in.checkpoint.bytes, 0.0, 0.0, 0.0};
  s.checkpoint_bytes = in.checkpoint.bytes;
  s.checkpoint_write_s = in.checkpoint.write_s;
  s.checkpoint_read_s = in.checkpoint.read_s;
  s.checkpoint_stall_s = in.checkpoint.stall_s;
  s.restart_s = in.restart.fixed_s() + in.checkpoint.read_s;
  s.young_daly_interval_s = checkpoints && rate > 0.0 ? young_interval_s(in.checkpoint.stall_s, s.mtbf_s) : kInf;
  s.checkpoint_interval_basis = request.checkpoint_interval_s ? "set" : "young_daly";
  in.checkpoint_interval_s = request.checkpoint_interval_s.value_or(s.young_daly_interval_s);
  // An asynchronous write must finish before the next one starts.
  if (storage.asynchronous && std::isfinite(in.checkpoint_interval_s))
    in.checkpoint_interval_s = std::max(in.checkpoint_interval_s, in.checkpoint.write_s);
  s.checkpoint_interval_s = in.checkpoint_interval_s;

  // The Monte Carlo.
  const std::vector<RunOutcome> runs = simulate_training_runs(in, request.runs, request.seed);
  std::vector<double> wall_days;
  std::vector<double> goodput;
  std::vector<double> per_cause(in.causes.size(), 0.0);
  for (const RunOutcome& r : runs) {
    wall_days.push_back(r.wall_s / kDayS);
    goodput.push_back(r.wall_s > 0.0 ? r.useful_s / r.wall_s : 1.0);
    s.useful_s += r.useful_s;
    s.checkpoint_s += r.checkpoint_s;
    s.lost_s += r.lost_s;
    s.restart_total_s += r.restart_s;
    for (std::size_t i = 0; i < per_cause.size(); ++i)
      per_cause[i] += static_cast<double>(r.interruptions[i]);
  }
  const double n = static_cast<double>(runs.size());
  s.useful_s /= n;
  s.checkpoint_s /= n;
  s.lost_s /= n;
  s.restart_total_s /= n;
  s.days_mean = std::accumulate(wall_days.begin(), wall_days.end(), 0.0) / n;
  s.days_p10 = quantile(wall_days, 0.10);
  s.days_p50 = quantile(wall_days, 0.50);
  s.days_p90 = quantile(wall_days, 0.90);
  s.failure_free_days = in.work_s / kDayS;
  s.goodput = std::accumulate(goodput.begin(), goodput.end(), 0.0) / n;
  const double wall_s = s.days_mean * kDayS;
  for (std::size_t i = 0; i < in.causes.size(); ++i) {
    const FailureCause& f = in.causes[i];
    InterruptionCause c;
    c.cause = f.rate.cause;
    c.component = to_string(f.rate.component);
    c.components = f.components;
    c.per_year = f.rate.per_year;
    c.nodes_down = f.nodes_down;
    c.planned = f.rate.planned;
    // The rates over the mean wall time (failures strike at any time: Wald's identity makes it the
    // Monte Carlo's expected count).
    c.expected = f.per_s * wall_s;
    c.mean_per_run = per_cause[i] / n;
    c.source = f.rate.source;
    (c.planned ? s.planned_interruptions_mean : s.interruptions_mean) += c.mean_per_run;
    if (!c.planned) s.interruptions_expected += c.expected;
    s.causes.push_back(c);
  }
  std::stable_sort(s.causes.begin(), s.causes.end(),
                   [](const InterruptionCause& a, const InterruptionCause& b) { return a.expected > b.expected; });

  // Energy and cost over the mean wall time: the step's facility power throughout (checkpoints and
  // restarts are charged as training: an upper bound), the cost model's hourly rates.
  const double hours = wall_s / kHourS;
  s.energy_mwh = step.power->cluster_avg_kw * hours / 1000.0;
  s.capex_share_usd = step.cost->amortized_usd_per_hour * hours;
  s.energy_usd = step.cost->energy_usd_per_hour * hours;
  s.operations_usd = step.cost->operations_usd_per_hour * hours;
  s.cost_usd = s.capex_share_usd + s.energy_usd + s.operations_usd;
  return s;
}

}  // namespace clustersim
