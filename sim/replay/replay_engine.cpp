#include "sim/replay/replay_engine.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "sim/collectives/collective_algorithm.hpp"
#include "sim/core/error.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "topologies/cluster.hpp"

namespace clustersim {
namespace {

using Interval = std::pair<double, double>;

// Total length of the union of intervals (sorted in place).
std::vector<Interval> merge_intervals(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const auto& iv : v) {
    if (!out.empty() && iv.first <= out.back().second) {
      out.back().second = std::max(out.back().second, iv.second);
    } else {
      out.push_back(iv);
    }
  }
  return out;
}

double total_length(const std::vector<Interval>& v) {
  double t = 0.0;
  for (const auto& iv : v)
    t += iv.second - iv.first;
  return t;
}

// Length of the intersection of two sorted, disjoint interval lists.
double overlap_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  double t = 0.0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double lo = std::max(a[i].first, b[j].first);
    const double hi = std::min(a[i].second, b[j].second);
    if (hi > lo) t += hi - lo;
    if (a[i].second < b[j].second)
      ++i;
    else
      ++j;
  }
  return t;
}

class Replay {
 public:
  Replay(const ExecutionGraph& graph, const Cluster& cluster, const GpuSpec& gpu, NetworkBackend& backend,
         const ReplayOptions& options)
      : graph_(graph), cluster_(cluster), gpu_(gpu), backend_(backend), options_(options) {
    prepare();
  }

  ReplayResult run() {
    backend_.schedule(0.0, [this] {
      for (std::size_t c = 0; c < states_.size(); ++c)
        try_start_all(c);
    });
    backend_.run();
    check_finished();
    return result();
  }

 private:
  struct ClassState {
    std::vector<std::uint32_t> remaining;  // unfinished dependencies per op
    std::vector<std::uint32_t> succ_begin;
    std::vector<OpId> succ;
    std::vector<std::vector<OpId>> queue;  // per stream, ops in issue order
    std::vector<std::size_t> head;
    std::vector<char> busy;
    std::vector<double> started_s;        // per stream: start of the running op
    std::vector<std::uint32_t> next_seq;  // per communicator
    std::vector<Interval> compute, communication;
    std::size_t finished = 0;
    double finish_s = 0.0;
  };

  struct Pending {
    CollectiveKind kind;
    double bytes;
    std::string first_name;
    std::vector<std::pair<std::size_t, OpId>> arrived;  // (class, op)
  };

  void prepare() {
    graph_.validate();
    std::vector<int> class_of_rank(static_cast<std::size_t>(graph_.world_size()), -1);
    for (std::size_t c = 0; c < graph_.classes().size(); ++c)
      for (int r : graph_.classes()[c].ranks)
        class_of_rank[static_cast<std::size_t>(r)] = static_cast<int>(c);
    // Classes taking part in each communicator: a collective starts when all of them have arrived.
    for (const auto& comm : graph_.communicators()) {
      std::vector<char> member(graph_.classes().size(), 0);
      for (const auto& group : comm.groups)
        for (int r : group)
          member[static_cast<std::size_t>(class_of_rank[static_cast<std::size_t>(r)])] = 1;
      participants_.push_back(static_cast<int>(std::count(member.begin(), member.end(), 1)));
    }
    states_.resize(graph_.classes().size());
    for (std::size_t c = 0; c < graph_.classes().size(); ++c) {
      const OpTable& ops = graph_.classes()[c].ops;
      ClassState& s = states_[c];
      const std::size_t n = ops.size();
      s.remaining.assign(n, 0);
      s.succ_begin.assign(n + 1, 0);
      std::uint8_t max_stream = 0;
      for (OpId i = 0; i < n; ++i) {
        const auto deps = ops.deps(i);
        s.remaining[i] = static_cast<std::uint32_t>(deps.size());
        for (OpId d : deps)
          ++s.succ_begin[d + 1];
        max_stream = std::max(max_stream, ops.stream(i));
      }
      for (std::size_t i = 0; i < n; ++i)
        s.succ_begin[i + 1] += s.succ_begin[i];
      s.succ.resize(s.succ_begin[n]);
      std::vector<std::uint32_t> fill(s.succ_begin.begin(), s.succ_begin.end() - 1);
      for (OpId i = 0; i < n; ++i)
        for (OpId d : ops.deps(i))
          s.succ[fill[d]++] = i;
      s.queue.resize(static_cast<std::size_t>(max_stream) + 1);
      for (OpId i = 0; i < n; ++i)
        s.queue[ops.stream(i)].push_back(i);
      s.head.assign(s.queue.size(), 0);
      s.busy.assign(s.queue.size(), 0);
      s.started_s.assign(s.queue.size(), 0.0);
      s.next_seq.assign(graph_.communicators().size(), 0);
    }
  }

  void try_start_all(std::size_t c) {
    for (std::size_t stream = 0; stream < states_[c].queue.size(); ++stream)
      try_start(c, stream);
  }

