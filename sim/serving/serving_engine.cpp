#include "sim/serving/serving_engine.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <utility>

#include "sim/core/error.hpp"
#include "sim/serving/serving_router.hpp"
#include "sim/serving/serving_traffic.hpp"

namespace clustersim {
namespace {

// The cluster totals the time averages integrate, kept up to date as replicas change.
struct Totals {
  std::int64_t in_system = 0;
  std::int64_t running = 0;
  std::int64_t queued = 0;
  std::int64_t kv_blocks_used = 0;
  std::int64_t preemptions = 0;  // so far
};

struct Integrals {
  double in_system = 0.0;
  double running = 0.0;
  double queued = 0.0;
  double kv_blocks_used = 0.0;
  std::int64_t peak_kv_blocks_used = 0;
};

class Engine {
 public:
  Engine(const ServingSpec& spec, const IterationModel& model, std::span<const RequestArrival> arrivals,
         const ServingRunOptions& options)
      : spec_(spec),
        model_(model),
        options_(options),
        scheduler_(
            make_serving_scheduler(spec.scheduler, {spec.max_batch_tokens, spec.max_batch_requests, spec.block_size})),
        router_(find_serving_router(spec.router)),
        replicas_(static_cast<std::size_t>(spec.replicas)),
        outstanding_(static_cast<std::size_t>(spec.replicas), 0) {
    blocks_per_replica_ = model.memory().kv_capacity_tokens / spec.block_size;
    for (ReplicaState& r : replicas_)
      r.total_blocks = r.free_blocks = blocks_per_replica_;
    result_.requests.resize(arrivals.size());
    for (std::size_t i = 0; i < arrivals.size(); ++i) {
      ServedRequest& r = result_.requests[i];
      r.arrival_s = arrivals[i].arrival_s;
      r.prompt_tokens = arrivals[i].prompt_tokens;
      r.output_tokens = arrivals[i].output_tokens;
    }
  }

  ServingResult run() {
    std::vector<ServedRequest>& requests = result_.requests;
    constexpr double kNever = std::numeric_limits<double>::infinity();
    std::size_t next = 0;
    while (next < requests.size() || !ends_.empty()) {
      const double arrival = next < requests.size() ? requests[next].arrival_s : kNever;
      const double end = ends_.empty() ? kNever : ends_.top().first;
      if (end == kNever && arrival == kNever)  // a closed loop sends as requests leave: one always runs
        throw SimulationError("the closed loop has " + std::to_string(requests.size() - next) +
                              " requests pending and none in flight");
      if (end <= arrival) {
        const std::size_t k = ends_.top().second;
        ends_.pop();
        advance(end);
        complete(k, end);
        start(k, end);
        refresh(k);
      } else {
        advance(arrival);
        arrive(static_cast<std::uint32_t>(next++), arrival);
      }
    }
    return finish();
  }

 private:
  using End = std::pair<double, std::size_t>;

  // Integrates the totals up to `t` and takes the samples due by then.
  void advance(double t) {
    const double dt = t - now_;
    integrals_.in_system += static_cast<double>(totals_.in_system) * dt;
    integrals_.running += static_cast<double>(totals_.running) * dt;
    integrals_.queued += static_cast<double>(totals_.queued) * dt;
    integrals_.kv_blocks_used += static_cast<double>(totals_.kv_blocks_used) * dt;
    while (next_sample_s_ <= t && options_.sample_interval_s > 0.0) {
      if (result_.samples.size() == ServingRunOptions::kMaxSamples) {
        result_.samples_truncated = true;
        break;
      }
      result_.samples.push_back(
          {next_sample_s_, totals_.running, totals_.queued, totals_.kv_blocks_used, totals_.preemptions});
      next_sample_s_ = static_cast<double>(result_.samples.size()) * options_.sample_interval_s;
    }
    now_ = t;
  }

