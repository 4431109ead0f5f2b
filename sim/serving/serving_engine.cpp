#include "sim/serving/serving_engine.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "sim/core/error.hpp"
#include "sim/serving/serving_router.hpp"
#include "sim/serving/serving_traffic.hpp"
#include "sim/serving/speculative_decoding.hpp"

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
  Engine(const ServingSpec& spec, const ServingModels& models, std::span<const RequestArrival> arrivals,
         const ServingRunOptions& options)
      : spec_(spec),
        model_(models.decode),
        prefill_model_(models.prefill),
        transfer_(models.transfer),
        host_link_Bps_(models.host_link_Bps),
        draft_(models.draft),
        options_(options),
        scheduler_(
            make_serving_scheduler(spec.scheduler, {spec.max_batch_tokens, spec.max_batch_requests, spec.block_size})),
        router_(find_serving_router(spec.router)),
        prefill_replicas_(spec.disaggregated() ? static_cast<std::size_t>(spec.prefill_pool.replicas) : 0),
        replicas_(prefill_replicas_ + static_cast<std::size_t>(spec.replicas)),
        outstanding_(replicas_.size(), 0) {
    if (prefill_replicas_ > 0 && (prefill_model_ == nullptr || transfer_ == nullptr))
      throw std::invalid_argument("disaggregated serving needs a prefill iteration model and a KV transfer");
    blocks_per_replica_ = model_.memory().kv_capacity_tokens / spec.block_size;
    blocks_per_request_ = largest_request_blocks(model_.memory(), spec.block_size);
    if (prefill_replicas_ > 0) {
      prefill_blocks_per_replica_ = prefill_model_->memory().kv_capacity_tokens / spec.block_size;
      prefill_blocks_per_request_ = largest_request_blocks(prefill_model_->memory(), spec.block_size);
    }
    for (std::size_t k = 0; k < replicas_.size(); ++k)
      replicas_[k].total_blocks = replicas_[k].free_blocks =
          k < prefill_replicas_ ? prefill_blocks_per_replica_ : blocks_per_replica_;
    result_.requests.resize(arrivals.size());
    if (spec.traffic.closed_loop() && spec.traffic.think_time_s > 0.0) {
      released_ = static_cast<std::size_t>(std::min<std::int64_t>(spec.traffic.concurrency, std::ssize(arrivals)));
      think_s_.reserve(arrivals.size());
      for (const RequestArrival& a : arrivals)
        think_s_.push_back(a.think_s);
    }
    std::int64_t groups = 0;
    for (std::size_t i = 0; i < arrivals.size(); ++i) {
      ServedRequest& r = result_.requests[i];
      r.arrival_s = arrivals[i].arrival_s;
      r.prompt_tokens = arrivals[i].prompt_tokens;
      r.output_tokens = arrivals[i].output_tokens;
      r.prefix_group = arrivals[i].prefix_group;
      groups = std::max<std::int64_t>(groups, std::int64_t{r.prefix_group} + 1);
    }
    // Prefix caches on the replicas that run prompts (every replica, or the prefill pool).
    shared_blocks_ = static_cast<std::int32_t>(spec.traffic.prefix_tokens / spec.block_size);
    if (spec.prefix_caching && groups > 0 && shared_blocks_ > 0) {
      const std::size_t n = prefill_replicas_ > 0 ? prefill_replicas_ : replicas_.size();
      caches_.reserve(n);
      for (std::size_t k = 0; k < n; ++k) {
        caches_.emplace_back(groups, shared_blocks_, static_cast<std::int32_t>(spec.block_size));
        replicas_[k].prefix_cache = &caches_.back();
      }
    }
    if (spec.speculative.tokens > 0) {
      if (draft_ == nullptr) throw std::invalid_argument("speculative decoding needs a draft iteration model");
      speculative_tokens_per_step_ =
          expected_tokens_per_step(spec.speculative.acceptance_rate, spec.speculative.tokens);
      result_.speculative.expected_tokens_per_step = speculative_tokens_per_step_;
    }
    if (spec.preemption == "swap") {
      // Host swap space per replica in blocks: per GPU, swap_space_GiB over one token's KV on one GPU.
      if (!(host_link_Bps_ > 0.0))
        throw std::invalid_argument("preemption by swap needs the GPUs' host link bandwidth");
      const double per_gpu_token_bytes = model_.memory().kv_bytes_per_token;
      const std::int64_t host_blocks =
          per_gpu_token_bytes > 0.0
              ? static_cast<std::int64_t>(std::floor(spec.swap_space_GiB * 1073741824.0 / per_gpu_token_bytes)) /
                    spec.block_size
              : 0;
      for (std::size_t k = prefill_replicas_; k < replicas_.size(); ++k)
        replicas_[k].host_free_blocks = host_blocks;
      result_.swap.host_blocks_per_replica = host_blocks;
      swap_bytes_per_block_ = static_cast<double>(spec.block_size) * per_gpu_token_bytes;
    }
    if (prefill_replicas_ > 0) {
      // The prefill pool serves each request as one that ends with its first token.
      prefills_ = result_.requests;
      for (ServedRequest& r : prefills_)
        r.output_tokens = 1;
      result_.kv_transfers.bytes_per_token = kv_cache_bytes_per_token(spec.model, spec.kv_dtype, spec.group_size);
      result_.kv_transfers.prefill_kv_blocks_per_replica = prefill_blocks_per_replica_;
    }
  }

  static std::int64_t largest_request_blocks(const ReplicaMemory& m, std::int64_t block_size) {
    return (m.attention_dp_ranks > 1 ? m.kv_capacity_tokens_per_rank : m.kv_capacity_tokens) / block_size;
  }

  ServingResult run() {
    std::vector<ServedRequest>& requests = result_.requests;
    constexpr double kNever = std::numeric_limits<double>::infinity();
    std::size_t next = 0;
    while (next < requests.size() || !ends_.empty() || !moves_.empty()) {
      double arrival = next < requests.size() ? requests[next].arrival_s : kNever;
      // A closed loop with think time: the next pending request goes at the earliest send due.
      const bool send = arrival == kClosedLoopPending_s && !sends_.empty();
      if (send) arrival = sends_.top();
      const double end = ends_.empty() ? kNever : ends_.top().first;
      const double moved = moves_.empty() ? kNever : std::get<0>(moves_.top());
      if (end == kNever && arrival == kNever && moved == kNever)  // a closed loop sends as requests leave
        throw SimulationError("the closed loop has " + std::to_string(requests.size() - next) +
                              " requests pending and none in flight");
      if (end <= arrival && end <= moved) {
        const std::size_t k = ends_.top().second;
        ends_.pop();
        advance(end);
        complete(k, end);
        start(k, end);
        refresh(k);
      } else if (moved <= arrival) {
        const auto [t, id, p] = moves_.top();
        moves_.pop();
        advance(t);
        arrive_at_decode(id, p, t);
      } else {
        if (send) {
          sends_.pop();
          requests[next].arrival_s = arrival;
        }
        advance(arrival);
        arrive(static_cast<std::uint32_t>(next++), arrival);
      }
    }
    return finish();
  }

 private:
  using End = std::pair<double, std::size_t>;
  using Move = std::tuple<double, std::uint32_t, std::size_t>;  // a KV transfer's end, request, prefill replica

  bool is_prefill(std::size_t k) const { return k < prefill_replicas_; }
  std::span<ServedRequest> requests_of(std::size_t k) { return is_prefill(k) ? prefills_ : result_.requests; }

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
    if (kv_blocks_for(total - 1, spec_.block_size) > blocks_per_request_ ||
        (prefill_replicas_ > 0 && kv_blocks_for(r.prompt_tokens, spec_.block_size) > prefill_blocks_per_request_)) {
      r.status = RequestStatus::rejected_kv_cache;
      send_next(t);
      return;
    }
    const std::size_t k = router_.pick(
        std::span<const std::int64_t>(outstanding_).first(prefill_replicas_ > 0 ? prefill_replicas_ : replicas_.size()),
        accepted_++);
    r.replica = static_cast<std::int32_t>(k);
    ++outstanding_[k];
    ++totals_.in_system;
    look_up_prefix(k, requests_of(k)[id]);
    replicas_[k].waiting.push_back(id);
    if (replicas_[k].plan.empty()) start(k, t);
    refresh(k);
  }

  // A closed loop sends its next pending request when one leaves (finished or rejected) at `t`.
  // With think time (traffic.think_time_s) the send is due the pause of the request it releases later.
  void send_next(double t) {
    if (!spec_.traffic.closed_loop()) return;
    if (!think_s_.empty()) {
      if (released_ < think_s_.size()) sends_.push(t + think_s_[released_++]);
      return;
    }
    std::vector<ServedRequest>& requests = result_.requests;
    while (next_pending_ < requests.size() && requests[next_pending_].arrival_s != kClosedLoopPending_s)
      ++next_pending_;
    if (next_pending_ < requests.size()) requests[next_pending_++].arrival_s = t;
  }

  void start(std::size_t k, double t) {
    ReplicaState& rep = replicas_[k];
    const std::int64_t preempted = rep.preemptions;
    const std::span<ServedRequest> requests = requests_of(k);
    scheduler_->schedule(rep, requests);
    // Queued requests hold their references to cached prefixes (looked up when they joined): when the
    // replica would stall on them, they let go, from the back of the queue, until something runs.
    while (rep.plan.empty() && rep.running.empty() && drop_a_queued_reference(k, requests))
      scheduler_->schedule(rep, requests);
    totals_.preemptions += rep.preemptions - preempted;
    if (rep.plan.empty()) {
      // Every policy runs something while requests wait (each fits an empty replica: checked on
      // arrival), so an idle replica with requests would leave them unserved: never silently. A prefill
      // replica whose blocks hold KV caches being moved waits for the moves to end.
      if ((!rep.running.empty() || !rep.waiting.empty()) && moving_from_[k] == 0)
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
      const ServedRequest& r = requests[e.request];
      batch_.push_back({e.new_tokens, r.computed});
      (r.known_tokens() - r.computed > 1 ? prefill : decode) += e.new_tokens;
    }
    IterationTime it = draft_ != nullptr && !is_prefill(k)
                           ? speculative_iteration_time(rep, requests)
                           : (is_prefill(k) ? *prefill_model_ : model_).iteration_time(batch_);
    if (rep.host_free_blocks >= 0) it.time_s += swap_time_s(rep, requests);
    if (!(it.time_s > 0.0) || !std::isfinite(it.time_s))
      throw SimulationError("the iteration model returned a time of " + std::to_string(it.time_s) +
                            " s for an iteration of " + std::to_string(batch_.size()) + " requests");
    busy_s_ += (it.time_s - it.host_s) * (prefill_replicas_ == 0 ? 1.0 : gpus_of(k));
    ++iterations_;
    if (std::ssize(result_.iterations) < options_.iteration_records)
      result_.iterations.push_back({static_cast<std::int32_t>(k), t, it.time_s,
                                    static_cast<std::int32_t>(rep.plan.size()), prefill, decode,
                                    rep.total_blocks - rep.free_blocks});
    ends_.push({t + it.time_s, k});
  }

  // Speculative decoding: the tokens a decode step of `r` emits: floor of its credit after adding E, at
  // most what it has left to generate, fewer when no KV block is free for the accepted tokens.
  std::int32_t speculate(ReplicaState& rep, ServedRequest& r) {
    SpeculativeStats& x = result_.speculative;
    r.speculative_credit += static_cast<float>(speculative_tokens_per_step_);
    const auto owed = static_cast<std::int32_t>(std::floor(r.speculative_credit));
    r.speculative_credit -= static_cast<float>(owed);
    std::int32_t m = std::min(owed, r.output_tokens - r.generated);
    // The K and V of m - 1 accepted tokens join the cache (beyond the one this step scheduled).
    while (m > 1 && !reserve_kv_blocks(rep, r, std::int64_t{r.computed} + m, spec_.block_size))
      --m;
    ++x.steps;
    x.tokens += m;
    if (m < owed) ++x.truncated_steps;
    return m;
  }

  // Preemption by swap: the blocks swapped out since the last iteration and those of the requests this
  // iteration swaps in are copied over the host links before it runs (vLLM's cache operations).
  double swap_time_s(ReplicaState& rep, std::span<ServedRequest> requests) {
    SwapStats& x = result_.swap;
    std::int64_t blocks = rep.swap_out_blocks;
    x.blocks_out += rep.swap_out_blocks;
    rep.swap_out_blocks = 0;
    for (const ScheduledEntry& e : rep.plan) {
      ServedRequest& r = requests[e.request];
      if (r.swapped_blocks == 0) continue;
      blocks += r.swapped_blocks;
      x.blocks_in += r.swapped_blocks;
      ++x.swap_ins;
      rep.host_free_blocks += r.swapped_blocks;
      r.swapped_blocks = 0;
    }
    const double bytes = static_cast<double>(blocks) * swap_bytes_per_block_;
    const double t = bytes / host_link_Bps_;
    x.bytes_per_gpu += bytes;
    x.time_s += t;
    return t;
  }

  static bool decoding(const ServedRequest& r) { return r.generated >= 1 && r.known_tokens() - r.computed == 1; }

  // Speculative decoding: the draft's k passes (the first with the iteration's prompt chunks, the others
  // with one token per decoding request) and the served model's pass verifying k + 1 tokens of each
  // decoding request (speculative_decoding.hpp).
  IterationTime speculative_iteration_time(const ReplicaState& rep, std::span<const ServedRequest> requests) {
    const std::int64_t k = spec_.speculative.tokens;
    verify_.clear();
    draft_decode_.clear();
    for (std::size_t i = 0; i < rep.plan.size(); ++i) {
      const bool d = decoding(requests[rep.plan[i].request]);
      verify_.push_back({d ? k + 1 : batch_[i].new_tokens, batch_[i].context_tokens});
      if (d) draft_decode_.push_back(batch_[i]);
    }
    if (draft_decode_.empty()) {  // nothing to speculate: the prompts run on both models
      IterationTime t = model_.iteration_time(batch_);
      const double draft_s = draft_->iteration_time(batch_).time_s - t.host_s;
      t.time_s += draft_s;
      result_.speculative.draft_time_s += draft_s;
      return t;
    }
    IterationTime t = verify_time(verify_);
    const double first = draft_->iteration_time(batch_).time_s;
    const double rest = k > 1 ? static_cast<double>(k - 1) * draft_->iteration_time(draft_decode_).time_s : 0.0;
    const double draft_s = first + rest - static_cast<double>(k) * t.host_s;  // one host overhead per step
    t.time_s += draft_s;
    result_.speculative.draft_time_s += draft_s;
    return t;
  }

  // The verify pass: k + 1 tokens per decoding request may exceed max_batch_tokens (the schedulers
  // budget one per decode): then it runs as consecutive passes within max_batch_tokens (one host overhead).
  IterationTime verify_time(std::span<const IterationEntry> batch) const {
    std::int64_t tokens = 0;
    for (const IterationEntry& e : batch)
      tokens += e.new_tokens;
    if (tokens <= spec_.max_batch_tokens) return model_.iteration_time(batch);
    IterationTime total;
    std::size_t first = 0;
    while (first < batch.size()) {
      std::size_t last = first;
      std::int64_t n = 0;
      while (last < batch.size() && (last == first || n + batch[last].new_tokens <= spec_.max_batch_tokens))
        n += batch[last++].new_tokens;
      const IterationTime t = model_.iteration_time(batch.subspan(first, last - first));
      total.time_s += total.host_s > 0.0 ? t.time_s - t.host_s : t.time_s;
      total.compute_s += t.compute_s;
      total.communication_s += t.communication_s;
      total.host_s = t.host_s;
      first = last;
    }
    return total;
  }

  double gpus_of(std::size_t k) const {
    return is_prefill(k) ? double(spec_.prefill_tp()) * spec_.prefill_pp() : double(spec_.tp) * spec_.pp;
  }

  void complete(std::size_t k, double t) {
    if (is_prefill(k)) {
      complete_prefill(k, t);
      return;
    }
    ReplicaState& rep = replicas_[k];
    std::vector<ServedRequest>& requests = result_.requests;
    bool any_finished = false;
    for (const ScheduledEntry& e : rep.plan) {
      ServedRequest& r = requests[e.request];
      const std::int32_t emitted = draft_ != nullptr && e.new_tokens == 1 && decoding(r) ? speculate(rep, r) : 1;
      r.computed += e.new_tokens;
      cache_prefix(k, r);
      if (r.computed < r.known_tokens()) continue;
      if (emitted > 1) {  // the verify pass wrote the accepted tokens' K and V; m tokens share the gap
        r.computed += emitted - 1;
        const double gap = (t - r.last_token_s) / emitted;
        for (std::int32_t i = 0; i < emitted; ++i) {
          r.tbt_sum_s += gap;
          gaps_.add(gap);
        }
        r.tbt_max_s = std::max(r.tbt_max_s, gap);
        r.generated += emitted - 1;
      }
      ++r.generated;
      if (r.generated == 1) {
        r.first_token_s = t;
      } else if (emitted == 1) {
        const double gap = t - r.last_token_s;
        r.tbt_sum_s += gap;
        r.tbt_max_s = std::max(r.tbt_max_s, gap);
        gaps_.add(gap);
      }
      r.last_token_s = t;
      if (r.generated == r.output_tokens) {
        r.status = RequestStatus::finished;
        r.finish_s = t;
        release_all_blocks(k, r);
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

  // A prefill replica's iteration ended: each request whose prompt is done has its first token; its KV
  // cache starts moving to the decode replica the router picks (none when that token was its last).
  void complete_prefill(std::size_t k, double t) {
    ReplicaState& rep = replicas_[k];
    bool any_finished = false;
    for (const ScheduledEntry& e : rep.plan) {
      ServedRequest& s = prefills_[e.request];
      s.computed += e.new_tokens;
      cache_prefix(k, s);
      if (s.computed < s.known_tokens()) continue;
      s.generated = 1;
      s.status = RequestStatus::finished;
      any_finished = true;
      --outstanding_[k];
      ServedRequest& r = result_.requests[e.request];
      r.generated = 1;
      r.first_token_s = r.last_token_s = t;
      r.preemptions = s.preemptions;
      if (r.output_tokens == 1) {
        r.status = RequestStatus::finished;
        r.finish_s = t;
        release_all_blocks(k, s);
        --totals_.in_system;
        send_next(t);
        continue;
      }
      const std::size_t d =
          prefill_replicas_ +
          router_.pick(std::span<const std::int64_t>(outstanding_).subspan(prefill_replicas_), decode_routed_++);
      r.replica = static_cast<std::int32_t>(d);
      ++outstanding_[d];
      KvTransferStats& x = result_.kv_transfers;
      const double bytes = static_cast<double>(r.prompt_tokens) * x.bytes_per_token;
      const double dt = transfer_->transfer_s(static_cast<int>(k), static_cast<int>(d - prefill_replicas_), bytes);
      if (!(dt >= 0.0) || !std::isfinite(dt))
        throw SimulationError("the KV transfer model returned a time of " + std::to_string(dt) + " s for " +
                              std::to_string(bytes) + " bytes");
      ++x.transfers;
      x.bytes += bytes;
      x.total_s += dt;
      x.max_s = std::max(x.max_s, dt);
      ++moving_from_[k];
      moves_.push({t + dt, e.request, k});
    }
    rep.plan.clear();
    if (any_finished)
      std::erase_if(rep.running, [&](std::uint32_t id) { return prefills_[id].status == RequestStatus::finished; });
  }

  // A KV cache arrived at its decode replica: the prefill replica frees its blocks (and may admit more),
  // the request queues at the decode replica with its prompt computed.
  void arrive_at_decode(std::uint32_t id, std::size_t p, double t) {
    --moving_from_[p];
    release_all_blocks(p, prefills_[id]);
    if (replicas_[p].plan.empty()) start(p, t);
    refresh(p);
    ServedRequest& r = result_.requests[id];
    r.computed = r.prompt_tokens;
    const std::size_t d = static_cast<std::size_t>(r.replica);
    replicas_[d].waiting.push_back(id);
    if (replicas_[d].plan.empty()) start(d, t);
    refresh(d);
  }

  // Prefix caching: a request of a prefix group joining replica k references its group's cached blocks
  // and skips their prefill (at most prompt - 1 tokens: the last is always computed).
  void look_up_prefix(std::size_t k, ServedRequest& r) {
    if (k >= caches_.size() || r.prefix_group < 0) return;
    PrefixCacheStats& x = result_.prefix_cache;
    ++x.lookups;
    x.lookup_prompt_tokens += r.prompt_tokens;
    PrefixCache& c = caches_[k];
    if (!c.cached(r.prefix_group)) return;
    c.pin(r.prefix_group);
    r.shared_blocks = r.blocks = shared_blocks_;
    r.computed = hit_tokens(r);
    r.prefix_hit = true;
    ++x.hits;
    x.saved_prefill_tokens += r.computed;
  }

  std::int32_t hit_tokens(const ServedRequest& r) const {
    return std::min(shared_blocks_ * static_cast<std::int32_t>(spec_.block_size), r.prompt_tokens - 1);
  }

  // The last queued request of replica k referencing a cached prefix lets go of it (and of its hit, which
  // no longer counts); false when none does.
  bool drop_a_queued_reference(std::size_t k, std::span<ServedRequest> requests) {
    if (k >= caches_.size()) return false;
    std::deque<std::uint32_t>& waiting = replicas_[k].waiting;
    for (auto it = waiting.rbegin(); it != waiting.rend(); ++it) {
      ServedRequest& r = requests[*it];
      if (r.shared_blocks == 0) continue;
      if (r.prefix_hit) {
        --result_.prefix_cache.hits;
        result_.prefix_cache.saved_prefill_tokens -= hit_tokens(r);
        r.prefix_hit = false;
      }
      release_all_blocks(k, r);
      r.computed = 0;
      ++result_.prefix_cache.dropped_references;
      return true;
    }
    return false;
  }

  // A request that has computed its group's prefix gives those blocks to the cache when it holds none
  // and the group is not cached.
  void cache_prefix(std::size_t k, ServedRequest& r) {
    if (k >= caches_.size() || r.prefix_group < 0 || r.shared_blocks > 0 ||
        r.computed < shared_blocks_ * spec_.block_size || caches_[k].cached(r.prefix_group))
      return;
    caches_[k].insert(r.prefix_group);
    r.shared_blocks = shared_blocks_;
  }

  // Frees a request's blocks and lets go of the prefix-cache blocks it referenced.
  void release_all_blocks(std::size_t k, ServedRequest& r) {
    release_kv_blocks(replicas_[k], r);
    if (r.shared_blocks > 0) {
      caches_[k].unpin(r.prefix_group);
      r.shared_blocks = r.blocks = 0;
    }
  }

  ServingResult finish() {
    ServingSummary s = summarize_requests(result_.requests, spec_.slo, gaps_);
    s.iterations = iterations_;
    for (const ReplicaState& r : replicas_)
      s.preemptions += r.preemptions;
    for (const PrefixCache& c : caches_)
      result_.prefix_cache.evictions += c.evictions();
    if (spec_.preemption == "swap") {
      for (const ReplicaState& r : replicas_)
        result_.swap.recompute_fallbacks += r.swap_fallbacks;
      result_.swap.swap_outs = s.preemptions - result_.swap.recompute_fallbacks;
    }
    s.kv_blocks_per_replica = blocks_per_replica_;
    s.kv_capacity_tokens_per_replica = model_.memory().kv_capacity_tokens;
    const double T = s.makespan_s;
    if (T > 0.0) {
      // The totals are integrated to the last event, which is the last finish.
      s.mean_requests_in_system = integrals_.in_system / T;
      s.mean_running = integrals_.running / T;
      s.mean_queued = integrals_.queued / T;
      double blocks = static_cast<double>(blocks_per_replica_) * spec_.replicas;
      if (prefill_replicas_ > 0)
        blocks += static_cast<double>(prefill_blocks_per_replica_) * static_cast<double>(prefill_replicas_);
      if (blocks > 0) {
        s.mean_kv_occupancy = integrals_.kv_blocks_used / T / blocks;
        s.peak_kv_occupancy = static_cast<double>(integrals_.peak_kv_blocks_used) / blocks;
      }
      // Colocated: busy replica-seconds over replicas; disaggregated: busy GPU-seconds over GPUs.
      s.gpu_busy_fraction =
          busy_s_ / (T * (prefill_replicas_ == 0 ? static_cast<double>(spec_.replicas) : double(spec_.gpus())));
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
  const IterationModel* prefill_model_;
  const KvTransfer* transfer_;
  double host_link_Bps_;
  double swap_bytes_per_block_ = 0.0;  // one block's K and V on one GPU
  const IterationModel* draft_;
  double speculative_tokens_per_step_ = 1.0;
  std::vector<IterationEntry> verify_, draft_decode_;
  ServingRunOptions options_;
  std::unique_ptr<ServingScheduler> scheduler_;
  const ServingRouter& router_;
  std::size_t prefill_replicas_;  // replicas 0 .. prefill_replicas_ - 1 are the prefill pool
  std::vector<ReplicaState> replicas_;
  std::vector<ServedRequest> prefills_;  // disaggregated: the requests as the prefill pool serves them
  std::vector<std::int64_t> moving_from_ = std::vector<std::int64_t>(replicas_.size(), 0);
  std::priority_queue<Move, std::vector<Move>, std::greater<>> moves_;
  std::uint64_t decode_routed_ = 0;
  std::int64_t prefill_blocks_per_replica_ = 0;
  std::vector<PrefixCache> caches_;  // prefix caching: one per replica that runs prompts
  std::int32_t shared_blocks_ = 0;   // full blocks of a group's prefix
  std::vector<Share> shares_ = std::vector<Share>(replicas_.size());
  std::vector<std::int64_t> outstanding_;
  std::int64_t blocks_per_replica_ = 0;
  // The most blocks one request may hold: the replica's, or one attention rank's under data-parallel
  // attention (a request's KV cache lives on one rank); the replica's blocks are pooled over its ranks.
  std::int64_t blocks_per_request_ = 0, prefill_blocks_per_request_ = 0;
  std::uint64_t accepted_ = 0;
  std::size_t next_pending_ = 0;  // closed loop: no request before it is pending
  std::priority_queue<End, std::vector<End>, std::greater<>> ends_;
  // Closed loop with think time: each later request's pause (by release order), the next to release,
  // and the sends due (the engine gives each to the next pending request when its time comes).
  std::vector<double> think_s_;
  std::size_t released_ = 0;
  std::priority_queue<double, std::vector<double>, std::greater<>> sends_;
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
  return Engine(spec, ServingModels{model}, arrivals, options).run();
}

ServingResult run_serving(const ServingSpec& spec, const ServingModels& models,
                          std::span<const RequestArrival> arrivals, const ServingRunOptions& options) {
  return Engine(spec, models, arrivals, options).run();
}

}  // namespace clustersim