  void try_start(std::size_t c, std::size_t stream) {
    ClassState& s = states_[c];
    if (s.busy[stream] || s.head[stream] >= s.queue[stream].size()) return;
    const OpId op = s.queue[stream][s.head[stream]];
    if (s.remaining[op] != 0) return;
    s.busy[stream] = 1;
    s.started_s[stream] = backend_.now_s();
    const OpTable& ops = graph_.classes()[c].ops;
    if (ops.kind(op) == OpKind::compute) {
      const double duration = kernel_time(gpu_, ops.compute_op(op)).time_s;
      backend_.schedule(backend_.now_s() + duration, [this, c, op] { finish(c, op); });
    } else if (ops.kind(op) == OpKind::collective) {
      arrive(c, op);
    } else {
      throw SimulationError(std::string("op kind ") + to_string(ops.kind(op)) + " is not replayed yet");
    }
  }

  void arrive(std::size_t c, OpId op) {
    const OpTable& ops = graph_.classes()[c].ops;
    const std::uint16_t comm = ops.communicator(op);
    const std::uint32_t seq = states_[c].next_seq[comm]++;
    auto [it, inserted] = pending_.try_emplace({comm, seq});
    Pending& p = it->second;
    if (inserted) {
      p.kind = ops.collective(op);
      p.bytes = ops.bytes(op);
      p.first_name = std::string(ops.name(op));
    } else if (p.kind != ops.collective(op) || p.bytes != ops.bytes(op)) {
      throw SimulationError("mismatched collectives on communicator '" + graph_.communicators()[comm].name +
                            "' (call #" + std::to_string(seq) + "): '" + p.first_name + "' (" + to_string(p.kind) +
                            ", " + std::to_string(p.bytes) + " bytes) vs '" + std::string(ops.name(op)) + "' (" +
                            to_string(ops.collective(op)) + ", " + std::to_string(ops.bytes(op)) + " bytes)");
    }
    p.arrived.emplace_back(c, op);
    if (static_cast<int>(p.arrived.size()) == participants_[comm]) {
      Pending ready = std::move(p);
      pending_.erase(it);
      launch(comm, std::move(ready));
    }
  }

  // All groups of the communicator run the collective concurrently; it completes when all are done.
  // The algorithm for this collective: the communicator's override, else the default; "auto" is
  // resolved by the selector on the first group (all groups of a communicator have the same shape).
  std::string algorithm_for(std::uint16_t comm, const CollectiveContext& ctx, const CollectiveRequest& req) {
    const Communicator& communicator = graph_.communicators()[comm];
    const auto it = options_.algorithm_by_communicator.find(communicator.name);
    const std::string& name =
        it != options_.algorithm_by_communicator.end() ? it->second : options_.collective_algorithm;
    if (name != kAutoAlgorithm) return name;
    return select_collective_algorithm(ctx, req);
  }

  // The plans of a collective on every group of `comm`: built once per (communicator, kind, size), as
  // they depend on nothing else, and reused by every later call (a step repeats its collectives).
  struct PlannedCollective {
    std::string algorithm;
    std::vector<std::shared_ptr<const CollectivePlan>> plans;  // one per group
  };
  const PlannedCollective& plan_for(std::uint16_t comm, CollectiveKind kind, double bytes) {
    const auto key = std::make_tuple(comm, kind, bytes);
    auto it = planned_.find(key);
    if (it != planned_.end()) return it->second;
    PlannedCollective planned;
    const CollectiveContext ctx{cluster_, options_.network_profile};
    for (const auto& group : graph_.communicators()[comm].groups) {
      CollectiveRequest req{kind, &group, bytes};
      if (planned.algorithm.empty()) planned.algorithm = algorithm_for(comm, ctx, req);
      planned.plans.push_back(std::make_shared<const CollectivePlan>(plan_collective(planned.algorithm, ctx, req)));
    }
    return planned_.emplace(key, std::move(planned)).first->second;
  }

  void launch(std::uint16_t comm, Pending p) {
    const Communicator& communicator = graph_.communicators()[comm];
    auto record_index = records_.size();
    CollectiveRecord rec;
    rec.communicator = comm;
    rec.kind = p.kind;
    rec.bytes = p.bytes;
    rec.start_s = backend_.now_s();
    auto groups_left = std::make_shared<std::size_t>(communicator.groups.size());
    auto members = std::make_shared<std::vector<std::pair<std::size_t, OpId>>>(std::move(p.arrived));
    auto on_group_done = [this, groups_left, members, record_index] {
      if (--*groups_left != 0) return;
      records_[record_index].end_s = backend_.now_s();
      for (const auto& [cls, op] : *members)
        finish(cls, op);
    };
    const PlannedCollective& planned = plan_for(comm, p.kind, p.bytes);
    const std::string& algorithm = planned.algorithm;
    const auto& plans = planned.plans;
    rec.algorithm = algorithm;
    rec.channels = plans.empty() ? 1 : plans.front()->channels;
    records_.push_back(std::move(rec));
    for (auto& plan : plans)
      run_phase(comm, plan, 0, on_group_done);
  }