  // The replica's share of the totals, recounted after it changed.
  void refresh(std::size_t k) {
    const ReplicaState& r = replicas_[k];
    Share& s = shares_[k];
    const Share now{static_cast<std::int64_t>(r.running.size()), static_cast<std::int64_t>(r.waiting.size()),
                    r.total_blocks - r.free_blocks};
    totals_.running += now.running - s.running;
    totals_.queued += now.queued - s.queued;
    totals_.kv_blocks_used += now.kv_blocks_used - s.kv_blocks_used;
    integrals_.peak_kv_blocks_used = std::max(integrals_.peak_kv_blocks_used, totals_.kv_blocks_used);
    s = now;
  }

  void arrive(std::uint32_t id, double t) {
    ServedRequest& r = result_.requests[id];
    const std::int64_t total = std::int64_t{r.prompt_tokens} + r.output_tokens;
    if (total > spec_.context_limit_tokens()) {
      r.status = RequestStatus::rejected_context;
      send_next(t);
      return;
    }
    if (r.prompt_tokens > scheduler_->max_prompt_tokens()) {
      r.status = RequestStatus::rejected_batch_tokens;
      send_next(t);
      return;
    }
    if (kv_blocks_for(total - 1, spec_.block_size) > blocks_per_replica_) {
      r.status = RequestStatus::rejected_kv_cache;
      send_next(t);
      return;
    }
    const std::size_t k = router_.pick(outstanding_, accepted_++);
    r.replica = static_cast<std::int32_t>(k);
    ++outstanding_[k];
    ++totals_.in_system;
    replicas_[k].waiting.push_back(id);
    if (replicas_[k].plan.empty()) start(k, t);
    refresh(k);
  }

  // A closed loop sends its next pending request when one leaves (finished or rejected) at `t`.
  void send_next(double t) {
    if (!spec_.traffic.closed_loop()) return;
    std::vector<ServedRequest>& requests = result_.requests;
    while (next_pending_ < requests.size() && requests[next_pending_].arrival_s != kClosedLoopPending_s)
      ++next_pending_;
    if (next_pending_ < requests.size()) requests[next_pending_++].arrival_s = t;
  }

  void start(std::size_t k, double t) {
    ReplicaState& rep = replicas_[k];
    const std::int64_t preempted = rep.preemptions;
    scheduler_->schedule(rep, result_.requests);
    totals_.preemptions += rep.preemptions - preempted;
    if (rep.plan.empty()) {
      // Every policy runs something while requests wait (each fits an empty replica: checked on
      // arrival), so an idle replica with requests would leave them unserved: never silently.
      if (!rep.running.empty() || !rep.waiting.empty())
        throw SimulationError("the " + spec_.scheduler + " scheduler stalled replica " + std::to_string(k) + " at " +
                              std::to_string(t) + " s with " + std::to_string(rep.waiting.size()) +
                              " requests queued, " + std::to_string(rep.running.size()) + " running and " +
                              std::to_string(rep.free_blocks) + " of " + std::to_string(rep.total_blocks) +
                              " KV blocks free");
      return;
    }
    batch_.clear();
    std::int32_t prefill = 0;
    std::int32_t decode = 0;
    for (const ScheduledEntry& e : rep.plan) {
      const ServedRequest& r = result_.requests[e.request];
      batch_.push_back({e.new_tokens, r.computed});
      (r.known_tokens() - r.computed > 1 ? prefill : decode) += e.new_tokens;
    }
    const IterationTime it = model_.iteration_time(batch_);
    if (!(it.time_s > 0.0) || !std::isfinite(it.time_s))
      throw SimulationError("the iteration model returned a time of " + std::to_string(it.time_s) +
                            " s for an iteration of " + std::to_string(batch_.size()) + " requests");
    busy_s_ += it.time_s - it.host_s;
    ++iterations_;
    if (std::ssize(result_.iterations) < options_.iteration_records)
      result_.iterations.push_back({static_cast<std::int32_t>(k), t, it.time_s,
                                    static_cast<std::int32_t>(rep.plan.size()), prefill, decode,
                                    rep.total_blocks - rep.free_blocks});
    ends_.push({t + it.time_s, k});
  }

  void complete(std::size_t k, double t) {
    ReplicaState& rep = replicas_[k];
    std::vector<ServedRequest>& requests = result_.requests;
    bool any_finished = false;
    for (const ScheduledEntry& e : rep.plan) {
      ServedRequest& r = requests[e.request];
      r.computed += e.new_tokens;
      if (r.computed < r.known_tokens()) continue;
      ++r.generated;
      if (r.generated == 1) {
        r.first_token_s = t;
      } else {
        const double gap = t - r.last_token_s;
        r.tbt_sum_s += gap;
        r.tbt_max_s = std::max(r.tbt_max_s, gap);
        gaps_.add(gap);
      }
      r.last_token_s = t;
      if (r.generated == r.output_tokens) {
        r.status = RequestStatus::finished;
        r.finish_s = t;
        release_kv_blocks(rep, r);
        --outstanding_[k];
        --totals_.in_system;
        any_finished = true;
        send_next(t);
      }
    }
    rep.plan.clear();
    if (any_finished)
      std::erase_if(rep.running, [&](std::uint32_t id) { return requests[id].status == RequestStatus::finished; });
  }

  ServingResult finish() {
    ServingSummary s = summarize_requests(result_.requests, spec_.slo, gaps_);
    s.iterations = iterations_;
    for (const ReplicaState& r : replicas_)
      s.preemptions += r.preemptions;
    s.kv_blocks_per_replica = blocks_per_replica_;
    s.kv_capacity_tokens_per_replica = model_.memory().kv_capacity_tokens;
    const double T = s.makespan_s;
    if (T > 0.0) {
      // The totals are integrated to the last event, which is the last finish.
      s.mean_requests_in_system = integrals_.in_system / T;
      s.mean_running = integrals_.running / T;
      s.mean_queued = integrals_.queued / T;
      const double blocks = static_cast<double>(blocks_per_replica_) * spec_.replicas;
      if (blocks > 0) {
        s.mean_kv_occupancy = integrals_.kv_blocks_used / T / blocks;
        s.peak_kv_occupancy = static_cast<double>(integrals_.peak_kv_blocks_used) / blocks;
      }
      s.gpu_busy_fraction = busy_s_ / (T * spec_.replicas);
    }
    result_.summary = s;
    return std::move(result_);
  }

  struct Share {
    std::int64_t running = 0;
    std::int64_t queued = 0;
    std::int64_t kv_blocks_used = 0;
  };

  const ServingSpec& spec_;
  const IterationModel& model_;
  ServingRunOptions options_;
  std::unique_ptr<ServingScheduler> scheduler_;
  const ServingRouter& router_;
  std::vector<ReplicaState> replicas_;
  std::vector<Share> shares_ = std::vector<Share>(replicas_.size());
  std::vector<std::int64_t> outstanding_;
  std::int64_t blocks_per_replica_ = 0;
  std::uint64_t accepted_ = 0;
  std::size_t next_pending_ = 0;  // closed loop: no request before it is pending
  std::priority_queue<End, std::vector<End>, std::greater<>> ends_;
  std::vector<IterationEntry> batch_;
  TokenGapHistogram gaps_;
  Totals totals_;
  Integrals integrals_;
  double now_ = 0.0;
  double next_sample_s_ = 0.0;
  double busy_s_ = 0.0;
  std::int64_t iterations_ = 0;
  ServingResult result_;
};

}  // namespace

ServingResult run_serving(const ServingSpec& spec, const IterationModel& model,
                          std::span<const RequestArrival> arrivals, const ServingRunOptions& options) {
  return Engine(spec, model, arrivals, options).run();
}

}  // namespace clustersim