  // Phase by phase: the transfers, then the phase's latency; after the last, the per-call latency.
  void run_phase(std::uint16_t comm, std::shared_ptr<const CollectivePlan> plan, std::size_t phase,
                 std::function<void()> done) {
    if (phase == plan->phases.size()) {
      backend_.schedule(backend_.now_s() + options_.network_profile.collective_latency_s.value, std::move(done));
      return;
    }
    const auto& transfers = plan->phases[phase].transfers;
    const std::uint64_t flow_id = next_flow_id_;
    next_flow_id_ += transfers.size();
    transfers_ += transfers.size();
    backend_.set_traffic_label(comm);
    backend_.start_transfers(transfers, flow_id, [this, comm, plan, phase, done = std::move(done)]() mutable {
      backend_.schedule(backend_.now_s() + plan->phases[phase].latency_s,
                        [this, comm, plan, phase, done = std::move(done)]() mutable {
                          run_phase(comm, plan, phase + 1, std::move(done));
                        });
    });
  }

  void finish(std::size_t c, OpId op) {
    ClassState& s = states_[c];
    const OpTable& ops = graph_.classes()[c].ops;
    const std::size_t stream = ops.stream(op);
    const double now = backend_.now_s();
    (ops.kind(op) == OpKind::compute ? s.compute : s.communication).emplace_back(s.started_s[stream], now);
    s.busy[stream] = 0;
    ++s.head[stream];
    ++s.finished;
    s.finish_s = now;
    for (std::uint32_t i = s.succ_begin[op]; i < s.succ_begin[op + 1]; ++i)
      --s.remaining[s.succ[i]];
    try_start_all(c);
  }

  void check_finished() const {
    std::string waits;
    for (std::size_t c = 0; c < states_.size(); ++c) {
      const ClassState& s = states_[c];
      const RankClass& rc = graph_.classes()[c];
      if (s.finished == rc.ops.size()) continue;
      for (std::size_t stream = 0; stream < s.queue.size(); ++stream) {
        if (s.head[stream] >= s.queue[stream].size()) continue;
        const OpId op = s.queue[stream][s.head[stream]];
        waits += "\n  ranks of '" + rc.name + "' (" + std::to_string(rc.ranks.size()) + " ranks, first " +
                 std::to_string(rc.ranks.front()) + ") stream " + std::to_string(stream) + " wait at op #" +
                 std::to_string(op) + " '" + std::string(rc.ops.name(op)) + "'";
        if (s.busy[stream] && rc.ops.kind(op) == OpKind::collective) {
          waits += ": " + std::string(to_string(rc.ops.collective(op))) + " on '" +
                   graph_.communicators()[rc.ops.communicator(op)].name + "' that other ranks never reach";
        } else if (s.remaining[op] != 0) {
          waits += ": " + std::to_string(s.remaining[op]) + " dependencies never finish";
        }
      }
    }
    if (!waits.empty()) throw SimulationError("deadlock: the simulation cannot make progress;" + waits);
  }

  ReplayResult result() {
    ReplayResult r;
    r.classes.resize(states_.size());
    std::vector<Interval> critical_compute;
    for (std::size_t c = 0; c < states_.size(); ++c) {
      ClassState& s = states_[c];
      ClassTimes& t = r.classes[c];
      auto compute = merge_intervals(std::move(s.compute));
      const auto comm = merge_intervals(std::move(s.communication));
      t.finish_s = s.finish_s;
      t.compute_s = total_length(compute);
      t.exposed_communication_s = total_length(comm) - overlap_length(comm, compute);
      t.idle_s = std::max(0.0, t.finish_s - t.compute_s - t.exposed_communication_s);
      if (c == 0 || t.finish_s > r.step_time_s) {
        r.step_time_s = t.finish_s;
        r.critical_class = c;
        critical_compute = std::move(compute);
      }
    }
    for (auto& rec : records_) {
      const std::vector<Interval> span{{rec.start_s, rec.end_s}};
      rec.exposed_s = (rec.end_s - rec.start_s) - overlap_length(span, critical_compute);
    }
    r.collectives = std::move(records_);
    r.link_bytes = backend_.link_usage().bytes();
    r.link_busy_s = backend_.link_usage().busy_s();
    r.link_bytes_by_communicator = backend_.link_usage().bytes_by_label();
    r.transfers = transfers_;
    return r;
  }

  const ExecutionGraph& graph_;
  const Cluster& cluster_;
  const GpuSpec& gpu_;
  NetworkBackend& backend_;
  const ReplayOptions& options_;
  std::vector<int> participants_;
  std::vector<ClassState> states_;
  std::map<std::pair<std::uint16_t, std::uint32_t>, Pending> pending_;
  std::map<std::tuple<std::uint16_t, CollectiveKind, double>, PlannedCollective> planned_;
  std::vector<CollectiveRecord> records_;
  std::uint64_t next_flow_id_ = 0;
  std::size_t transfers_ = 0;
};

}  // namespace

ReplayResult replay(const ExecutionGraph& graph, const Cluster& cluster, const GpuSpec& gpu, NetworkBackend& backend,
                    const ReplayOptions& options) {
  Replay r(graph, cluster, gpu, backend, options);
  return r.run();
}

}  // namespace clustersim
