#include "sim/replay/replay_engine.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "sim/collectives/collective_algorithm.hpp"
#include "sim/core/child_process.hpp"
#include "sim/core/error.hpp"
#include "sim/core/intervals.hpp"
#include "sim/core/wire_bytes.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim/replay/replay_result_wire.hpp"
#include "sim/replay/traffic_classes.hpp"
#include "topologies/cluster.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

// A collective planned for each group of a cell (Replay::plan_for).
struct PlannedCollective {
  std::string algorithm;
  std::vector<std::shared_ptr<const CollectivePlan>> plans;  // one per group
  // Plans whose transfers all stay inside one NVSwitch domain or xGMI mesh node: timed by the closed form (its time
  // on an idle fabric) instead of the backend, with the bytes each link carries. Empty: not eligible.
  std::vector<double> closed_form_s;
  double closed_form_max_s = 0.0;  // the largest: when the collective ends
  // xGMI mesh only: the flow ids the backend would have taken for these transfers (every phase of
  // every group), drawn at launch so that the ECMP choices of the traffic after it are those of the
  // exhaustive replay (exact for one-phase plans: ring, direct, tree). NVSwitch plans draw none (as
  // before, so that their reports are unchanged).
  std::uint64_t closed_form_flow_ids = 0;
  // xGMI mesh only: per group, each link's busy time (mesh_link_busy_s); NVSwitch plans count the
  // group's closed-form time on each of its links.
  std::vector<std::vector<std::pair<int, double>>> link_busy_s;
  std::vector<std::vector<std::pair<int, double>>> link_bytes;
  std::size_t runs = 0;
  // Under traffic classes (reduce_to_classes): per group, its plan with the representatives only, and
  // per group and phase its batch of the classes (AdaptiveChecks).
  std::vector<std::shared_ptr<const CollectivePlan>> rep_plans;
  std::vector<std::vector<std::uint32_t>> rep_batches;
};
// Keyed by (communicator, cell, kind, bytes, the (class, op) of an all_to_allv's matrix).
using PlannedKey = std::tuple<std::uint16_t, int, CollectiveKind, double, std::pair<std::size_t, OpId>>;
// A point-to-point channel's transfers, their shares of a message and its hop latency (build_channel),
// keyed by (communicator, sending class, receiving class, offset, tag).
using ChannelKey = std::tuple<std::uint16_t, std::size_t, std::size_t, std::int32_t, std::uint32_t>;
struct BuiltChannel {
  std::vector<Transfer> transfers;
  std::vector<double> shares;
  double latency_s = 0.0;
};

struct ReplayMemo {
  const Cluster* cluster = nullptr;
  // The batches the classes were formed from, every transfer: batch b is transfers[batch_begin[b], ...).
  std::vector<std::size_t> batch_begin;
  std::vector<Transfer> transfers;
  std::vector<char> launch_begins;  // per batch: 1 where it starts a launch (reduce_to_classes)
  bool reduced = false;             // classes formed and used
  std::shared_ptr<const LinkClasses> classes;
  // Adaptive routing: each batch's checks at its starts (traffic_classes.hpp); null: none needed.
  std::shared_ptr<const AdaptiveChecks> checks;
  // A replay sharing the memo found a check failing that no variant could take (and started over
  // without classes): the next ones replay every transfer from the start.
  bool diverged = false;
  // Adaptive routing: variants of point-to-point messages whose check failed (Replay::launch_p2p): the
  // channel's batch `batch` routed against the load in flight then (`context`, per cluster link), a
  // launch of its own; later messages of the channel take the first of the batch and its variants
  // whose check holds. `formation`: the classes' formation, kept to add variants to (their routes
  // computed once); `formed_variants`: how many of `variants` the classes hold.
  struct Variant {
    std::uint32_t batch = 0;
    std::vector<std::pair<int, int>> load;  // (cluster link, transfers in flight), the links with some, in order
  };
  std::vector<Variant> variants;
  std::size_t formed_variants = 0;
  std::shared_ptr<TrafficClasses> formation;
  std::vector<std::vector<std::pair<std::size_t, int>>> representatives;  // per batch

  // prepare()'s per-op structure of `graph` (make_replay_memo's), built by the first replay of it, lent
  // to each later one (the clock solver's replays and the flow replay of a simulate) and given back
  // when it has run. A replay that throws does not give it back: the next one builds it again.
  struct ClassStructure {
    std::vector<std::uint32_t> succ_begin;
    std::vector<OpId> succ;
    std::vector<std::vector<OpId>> queue;
    std::vector<std::uint32_t> kernel_id;
    std::size_t compute_ops = 0;
  };
  struct Prepared {
    const ExecutionGraph* graph = nullptr;  // null: nothing kept
    std::vector<ClassStructure> classes;    // empty while lent or before the first replay
    std::size_t kernels = 0;                // distinct kernels numbered in kernel_id
    std::size_t launches = 0;               // collective records of a replay
    // What planning built, lent like the structure to a later replay of the graph on `planned_on`
    // with the same planning inputs (`planning`: Replay::plans_key, the options planning reads); only
    // the GPU (the clock) differs between them. `plans`: the collective plans (Replay::planned_;
    // their run counts and representatives are each replay's own and start afresh; empty while lent);
    // `channels`: the point-to-point channels reduce_to_classes built (every channel of the step).
    const Cluster* planned_on = nullptr;  // null: nothing planned
    std::string planning;
    std::map<PlannedKey, PlannedCollective> plans;
    std::map<ChannelKey, BuiltChannel> channels;
    // Whether what is kept was planned for this replay's cluster and inputs; where not, it is dropped.
    bool keeps(const Cluster& c, const std::string& inputs) {
      if (planned_on == &c && planning == inputs) return true;
      plans.clear();
      channels.clear();
      planned_on = &c;
      planning = inputs;
      return false;
    }
  } prepared;

  // Takes the structure of `g` (empty when it is not held).
  std::vector<ClassStructure> lend(const ExecutionGraph& g) {
    std::vector<ClassStructure> lent;
    if (prepared.graph != &g || prepared.classes.size() != g.classes().size()) return lent;
    for (std::size_t c = 0; c < prepared.classes.size(); ++c)
      if (prepared.classes[c].succ_begin.size() != g.classes()[c].ops.size() + 1) return lent;
    lent = std::move(prepared.classes);
    prepared.classes.clear();
    return lent;
  }

  bool holds(const Cluster& c, const std::vector<const std::vector<Transfer>*>& batches,
             const std::vector<char>& launches) const {
    if (cluster != &c || batch_begin.size() != batches.size() + 1 || launch_begins != launches) return false;
    for (std::size_t b = 0; b < batches.size(); ++b) {
      const auto& batch = *batches[b];
      if (batch_begin[b + 1] - batch_begin[b] != batch.size()) return false;
      for (std::size_t i = 0; i < batch.size(); ++i) {
        const Transfer& t = transfers[batch_begin[b] + i];
        const Transfer& u = batch[i];
        if (t.src_gpu != u.src_gpu || t.dst_gpu != u.dst_gpu || t.bytes != u.bytes || t.pipelined != u.pipelined ||
            t.lane != u.lane || t.route_class != u.route_class)
          return false;
      }
    }
    return true;
  }
};

std::shared_ptr<ReplayMemo> make_replay_memo(const ExecutionGraph* graph) {
  auto memo = std::make_shared<ReplayMemo>();
  memo->prepared.graph = graph;
  return memo;
}

namespace {

// Thrown inside a replay when an adaptive choice of the classes' routes would differ from the exhaustive
// replay's (AdaptiveChecks); replay() starts over without classes.
// `variants`: messages of channels whose checks failed, each with the load in flight then, to form
// variants of (ReplayMemo::Variant); none: a collective's phase failed its check with the replay exact
// so far (no variant: every transfer is replayed).
struct ClassesDiverged {
  std::vector<ReplayMemo::Variant> variants;
};
// The variants a memo takes before its replays give up the classes, those one replay collects, and the
// restarts of one replay() (each costs a refinement of the classes and a replay with classes; a
// variant keeps the links in flight at its message). The 405B-class step needs 46 variants and 2
// restarts at 131,072 GPUs, one in each of the clock solver's first two replays (docs/performance.md).
constexpr std::size_t k_max_variants = 128;
constexpr std::size_t k_variants_per_replay = 64;
constexpr int k_max_restarts = 6;

class Replay {
 public:
  // `fresh_backend`: the backend was made for this replay alone, and where a check fails the caller
  // starts over on another one (replay(): a child process each, for a backend that cannot restart).
  Replay(const ExecutionGraph& graph, const Cluster& cluster, const GpuSpec& gpu, NetworkBackend& backend,
         const ReplayOptions& options, bool fresh_backend = false)
      : graph_(graph),
        cluster_(cluster),
        gpu_(gpu),
        backend_(backend),
        options_(options),
        fresh_backend_(fresh_backend),
        userbuffers_profile_(userbuffers_profile(options.network_profile)) {
    prepare();
  }

  ReplayResult run() {
    choose_recorded_classes();
    if (options_.traffic_classes) reduce_to_classes();
    backend_.schedule(0.0, [this] {
      for (std::size_t c = 0; c < states_.size(); ++c)
        try_start_all(c);
    });
    try {
      backend_.run();
    } catch (const ClassesDiverged&) {
      // What the replay planned and prepared stays good for the one that starts over (replay()).
      give_back_structure();
      throw;
    }
    if (!collected_.variants.empty()) {  // the replay went on past a failing check: not exact
      give_back_structure();
      throw std::move(collected_);
    }
    check_finished();
    ReplayResult r = result();
    give_back_structure();
    return r;
  }

 private:
  struct ClassState {
    std::vector<std::uint32_t> remaining;  // unfinished dependencies per op
    std::vector<std::uint32_t> succ_begin;
    std::vector<OpId> succ;
    std::vector<std::vector<OpId>> queue;  // per stream, ops in issue order
    std::vector<std::size_t> head;
    std::vector<char> busy;
    std::vector<char> awaiting_host;      // per stream: its next op waits to be issued by the host
    std::vector<double> started_s;        // per stream: start of the running op
    std::vector<std::uint32_t> next_seq;  // per communicator
    std::vector<Interval> compute, communication;
    std::vector<Interval> host_wait;  // ops ready on the GPU, not yet issued by the host
    // ReplayOptions::pipeline_instruction_s > 0: pipeline sends and recvs among ops 0..k (program order)
    std::vector<std::uint32_t> pipeline_instructions;
    // RankClass::host_syncs: which ops have finished, the first op not finished (every op before it
    // has), the first synchronisation point not yet passed and when each passed one did (the host
    // resumed issuing then).
    std::vector<char> done;
    OpId done_prefix = 0;
    std::size_t next_sync = 0;
    std::vector<double> sync_release_s;
    std::vector<std::uint32_t> kernel_id;  // compute ops the kernel model times: index into kernel_s_
    std::size_t finished = 0;
    double finish_s = 0.0;
    double tensor_s = 0.0, low_precision_tensor_s = 0.0, vector_s = 0.0;
  };

  // A point-to-point channel: sends of one class to the ranks of another at one offset and tag,
  // matched in issue order with that class's recvs.
  struct Channel {
    std::deque<OpId> sends, recvs;
    // The channel's transfers (one per rank of the sending class, striped over the sender's NICs when
    // GPUs own several: stripe_over_nics) and their hop latency: the same for every message of the
    // channel, so built at its first message. `shares`: each transfer's fraction of the message.
    std::vector<Transfer> transfers;
    std::vector<double> shares;
    double latency_s = -1.0;
    // Under traffic classes (reduce_to_classes): the representatives simulated and their shares.
    std::vector<Transfer> rep_transfers;
    std::vector<double> rep_shares;
    std::uint32_t rep_batch = 0;  // its batch of the classes (AdaptiveChecks)
    // Adaptive routing: its batch's variants (ReplayMemo::Variant): batch, representatives and shares.
    struct Variant {
      std::uint32_t batch = 0;
      std::vector<Transfer> transfers;
      std::vector<double> shares;
    };
    std::vector<Variant> variants;
    // Eager pairs: the k-th send and the k-th recv of the channel, by issue order; a message that
    // arrived before its recv was issued, and a recv issued before its message arrived.
    std::uint64_t eager_sends = 0, eager_recvs = 0;
    std::map<std::uint64_t, OpId> delivered, waiting;
  };

  struct Pending {
    CollectiveKind kind;
    double bytes;
    const std::vector<double>* pair_bytes;              // all_to_allv; null for any other collective
    std::pair<std::size_t, OpId> first;                 // the (class, op) that arrived first
    std::vector<std::pair<std::size_t, OpId>> arrived;  // (class, op)
  };

  void prepare() {
    graph_.validate();
    class_of_rank_.assign(static_cast<std::size_t>(graph_.world_size()), -1);
    std::vector<int>& class_of_rank = class_of_rank_;
    for (std::size_t c = 0; c < graph_.classes().size(); ++c)
      for (int r : graph_.classes()[c].ranks)
        class_of_rank[static_cast<std::size_t>(r)] = static_cast<int>(c);
    // Each rank's (group, position) in every communicator, for point-to-point peers.
    for (const auto& comm : graph_.communicators()) {
      std::vector<std::pair<int, int>> where(static_cast<std::size_t>(graph_.world_size()), {-1, -1});
      for (std::size_t g = 0; g < comm.groups.size(); ++g)
        for (std::size_t i = 0; i < comm.groups[g].size(); ++i)
          where[static_cast<std::size_t>(comm.groups[g][i])] = {static_cast<int>(g), static_cast<int>(i)};
      position_.push_back(std::move(where));
    }
    // The cells of each communicator: classes joined by its groups (a group's ranks may span several
    // classes: the first and last pipeline stage in "embd"). A collective on a cell starts when every
    // class of the cell has reached it and runs on the cell's groups only (the "tp" groups of one
    // pipeline stage run that stage's tensor-parallel collectives, not the other stages').
    const std::size_t classes = graph_.classes().size();
    for (const auto& comm : graph_.communicators()) {
      std::vector<std::size_t> root(classes);
      for (std::size_t c = 0; c < classes; ++c)
        root[c] = c;
      auto find = [&](std::size_t c) {
        while (root[c] != c)
          c = root[c] = root[root[c]];
        return c;
      };
      std::vector<char> member(classes, 0);
      for (const auto& group : comm.groups) {
        const auto first = static_cast<std::size_t>(class_of_rank[static_cast<std::size_t>(group.front())]);
        for (int r : group) {
          const auto c = static_cast<std::size_t>(class_of_rank[static_cast<std::size_t>(r)]);
          member[c] = 1;
          root[find(c)] = find(first);
        }
      }
      std::vector<int> cell(classes, -1);
      std::vector<int> cell_of_root(classes, -1);
      std::vector<Cell> cells;
      for (std::size_t c = 0; c < classes; ++c) {
        if (!member[c]) continue;
        int& id = cell_of_root[find(c)];
        if (id < 0) {
          id = static_cast<int>(cells.size());
          cells.emplace_back();
        }
        cell[c] = id;
        ++cells[static_cast<std::size_t>(id)].participants;
      }
      for (std::size_t g = 0; g < comm.groups.size(); ++g) {
        const auto c = static_cast<std::size_t>(class_of_rank[static_cast<std::size_t>(comm.groups[g].front())]);
        cells[static_cast<std::size_t>(cell[c])].groups.push_back(g);
      }
      cell_of_class_.push_back(std::move(cell));
      cells_.push_back(std::move(cells));
    }
    states_.resize(graph_.classes().size());
    compute_ops_.assign(graph_.classes().size(), 0);
    std::vector<ReplayMemo::ClassStructure> lent;
    if (options_.memo) lent = options_.memo->lend(graph_);
    borrow_plans();
    if (!lent.empty()) {
      kernel_s_.assign(options_.memo->prepared.kernels, -1.0);
      launches_ = options_.memo->prepared.launches;
    }
    for (std::size_t c = 0; c < graph_.classes().size(); ++c) {
      const OpTable& ops = graph_.classes()[c].ops;
      ClassState& s = states_[c];
      const std::size_t n = ops.size();
      s.remaining.assign(n, 0);
      if (!lent.empty()) {  // built by an earlier replay of this graph
        ReplayMemo::ClassStructure& built = lent[c];
        for (OpId i = 0; i < n; ++i)
          s.remaining[i] = static_cast<std::uint32_t>(ops.deps(i).size());
        s.succ_begin = std::move(built.succ_begin);
        s.succ = std::move(built.succ);
        s.queue = std::move(built.queue);
        s.kernel_id = std::move(built.kernel_id);
        compute_ops_[c] = built.compute_ops;
        s.compute.reserve(built.compute_ops);
        s.communication.reserve(n - built.compute_ops);
        init_streams(ops, s);
        continue;
      }
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
      init_streams(ops, s);
      number_kernels(ops, s);
      reserve_intervals(ops, s);
    }
    kernel_ids_.clear();
    if (!lent.empty()) {
      records_.reserve(launches_);
      return;
    }
    // One record per collective launched: per communicator and cell, the calls of one of its classes.
    std::size_t& launches = launches_;
    launches = 0;
    for (std::size_t comm = 0; comm < cells_.size(); ++comm) {
      std::vector<char> counted(cells_[comm].size(), 0);
      for (std::size_t c = 0; c < states_.size(); ++c) {
        const int cell = cell_of_class_[comm][c];
        if (cell < 0 || counted[static_cast<std::size_t>(cell)]) continue;
        counted[static_cast<std::size_t>(cell)] = 1;
        launches += collective_calls_[c * cells_.size() + comm];
      }
    }
    records_.reserve(launches);
    collective_calls_ = {};
  }

  // The per-stream state of class state s (its queue built) and what depends on the replay's options.
  void init_streams(const OpTable& ops, ClassState& s) {
    s.head.assign(s.queue.size(), 0);
    s.busy.assign(s.queue.size(), 0);
    s.awaiting_host.assign(s.queue.size(), 0);
    s.started_s.assign(s.queue.size(), 0.0);
    s.next_seq.assign(graph_.communicators().size(), 0);
    if (options_.pipeline_instruction_s > 0.0) count_pipeline_instructions(ops, s);
    const std::vector<OpId>& syncs = graph_.classes()[static_cast<std::size_t>(&s - states_.data())].host_syncs;
    s.done.assign(syncs.empty() ? 0 : ops.size(), 0);
    s.done_prefix = 0;
    s.next_sync = 0;
    s.sync_release_s.assign(syncs.size(), 0.0);
    while (s.next_sync < syncs.size() && syncs[s.next_sync] == 0)  // nothing before it: passed at the start
      ++s.next_sync;
  }

  // What planning a collective reads of the options (plan_for and what it calls), as text: plans are
  // lent only between replays whose texts are equal.
  std::string plans_key() const {
    std::string key = network_profile_to_json(options_.network_profile);
    key += '\n' + options_.collective_algorithm + '\n' + options_.expert_communicator + '\n';
    for (const auto& [communicator, algorithm] : options_.algorithm_by_communicator)
      key += communicator + '=' + algorithm + '\n';
    key += std::to_string(options_.closed_form_inside_nvswitch) + std::to_string(options_.closed_form_edge_all_to_all);
    key += ' ' + std::to_string(options_.expert_routing.experts) + ' ' + std::to_string(options_.expert_routing.top_k) +
           ' ' + std::to_string(options_.expert_routing.max_nodes_per_token);
    // The backend: a mesh's closed form times the bytes it delivers (NetworkBackend::delivered_bytes),
    // so an analytical clock replay's plans are not the flow replay's.
    key += '\n' + std::string(backend_.fidelity());
    return key;
  }

  // Takes the plans an earlier replay of this graph left in the memo, when they were planned alike.
  void borrow_plans() {
    ReplayMemo* memo = options_.memo.get();
    if (memo == nullptr || memo->prepared.graph != &graph_ || !memo->prepared.keeps(cluster_, plans_key())) return;
    planned_ = std::move(memo->prepared.plans);
    memo->prepared.plans.clear();
    for (auto& [key, planned] : planned_) {
      planned.runs = 0;
      planned.rep_plans.clear();
      planned.rep_batches.clear();
    }
  }

  // Gives prepare()'s structure to the memo for the next replay of this graph (ReplayMemo::lend).
  void give_back_structure() {
    ReplayMemo* memo = options_.memo.get();
    if (memo == nullptr || memo->prepared.graph != &graph_) return;
    memo->prepared.keeps(cluster_, plans_key());
    memo->prepared.plans = std::move(planned_);
    std::vector<ReplayMemo::ClassStructure> structure(states_.size());
    for (std::size_t c = 0; c < states_.size(); ++c) {
      ClassState& s = states_[c];
      structure[c] = {std::move(s.succ_begin), std::move(s.succ), std::move(s.queue), std::move(s.kernel_id),
                      compute_ops_[c]};
    }
    memo->prepared.classes = std::move(structure);
    memo->prepared.kernels = kernel_s_.size();
    memo->prepared.launches = launches_;
  }

  // The intervals finish() records: one per op, compute or communication (vectors filled in place).
  void reserve_intervals(const OpTable& ops, ClassState& s) {
    std::size_t compute = 0;
    const std::size_t comms = graph_.communicators().size();
    collective_calls_.resize(states_.size() * comms, 0);
    const std::size_t c = static_cast<std::size_t>(&s - states_.data());
    for (OpId op = 0; op < ops.size(); ++op) {
      if (ops.kind(op) == OpKind::compute) ++compute;
      if (ops.kind(op) == OpKind::collective) ++collective_calls_[c * comms + ops.communicator(op)];
    }
    s.compute.reserve(compute);
    s.communication.reserve(ops.size() - compute);
    compute_ops_[c] = compute;
  }

  // The host's pipeline instructions issued up to each op (ReplayOptions::pipeline_instruction_s).
  void count_pipeline_instructions(const OpTable& ops, ClassState& s) const {
    const auto& comms = graph_.communicators();
    std::vector<char> pipeline(comms.size());  // per communicator: whether it is the pipeline's
    for (std::size_t c = 0; c < comms.size(); ++c)
      pipeline[c] = comms[c].name == options_.pipeline_communicator;
    s.pipeline_instructions.resize(ops.size());
    std::uint32_t n = 0;
    for (OpId i = 0; i < ops.size(); ++i) {
      const OpKind kind = ops.kind(i);
      if ((kind == OpKind::send || kind == OpKind::recv) && pipeline[ops.communicator(i)]) ++n;
      s.pipeline_instructions[i] = n;
    }
  }

  void choose_recorded_classes() {
    const std::size_t n = graph_.classes().size();
    recorded_.assign(n, 0);
    const std::size_t k = std::min(options_.timeline_classes, n);
    for (std::size_t i = 0; i < k; ++i) {
      const std::size_t c = k == 1 ? 0 : i * (n - 1) / (k - 1);
      if (!recorded_[c]) recorded_classes_.push_back(c);
      recorded_[c] = 1;
    }
  }

  // A class and an op or stream in one word: an event's closure of `this` and one word fits the
  // std::function's own storage (no allocation per event).
  static std::uint64_t pack(std::size_t c, std::size_t i) { return (std::uint64_t{c} << 32) | i; }
  static std::pair<std::size_t, std::size_t> unpack(std::uint64_t at) { return {at >> 32, at & 0xffffffffU}; }

  void try_start_all(std::size_t c) {
    for (std::size_t stream = 0; stream < states_[c].queue.size(); ++stream)
      try_start(c, stream);
  }

  void try_start(std::size_t c, std::size_t stream) {
    ClassState& s = states_[c];
    if (s.busy[stream] || s.head[stream] >= s.queue[stream].size()) return;
    const OpId op = s.queue[stream][s.head[stream]];
    if (s.remaining[op] != 0 || s.awaiting_host[stream]) return;
    const std::vector<OpId>& syncs = graph_.classes()[c].host_syncs;
    if (options_.host_op_s > 0.0 || options_.step_fixed_s > 0.0 || options_.pipeline_instruction_s > 0.0 ||
        !options_.issue_s.empty() || !syncs.empty()) {
      double issued_s = options_.step_fixed_s + static_cast<double>(op + 1) * options_.host_op_s;
      if (!s.pipeline_instructions.empty())
        issued_s += static_cast<double>(s.pipeline_instructions[op]) * options_.pipeline_instruction_s;
      if (c < options_.issue_s.size() && op < options_.issue_s[c].size())
        issued_s = std::max(issued_s, options_.issue_s[c][op]);
      // The host's last synchronisation point j <= op: op is issued only after every op before j has
      // finished (the host waited there; finish() retries), then (op - j + 1) ops' host time later.
      if (const auto after = std::upper_bound(syncs.begin(), syncs.end(), op); after != syncs.begin()) {
        const auto k = static_cast<std::size_t>(after - syncs.begin()) - 1;
        if (k >= s.next_sync) return;
        const OpId j = syncs[k];
        double resumed_s = s.sync_release_s[k] + static_cast<double>(op - j + 1) * options_.host_op_s;
        if (!s.pipeline_instructions.empty())
          resumed_s += static_cast<double>(s.pipeline_instructions[op] - (j > 0 ? s.pipeline_instructions[j - 1] : 0)) *
                       options_.pipeline_instruction_s;
        issued_s = std::max(issued_s, resumed_s);
      }
      if (issued_s > backend_.now_s()) {
        s.awaiting_host[stream] = 1;
        s.host_wait.emplace_back(backend_.now_s(), issued_s);
        backend_.schedule(issued_s, [this, at = pack(c, stream)] {
          const auto [cls, st] = unpack(at);
          states_[cls].awaiting_host[st] = 0;
          try_start(cls, st);
        });
        return;
      }
    }
    s.busy[stream] = 1;
    s.started_s[stream] = backend_.now_s();
    const OpTable& ops = graph_.classes()[c].ops;
    if (ops.kind(op) == OpKind::compute) {
      const double measured = ops.duration_s(op);
      const KernelClass kernel = ops.kernel(op);
      const double duration = measured > 0.0 ? measured : modelled_kernel_s(c, op);
      const bool tensor = kernel == KernelClass::gemm || kernel == KernelClass::attention;
      (tensor ? s.tensor_s : s.vector_s) += duration;
      if (tensor && low_precision(ops.precision(op))) s.low_precision_tensor_s += duration;
      backend_.schedule(backend_.now_s() + duration, [this, at = pack(c, op)] {
        const auto [cls, o] = unpack(at);
        finish(cls, static_cast<OpId>(o));
      });
    } else if (ops.kind(op) == OpKind::collective) {
      arrive(c, op);
    } else {
      arrive_p2p(c, op);
    }
  }

  // The kernel model's time of compute op `op` of class c, scaled by its kernel class's factor: each
  // distinct kernel (kernel_id, numbered in prepare()) is timed once per replay, at its first call.
  double modelled_kernel_s(std::size_t c, OpId op) {
    double& t = kernel_s_[states_[c].kernel_id[op]];
    if (t < 0.0) {
      const OpTable& ops = graph_.classes()[c].ops;
      const ComputeOp kernel = ops.compute_op(op);
      t = kernel_time(gpu_, kernel).time_s *
          (host_side_op(kernel) ? 1.0 : options_.kernel_time_scale[static_cast<std::size_t>(ops.kernel(op))]);
    }
    return t;
  }

  // A step repeats a few distinct kernels (a layer's, per micro-batch): ops that give the kernel model
  // the same inputs share one id (and one time).
  void number_kernels(const OpTable& ops, ClassState& s) {
    s.kernel_id.assign(ops.size(), 0);
    for (OpId op = 0; op < ops.size(); ++op) {
      if (ops.kind(op) != OpKind::compute || ops.duration_s(op) > 0.0) continue;
      const KernelKey key{ops.name(op).data(),
                          ops.flops(op),
                          ops.bytes(op),
                          ops.m(op),
                          ops.n(op),
                          ops.k(op),
                          ops.batch(op),
                          static_cast<std::uint8_t>(ops.kernel(op)),
                          static_cast<std::uint8_t>(ops.precision(op)),
                          static_cast<std::uint8_t>((ops.causal(op) ? 1 : 0) | (ops.backward(op) ? 2 : 0) |
                                                    (ops.fp8_blockwise(op) ? 4 : 0))};
      const auto [it, inserted] = kernel_ids_.try_emplace(key, static_cast<std::uint32_t>(kernel_s_.size()));
      if (inserted) kernel_s_.push_back(-1.0);  // not timed yet
      s.kernel_id[op] = it->second;
    }
  }

  // The peer of class c's ranks at `offset` in communicator `comm`: (peer class, offset normalized
  // to 0..n-1, n the size of the rank's group). All ranks of a class must see the same peer class
  // (checked on the first rank only: generators and importers build classes that way).
  std::tuple<std::size_t, std::int32_t, std::int32_t> peer_of(std::size_t c, std::uint16_t comm,
                                                              std::int32_t offset) const {
    const int rank = graph_.classes()[c].ranks.front();
    const auto [g, i] = position_[comm][static_cast<std::size_t>(rank)];
    const Communicator& communicator = graph_.communicators()[comm];
    if (g < 0)
      throw SimulationError("rank " + std::to_string(rank) + " sends or receives on communicator '" +
                            communicator.name + "' but belongs to none of its groups");
    const auto& group = communicator.groups[static_cast<std::size_t>(g)];
    const auto n = static_cast<std::int32_t>(group.size());
    const std::int32_t d = ((offset % n) + n) % n;
    const int peer = group[static_cast<std::size_t>((i + d) % n)];
    return {static_cast<std::size_t>(class_of_rank_[static_cast<std::size_t>(peer)]), d, n};
  }

  void arrive_p2p(std::size_t c, OpId op) {
    const OpTable& ops = graph_.classes()[c].ops;
    const std::uint16_t comm = ops.communicator(op);
    const auto [peer, d, n] = peer_of(c, comm, ops.peer_offset(op));
    const bool send = ops.kind(op) == OpKind::send;
    // Key by the sender's offset: a recv from offset e pairs with sends to offset -e.
    const ChannelKey key =
        send ? ChannelKey{comm, c, peer, d, ops.tag(op)} : ChannelKey{comm, peer, c, (n - d) % n, ops.tag(op)};
    Channel& ch = channels_[key];
    if (ops.eager(op)) {
      arrive_eager(key, ch, op, send);
      return;
    }
    (send ? ch.sends : ch.recvs).push_back(op);
    if (ch.sends.empty() || ch.recvs.empty()) return;
    const OpId s_op = ch.sends.front(), r_op = ch.recvs.front();
    ch.sends.pop_front();
    ch.recvs.pop_front();
    launch_p2p(key, s_op, r_op);
  }

  // Eager pairs (Chakra): a send starts its transfer at once; its recv finishes when it has been
  // issued and the message has arrived, whichever is later.
  void arrive_eager(const ChannelKey& key, Channel& ch, OpId op, bool send) {
    const std::size_t receiver = std::get<2>(key);
    if (send) {
      launch_p2p(key, op, std::nullopt);
      return;
    }
    const std::optional<OpId> send_op = meet(ch.delivered, ch.waiting, ch.eager_recvs++, op);
    if (!send_op) return;
    check_pair(key, *send_op, op);
    backend_.schedule(backend_.now_s(), [this, receiver, op] { finish(receiver, op); });
  }

  // An eager send's message has arrived: it finishes its recv when that was issued.
  void deliver_eager(const ChannelKey& key, std::uint64_t k, OpId send_op) {
    Channel& ch = channels_[key];
    const std::optional<OpId> recv_op = meet(ch.waiting, ch.delivered, k, send_op);
    if (!recv_op) return;
    check_pair(key, send_op, *recv_op);
    finish(std::get<2>(key), *recv_op);
  }

  // The k-th eager pair's two sides (an arrived message, an issued recv) meet: the side that comes
  // second takes the first's op out of `others` and returns it; the first parks `op` in `own`.
  static std::optional<OpId> meet(std::map<std::uint64_t, OpId>& others, std::map<std::uint64_t, OpId>& own,
                                  std::uint64_t k, OpId op) {
    const auto it = others.find(k);
    if (it == others.end()) {
      own[k] = op;
      return std::nullopt;
    }
    const OpId other = it->second;
    others.erase(it);
    return other;
  }

  void check_pair(const ChannelKey& key, OpId send_op, OpId recv_op) const {
    const OpTable& sops = graph_.classes()[std::get<1>(key)].ops;
    const OpTable& rops = graph_.classes()[std::get<2>(key)].ops;
    if (sops.bytes(send_op) != rops.bytes(recv_op))
      throw SimulationError("mismatched send/recv on communicator '" + graph_.communicators()[std::get<0>(key)].name +
                            "': '" + std::string(sops.name(send_op)) + "' sends " +
                            std::to_string(sops.bytes(send_op)) + " bytes, '" + std::string(rops.name(recv_op)) +
                            "' receives " + std::to_string(rops.bytes(recv_op)) + " bytes");
  }

  // Every collective of the step planned and every point-to-point channel built (reduce_to_classes).
  void plan_everything() {
    for (std::size_t c = 0; c < graph_.classes().size(); ++c) {
      const OpTable& ops = graph_.classes()[c].ops;
      for (OpId op = 0; op < ops.size(); ++op) {
        const std::uint16_t comm = ops.communicator(op);
        if (ops.kind(op) == OpKind::collective) {
          const Pending p{ops.collective(op), ops.bytes(op), nullptr, {c, op}, {}};
          plan_for(comm, cell_of_class_[comm][c], p);
        } else if (ops.kind(op) == OpKind::send) {
          const auto [peer, d, n] = peer_of(c, comm, ops.peer_offset(op));
          const ChannelKey key{comm, c, peer, d, ops.tag(op)};
          Channel& channel = channels_[key];
          if (channel.latency_s < 0.0) build_channel(key, channel);
        }
      }
    }
  }

  // One simulated transfer per class of identical transfers (traffic_classes.hpp): a backend that
  // counts representatives on link classes (analytical; flow: max-min shares over the class routes,
  // exact where traffic_classes.hpp says and measured elsewhere), routes that do not hash the flow id
  // (d_mod_k: exact on the analytical backend; adaptive, with ReplayOptions::adaptive_traffic_classes, on
  // a backend that can restart: each launch routed against its own load, checked at every start against
  // the load in flight, a channel's message that fails taking a variant: exact, traffic_classes.hpp), no
  // all_to_allv. Every collective and channel of the step is planned and built here (or taken from the
  // memo), before the first event, its batches' routes computed once and refined into classes; the backend then gets
  // one representative per class with its class route. Kept only where it at least halves the transfers; otherwise
  // every transfer is simulated.
  void reduce_to_classes() {
    const bool adaptive = cluster_.routes_by_load();
    if (cluster_.spec().fabric.routing_in_effect() != "d_mod_k" && !(adaptive && options_.adaptive_traffic_classes))
      return;
    if (adaptive && ((options_.memo && options_.memo->diverged) || !(backend_.restart() || fresh_backend_))) return;
    if (!backend_.use_link_classes(nullptr)) return;
    for (const auto& rc : graph_.classes())
      for (OpId op = 0; op < rc.ops.size(); ++op)
        if (rc.ops.kind(op) == OpKind::collective && rc.ops.pair_bytes(op) != nullptr) return;
    ReplayMemo* memo = options_.memo.get();
    const bool memo_channels = memo != nullptr && memo->prepared.graph == &graph_ &&
                               memo->prepared.keeps(cluster_, plans_key()) && !memo->prepared.channels.empty();
    if (memo_channels)
      // The last replay's channels: build_channel reads the graph, the cluster and these inputs only (not
      // the GPU), so they are what it would build again.
      for (const auto& [key, built] : memo->prepared.channels) {
        Channel& channel = channels_[key];
        channel.transfers = built.transfers;
        channel.shares = built.shares;
        channel.latency_s = built.latency_s;
      }
    plan_everything();  // the collectives borrowed from the memo (borrow_plans) are planned already
    if (!memo_channels && memo != nullptr && memo->prepared.graph == &graph_) {
      for (const auto& [key, channel] : channels_)
        memo->prepared.channels.emplace(key, BuiltChannel{channel.transfers, channel.shares, channel.latency_s});
    }
    // The batches the backend will be given: each phase of each group's plan, each channel's message
    // (bytes: the shares of a message).
    // A collective's groups start each phase together, one after the other (run_phase): phase by
    // phase, the groups' batches are one launch (launch_begins: the batches that start one).
    std::vector<const std::vector<Transfer>*> batches;
    std::vector<char> launch_begins;
    for (const auto& [key, planned] : planned_) {
      if (!planned.closed_form_s.empty()) continue;
      for (std::size_t p = 0;; ++p) {
        const std::size_t before = batches.size();
        for (const auto& plan : planned.plans)
          if (p < plan->phases.size()) {
            batches.push_back(&plan->phases[p].transfers);
            launch_begins.push_back(batches.size() == before + 1 ? 1 : 0);
          }
        if (batches.size() == before) break;
      }
    }
    for (const auto& [key, channel] : channels_) {
      batches.push_back(&channel.transfers);
      launch_begins.push_back(1);
    }
    if (memo != nullptr && adaptive && memo->holds(cluster_, batches, launch_begins) &&
        memo->formed_variants < memo->variants.size())
      extend_classes(batches, *memo);
    if (memo == nullptr || !memo->holds(cluster_, batches, launch_begins)) {
      ReplayMemo formed;
      // Variants a memo took before it held any classes are of these batches (replay()'s own memo).
      if (memo != nullptr && memo->cluster == nullptr) formed.variants = std::move(memo->variants);
      form_classes(batches, launch_begins, adaptive, formed);
      if (memo == nullptr)
        memo = &formed;
      else {
        formed.prepared = std::move(memo->prepared);  // what the memo keeps besides the classes
        *memo = std::move(formed);
      }
      if (!memo->reduced) return;
      apply_classes(*memo);
      return;
    }
    if (memo->reduced) apply_classes(*memo);
  }

  // Forms the classes of `batches` into `memo` (reduced: false where they do not apply or save little).
  void form_classes(const std::vector<const std::vector<Transfer>*>& batches, const std::vector<char>& launch_begins,
                    bool adaptive, ReplayMemo& memo) const {
    memo.cluster = &cluster_;
    memo.launch_begins = launch_begins;
    for (const auto* batch : batches) {
      memo.batch_begin.push_back(memo.transfers.size());
      memo.transfers.insert(memo.transfers.end(), batch->begin(), batch->end());
    }
    memo.batch_begin.push_back(memo.transfers.size());
    auto formation = std::make_shared<TrafficClasses>(cluster_, adaptive);
    for (std::size_t b = 0; b < batches.size(); ++b)
      if (!formation->add_batch(*batches[b], launch_begins[b] == 0)) return;
    if (adaptive) memo.formation = formation;
    extend_classes(batches, memo, *formation);
  }

  // Adds the memo's variants not formed yet to its formation, refines, and takes the classes (reduced:
  // false where they do not apply or save little).
  void extend_classes(const std::vector<const std::vector<Transfer>*>& batches, ReplayMemo& memo) const {
    memo.reduced = false;
    if (memo.formation == nullptr) return;
    extend_classes(batches, memo, *memo.formation);
  }
  void extend_classes(const std::vector<const std::vector<Transfer>*>& batches, ReplayMemo& memo,
                      TrafficClasses& formation) const {
    memo.reduced = false;
    for (; memo.formed_variants < memo.variants.size(); ++memo.formed_variants) {
      const ReplayMemo::Variant& v = memo.variants[memo.formed_variants];
      // The earlier variants of its message: one with the same routes lends it its classes.
      std::vector<std::uint32_t> same;
      for (std::size_t j = 0; j < memo.formed_variants; ++j)
        if (memo.variants[j].batch == v.batch) same.push_back(static_cast<std::uint32_t>(batches.size() + j));
      if (!formation.add_batch(*batches[v.batch], false, v.load, same)) return;
    }
    if (!formation.refine()) return;
    if (2 * formation.transfer_classes() > formation.transfers()) return;
    memo.representatives.clear();
    for (std::size_t b = 0; b < batches.size() + memo.variants.size(); ++b)
      memo.representatives.push_back(formation.representatives(b));
    memo.classes = std::make_shared<const LinkClasses>(std::move(formation.link_classes()));
    if (memo.formation != nullptr)
      memo.checks = std::make_shared<const AdaptiveChecks>(std::move(formation.adaptive_checks()));
    memo.reduced = true;
  }

  // The representatives of every batch, in the order of reduce_to_classes; the backend counts them on
  // the link classes.
  void apply_classes(const ReplayMemo& memo) {
    std::size_t batch = 0;
    const auto representatives = [&](const std::vector<Transfer>& transfers) {
      std::vector<Transfer> reps;
      for (const auto& [i, route] : memo.representatives[batch++]) {
        reps.push_back(transfers[i]);
        reps.back().route_class = route;
      }
      return reps;
    };
    for (auto& [key, planned] : planned_) {
      if (!planned.closed_form_s.empty()) continue;
      std::vector<std::shared_ptr<CollectivePlan>> reps;
      for (const auto& plan : planned.plans)
        reps.push_back(std::make_shared<CollectivePlan>(*plan));
      planned.rep_batches.assign(reps.size(), {});
      for (std::size_t p = 0;; ++p) {  // phase by phase, as reduce_to_classes ordered the batches
        bool any = false;
        for (std::size_t g = 0; g < reps.size(); ++g)
          if (p < reps[g]->phases.size()) {
            planned.rep_batches[g].push_back(static_cast<std::uint32_t>(batch));
            reps[g]->phases[p].transfers = representatives(reps[g]->phases[p].transfers);
            any = true;
          }
        if (!any) break;
      }
      planned.rep_plans.assign(reps.begin(), reps.end());
    }
    std::map<std::uint32_t, Channel*> channel_of_batch;
    for (auto& [key, channel] : channels_) {
      channel.rep_batch = static_cast<std::uint32_t>(batch);
      channel_of_batch[channel.rep_batch] = &channel;
      for (const auto& [i, route] : memo.representatives[batch++]) {
        channel.rep_transfers.push_back(channel.transfers[i]);
        channel.rep_transfers.back().route_class = route;
        channel.rep_shares.push_back(channel.shares[i]);
      }
    }
    for (const ReplayMemo::Variant& v : memo.variants) {  // batches after the step's, in order
      Channel& channel = *channel_of_batch.at(v.batch);
      Channel::Variant& cv = channel.variants.emplace_back();
      cv.batch = static_cast<std::uint32_t>(batch);
      for (const auto& [i, route] : memo.representatives[batch++]) {
        cv.transfers.push_back(channel.transfers[i]);
        cv.transfers.back().route_class = route;
        cv.shares.push_back(channel.shares[i]);
      }
    }
    link_classes_ = memo.classes;
    checks_ = memo.checks;
    backend_.use_link_classes(link_classes_.get());
    reduced_ = true;
  }

  // A channel's transfers, one per rank of the sending class (striped over its NICs), their shares of a
  // message and their hop latency: built at its first message.
  void build_channel(const ChannelKey& key, Channel& channel) const {
    const std::uint16_t comm = std::get<0>(key);
    const std::size_t sender = std::get<1>(key);
    const std::int32_t d = std::get<3>(key);
    const Communicator& communicator = graph_.communicators()[comm];
    for (int r : graph_.classes()[sender].ranks) {
      const auto [g, i] = position_[comm][static_cast<std::size_t>(r)];
      if (g < 0) continue;
      const auto& group = communicator.groups[static_cast<std::size_t>(g)];
      const int dst = group[static_cast<std::size_t>((i + d) % static_cast<std::int32_t>(group.size()))];
      channel.transfers.push_back({r, dst, 1.0});
    }
    channel.latency_s = max_hop_latency_s(CollectiveContext{cluster_, options_.network_profile}, channel.transfers);
    stripe_over_nics(cluster_, channel.transfers);
    for (const Transfer& t : channel.transfers)
      channel.shares.push_back(t.bytes);
  }

  // Starts the transfer of a matched pair, or of an eager send alone (no recv_op).
  void launch_p2p(const ChannelKey& key, OpId send_op, std::optional<OpId> recv_op) {
    const auto [comm, sender, receiver, d, tag] = key;
    const OpTable& sops = graph_.classes()[sender].ops;
    const OpTable& rops = graph_.classes()[receiver].ops;
    if (recv_op) check_pair(key, send_op, *recv_op);
    Channel& channel = channels_[key];
    const std::optional<std::uint64_t> eager_k =
        recv_op ? std::nullopt : std::optional<std::uint64_t>(channel.eager_sends++);
    if (channel.latency_s < 0.0) {
      if (reduced_) throw std::logic_error("replay: a channel built after the traffic classes were formed");
      build_channel(key, channel);
    }
    std::vector<Transfer>* chosen = reduced_ ? &channel.rep_transfers : &channel.transfers;
    const std::vector<double>* chosen_shares = reduced_ ? &channel.rep_shares : &channel.shares;
    if (reduced_ && checks_ && !checks_->hold(channel.rep_batch, backend_.link_usage().active())) {
      // The batch's routes would not be the exhaustive replay's now: a variant formed under this load.
      Channel::Variant* variant = nullptr;
      for (auto& v : channel.variants)
        if (variant == nullptr && checks_->hold(v.batch, backend_.link_usage().active())) variant = &v;
      if (variant == nullptr) {
        collect(channel.rep_batch);
      } else {
        chosen = &variant->transfers;
        chosen_shares = &variant->shares;
      }
    }
    std::vector<Transfer>& transfers = *chosen;
    const std::vector<double>& shares = *chosen_shares;
    for (std::size_t i = 0; i < transfers.size(); ++i)
      transfers[i].bytes = sops.bytes(send_op) * shares[i];
    const double latency = channel.latency_s;
    const double now = backend_.now_s();
    ++p2p_pairs_;
    if (recorded_[sender]) slice_flow_[{sender, send_op}] = p2p_pairs_;
    if (recv_op && recorded_[receiver]) slice_flow_[{receiver, *recv_op}] = p2p_pairs_;
    states_[sender].started_s[sops.stream(send_op)] = now;
    if (recv_op) states_[receiver].started_s[rops.stream(*recv_op)] = now;
    double pairs = 0.0;  // the transfers' shares add up to one message per pair
    for (const double share : channel.shares)
      pairs += share;
    p2p_bytes_ += sops.bytes(send_op) * pairs;
    P2PRecord& rec = p2p_[comm];
    ++rec.count;
    rec.bytes += sops.bytes(send_op);
    const std::uint64_t flow_id = next_flow_id_;
    next_flow_id_ += channel.transfers.size();
    transfers_ += channel.transfers.size();
    transfers_simulated_ += transfers.size();
    backend_.set_traffic_label(comm);
    backend_.start_transfers(transfers, flow_id, [this, latency, key, now, send_op, recv_op, eager_k] {
      backend_.schedule(backend_.now_s() + latency, [this, key, now, send_op, recv_op, eager_k] {
        p2p_[std::get<0>(key)].time_s += backend_.now_s() - now;
        finish(std::get<1>(key), send_op);
        if (recv_op) finish(std::get<2>(key), *recv_op);
        if (eager_k) deliver_eager(key, *eager_k, send_op);
      });
    });
  }

  void arrive(std::size_t c, OpId op) {
    const OpTable& ops = graph_.classes()[c].ops;
    const std::uint16_t comm = ops.communicator(op);
    const std::uint32_t seq = states_[c].next_seq[comm]++;
    const int cell = cell_of_class_[comm][c];
    if (cells_[comm][static_cast<std::size_t>(cell)].participants == 1) {  // a cell of one class: no wait
      Pending p{ops.collective(op), ops.bytes(op), ops.pair_bytes(op), {c, op}, {}};
      p.arrived.emplace_back(c, op);
      launch(comm, cell, std::move(p));
      return;
    }
    auto [it, inserted] = pending_.try_emplace({comm, cell, seq});
    Pending& p = it->second;
    const std::vector<double>* pair_bytes = ops.pair_bytes(op);
    if (inserted) {
      p.kind = ops.collective(op);
      p.bytes = ops.bytes(op);
      p.pair_bytes = pair_bytes;
      p.first = {c, op};
    } else if (p.kind != ops.collective(op) || p.bytes != ops.bytes(op) ||
               (p.pair_bytes == nullptr) != (pair_bytes == nullptr) ||
               (pair_bytes != nullptr && *p.pair_bytes != *pair_bytes)) {
      throw SimulationError(
          "mismatched collectives on communicator '" + graph_.communicators()[comm].name + "' (call #" +
          std::to_string(seq) + "): '" + std::string(graph_.classes()[p.first.first].ops.name(p.first.second)) + "' (" +
          to_string(p.kind) + ", " + std::to_string(p.bytes) + " bytes) vs '" + std::string(ops.name(op)) + "' (" +
          to_string(ops.collective(op)) + ", " + std::to_string(ops.bytes(op)) + " bytes)" +
          (p.kind == ops.collective(op) && p.bytes == ops.bytes(op) ? ": different per-pair sizes" : ""));
    }
    p.arrived.emplace_back(c, op);
    if (static_cast<int>(p.arrived.size()) == cells_[comm][static_cast<std::size_t>(cell)].participants) {
      Pending ready = std::move(p);
      pending_.erase(it);
      launch(comm, cell, std::move(ready));
    }
  }

  // All groups of the communicator run the collective concurrently; it completes when all are done.
  // The algorithm for this collective: the communicator's override, else the default; "auto" is
  // resolved by the selector on the first group (all groups of a communicator have the same shape).
  // ("auto" is resolved by plan_collective, which returns the selected plan: see plan_for.)
  const std::string& algorithm_for(std::uint16_t comm) const {
    const Communicator& communicator = graph_.communicators()[comm];
    const auto it = options_.algorithm_by_communicator.find(communicator.name);
    return it != options_.algorithm_by_communicator.end() ? it->second : options_.collective_algorithm;
  }

  // An algorithm this communicator's collective cannot run is a bad option, not a failed simulation:
  // refused naming the option that asked for it (`--algorithm`, or `--algorithm dp` for an override).
  void check_feasible(std::uint16_t comm, const CollectiveContext& ctx, const CollectiveRequest& req) const {
    const std::string& name = algorithm_for(comm);
    if (name == kAutoAlgorithm) return;  // the selector considers only what can run
    const std::string why = collective_infeasible(name, ctx, req);
    if (why.empty()) return;
    const Communicator& communicator = graph_.communicators()[comm];
    const bool override = options_.algorithm_by_communicator.contains(communicator.name);
    throw SpecError(
        override ? "--algorithm " + communicator.name : std::string("--algorithm"), "",
        "communicator '" + communicator.name + "' (" + std::to_string(req.ranks->size()) + " ranks): " + why);
  }

  // The plans of a collective on every group of a cell of `comm`: built once per (communicator, cell,
  // kind, size), as they depend on nothing else, and reused by every later call (a step repeats its
  // collectives).

  // Whether every transfer of `plan` stays on NVLink links of a non-blocking switch (NVSwitch): the
  // switch has full bisection, so only the GPUs' own ports are shared, and the plan's idle-fabric
  // time is exact unless another communicator uses the same GPU ports at the same time (ignored).
  // The same inside one fully connected node without a switch (xgmi_mesh, AMD Instinct): every
  // transfer takes the direct Infinity Fabric link of its pair (a one-link route), so the flow backend
  // would give each link's bytes over its bandwidth, the busiest ending the phase: the closed form.
  // A link there belongs to one pair of GPUs, and two GPUs share a group of at most one of the
  // orthogonal communicators (tp, cp, dp, ...): the closed form is exact unless a collective of the
  // same communicator, or traffic to another node forwarded over the mesh, loads the same link at the
  // same time (ignored; tests/cpp/sim/pipeline_replay_test.cpp compares with the exhaustive replay).
  // An all-to-all (expert parallelism) also qualifies across nodes when no route crosses a link between
  // two fabric switches: its transfers then load only the GPUs' own ports (NVLink, PCIe, NIC and the
  // NIC's cable to its leaf), as DeepEP's rail-local RDMA stage does under one leaf (ReplayOptions::
  // closed_form_edge_all_to_all; its error against the exhaustive replay in workloads/README.md).
  bool inside_switch_domain(const CollectivePlan& plan, bool edge,
                            std::vector<std::pair<int, double>>& link_bytes) const {
    if (!options_.closed_form_inside_nvswitch) return false;
    const std::string& scale_up = cluster_.spec().node.scale_up.type;
    // An edge all-to-all (across nodes) keeps the rule measured on NVSwitch nodes only.
    if (scale_up != "nvswitch" && (scale_up != "xgmi_mesh" || edge)) return false;
    std::map<int, double> bytes;
    std::vector<int> route;
    const auto links = cluster_.links();
    const auto devices = cluster_.devices();
    const auto fabric_switch = [&](int device) {
      const DeviceKind k = devices[static_cast<std::size_t>(device)].kind;
      return k == DeviceKind::leaf_switch || k == DeviceKind::spine_switch || k == DeviceKind::core_switch;
    };
    for (const auto& phase : plan.phases) {
      for (const Transfer& t : phase.transfers) {
        if (t.src_gpu == t.dst_gpu) continue;
        if (!edge && cluster_.node_of_gpu(t.src_gpu) != cluster_.node_of_gpu(t.dst_gpu)) return false;
        route.clear();
        cluster_.route(t.src_gpu, t.dst_gpu, 0, route);
        for (int l : route) {
          const Link& link = links[static_cast<std::size_t>(l)];
          if (edge ? fabric_switch(link.src) && fabric_switch(link.dst) : link.technology != LinkTechnology::nvlink)
            return false;
          bytes[l] += t.bytes;
        }
      }
    }
    link_bytes.assign(bytes.begin(), bytes.end());
    return true;
  }
  // The busy time of each link of a closed-form plan on an xGMI mesh node, as the flow backend counts
  // it: a phase's transfers take one link each (their pair's), so a link carrying b bytes alone is busy
  // b over its bandwidth; pipelined transfers of equal (whole) bytes move as one unit (flow_backend.cpp)
  // and keep each of its links busy for the unit's time, its busiest link's. Exact where the units and
  // the other transfers of a phase share no link (their largest time otherwise).
  std::vector<std::pair<int, double>> mesh_link_busy_s(const CollectiveContext& ctx, const CollectivePlan& plan) const {
    std::map<int, double> busy;
    std::map<int, double> single_bytes;                         // link -> bytes of transfers of their own
    std::map<std::uint64_t, std::map<int, double>> unit_bytes;  // unit (whole bytes) -> link -> bytes
    std::vector<int> route;
    const auto links = cluster_.links();
    const auto seconds = [&](int l, double bytes) {
      return bytes / ctx.profile.effective_bandwidth_Bps(links[static_cast<std::size_t>(l)]);
    };
    for (const auto& phase : plan.phases) {
      single_bytes.clear();
      unit_bytes.clear();
      for (const Transfer& t : phase.transfers) {
        if (t.src_gpu == t.dst_gpu || t.bytes <= 0.0) continue;
        route.clear();
        cluster_.route(t.src_gpu, t.dst_gpu, 0, route);
        auto& target = t.pipelined ? unit_bytes[static_cast<std::uint64_t>(t.bytes + 0.5)] : single_bytes;
        for (int l : route)
          target[l] += t.bytes;
      }
      std::map<int, double> phase_busy;
      for (const auto& [l, bytes] : single_bytes)
        phase_busy[l] = seconds(l, bytes);
      for (const auto& [unit, by_link] : unit_bytes) {
        double unit_s = 0.0;
        for (const auto& [l, bytes] : by_link)
          unit_s = std::max(unit_s, seconds(l, bytes));
        for (const auto& [l, bytes] : by_link)
          phase_busy[l] = std::max(phase_busy[l], unit_s);
      }
      for (const auto& [l, s] : phase_busy)
        busy[l] += s;
    }
    return {busy.begin(), busy.end()};
  }
  PlannedCollective& plan_for(std::uint16_t comm, int cell, const Pending& p) {
    // An all_to_allv is planned per op that carries it (keys stay deterministic: no addresses).
    const std::pair<std::size_t, OpId> matrix_of =
        p.pair_bytes != nullptr ? p.first : std::pair<std::size_t, OpId>{graph_.classes().size(), 0};
    const auto key = std::make_tuple(comm, cell, p.kind, p.bytes, matrix_of);
    auto it = planned_.find(key);
    if (it != planned_.end()) return it->second;
    PlannedCollective planned;
    const CollectiveContext ctx{cluster_, profile_for(comm), &link_scratch_};
    const bool mesh = cluster_.spec().node.scale_up.type == "xgmi_mesh";
    CollectivePlan delivered;
    const auto delivered_bytes = [&](const CollectivePlan& plan) -> const CollectivePlan& {
      delivered = plan;
      for (auto& phase : delivered.phases)
        for (Transfer& t : phase.transfers)
          t.bytes = backend_.delivered_bytes(t.bytes);
      return delivered;
    };
    const bool expert =
        p.kind == CollectiveKind::all_to_all && graph_.communicators()[comm].name == options_.expert_communicator;
    const bool edge = expert && options_.closed_form_edge_all_to_all;
    for (std::size_t g : cells_[comm][static_cast<std::size_t>(cell)].groups) {
      const auto& group = graph_.communicators()[comm].groups[g];
      CollectiveRequest req{p.kind, &group, p.bytes, p.pair_bytes};
      if (expert && options_.expert_routing.experts > 0) req.routing = &options_.expert_routing;
      if (planned.algorithm.empty()) check_feasible(comm, ctx, req);
      // The first group's plan names the algorithm ("auto": the selector's choice, planned once);
      // the other groups of the communicator have the same shape and use the same algorithm.
      CollectivePlan plan =
          plan_collective(planned.algorithm.empty() ? algorithm_for(comm) : planned.algorithm, ctx, req);
      if (graph_.communicators()[comm].userbuffers) plan.protocol = "userbuffers";
      planned.plans.push_back(std::make_shared<const CollectivePlan>(std::move(plan)));
      if (planned.algorithm.empty()) planned.algorithm = planned.plans.back()->algorithm;
      std::vector<std::pair<int, double>> link_bytes;
      // On a mesh the closed form stands for the backend's replay: it times the bytes the backend
      // would move (NetworkBackend::delivered_bytes).
      const CollectivePlan& timed = mesh ? delivered_bytes(*planned.plans.back()) : *planned.plans.back();
      if (inside_switch_domain(timed, edge, link_bytes)) {
        planned.closed_form_s.push_back(idle_fabric_time_s(ctx, timed));
        planned.link_bytes.push_back(std::move(link_bytes));
        if (mesh) planned.link_busy_s.push_back(mesh_link_busy_s(ctx, timed));
      }
    }
    // All or none; an edge all-to-all's groups on links of their own (each group's time is its own).
    std::set<int> group_links;
    std::size_t group_link_count = 0;
    for (const auto& lb : planned.link_bytes) {
      group_link_count += lb.size();
      for (const auto& [l, b] : lb)
        group_links.insert(l);
    }
    if (planned.closed_form_s.size() != planned.plans.size() || (edge && group_links.size() != group_link_count)) {
      planned.closed_form_s.clear();
      planned.link_bytes.clear();
      planned.link_busy_s.clear();
    }
    for (const double t : planned.closed_form_s)
      planned.closed_form_max_s = std::max(planned.closed_form_max_s, t);
    if (!planned.closed_form_s.empty() && mesh)
      for (const auto& plan : planned.plans)
        for (const auto& phase : plan->phases)
          planned.closed_form_flow_ids += phase.transfers.size();
    return planned_.emplace(key, std::move(planned)).first->second;
  }

  void launch(std::uint16_t comm, int cell, Pending p) {
    auto record_index = records_.size();
    CollectiveRecord rec;
    rec.communicator = comm;
    rec.kind = p.kind;
    rec.bytes = p.bytes;
    rec.start_s = backend_.now_s();
    for (const auto& [cls, op] : p.arrived)  // communication starts now; waiting before is idle time
      states_[cls].started_s[graph_.classes()[cls].ops.stream(op)] = rec.start_s;
    if (!recorded_classes_.empty())
      for (const auto& [cls, op] : p.arrived)
        if (recorded_[cls]) slice_algorithm_[{cls, op}] = plan_for(comm, cell, p).algorithm;
    PlannedCollective& planned = plan_for(comm, cell, p);
    const std::string& algorithm = planned.algorithm;
    const auto& plans = planned.plans;
    rec.algorithm = algorithm;
    rec.channels = plans.empty() ? 1 : plans.front()->channels;
    rec.protocol = plans.empty() ? std::string("Simple") : plans.front()->protocol;
    records_.push_back(std::move(rec));
    if (!planned.closed_form_s.empty()) {
      ++planned.runs;  // its link bytes are counted once per run in result()
      next_flow_id_ += planned.closed_form_flow_ids;
      // The groups end at their closed-form times and the collective with the last of them. One
      // event at that time stands for the groups' events: theirs were scheduled one after the other
      // with nothing in between, so every other event orders against this one as against the last
      // group's, and the others did nothing but count down.
      backend_.schedule(backend_.now_s() + planned.closed_form_max_s,
                        [this, members = std::move(p.arrived), record_index] {
                          records_[record_index].end_s = backend_.now_s();
                          for (const auto& [cls, op] : members)
                            finish(cls, op);
                        });
      return;
    }
    auto groups_left = std::make_shared<std::size_t>(cells_[comm][static_cast<std::size_t>(cell)].groups.size());
    auto members = std::make_shared<std::vector<std::pair<std::size_t, OpId>>>(std::move(p.arrived));
    auto on_group_done = [this, groups_left, members, record_index] {
      if (--*groups_left != 0) return;
      records_[record_index].end_s = backend_.now_s();
      for (const auto& [cls, op] : *members)
        finish(cls, op);
    };
    if (reduced_ && planned.rep_plans.size() != plans.size())
      throw std::logic_error("replay: a collective planned after the traffic classes were formed");
    for (std::size_t g = 0; g < plans.size(); ++g)
      run_phase(comm, plans[g], reduced_ ? planned.rep_plans[g] : nullptr, reduced_ ? &planned.rep_batches[g] : nullptr,
                0, on_group_done);
  }

  // Under adaptive routing, whether the classes' routes of batch `batch` are those the exhaustive replay
  // takes now (AdaptiveChecks); where not, the replay starts over without classes (replay()).
  // A collective's phase: no variant. Failing while the replay is exact: every transfer is replayed
  // (replay()); after a channel's failure (collect): the variants collected so far.
  void check_adaptive_choices(std::uint32_t batch) {
    if (checks_ && !checks_->hold(batch, backend_.link_usage().active())) throw std::move(collected_);
  }
  // A channel's batch `batch` failed its check, and none of its variants holds: the load in flight now,
  // for a variant routed against it. The replay goes on (no longer exact: its result is not used) to
  // collect the next ones at once: a variant formed under any load is used only where its check
  // holds, so one formed under an inexact load is never wrong, at worst unused.
  void collect(std::uint32_t batch) {
    if (collected_.variants.size() >= k_variants_per_replay) throw std::move(collected_);
    ReplayMemo::Variant v;
    v.batch = batch;
    const auto active = backend_.link_usage().active();  // on canonical links: each link of a class carries it
    for (std::size_t l = 0; l < link_classes_->canonical.size(); ++l)
      if (const int c = link_classes_->canonical[l]; c >= 0 && active[static_cast<std::size_t>(c)] != 0)
        v.load.emplace_back(static_cast<int>(l), active[static_cast<std::size_t>(c)]);
    for (const auto& w : collected_.variants)
      if (w.batch == v.batch && w.load == v.load) return;
    collected_.variants.push_back(std::move(v));
  }

  // Phase by phase: the transfers, then the phase's latency; after the last, the per-call latency.
  // `rep`: the plan with its representatives only (reduce_to_classes; null: simulate every transfer).
  void run_phase(std::uint16_t comm, std::shared_ptr<const CollectivePlan> plan,
                 std::shared_ptr<const CollectivePlan> rep, const std::vector<std::uint32_t>* rep_batches,
                 std::size_t phase, std::function<void()> done) {
    if (phase == plan->phases.size()) {
      backend_.schedule(backend_.now_s() + profile_for(comm).collective_latency_s.value, std::move(done));
      return;
    }
    const auto& all = plan->phases[phase].transfers;
    const auto& transfers = rep ? rep->phases[phase].transfers : all;
    const std::uint64_t flow_id = next_flow_id_;
    next_flow_id_ += all.size();
    transfers_ += all.size();
    transfers_simulated_ += transfers.size();
    if (rep) check_adaptive_choices((*rep_batches)[phase]);
    backend_.set_traffic_label(comm);
    backend_.start_transfers(
        transfers, flow_id,
        [this, comm, plan, rep = std::move(rep), rep_batches, phase, done = std::move(done)]() mutable {
          backend_.schedule(backend_.now_s() + plan->phases[phase].latency_s,
                            [this, comm, plan, rep, rep_batches, phase, done = std::move(done)]() mutable {
                              run_phase(comm, plan, rep, rep_batches, phase + 1, std::move(done));
                            });
        });
  }

  void finish(std::size_t c, OpId op) {
    ClassState& s = states_[c];
    const OpTable& ops = graph_.classes()[c].ops;
    const std::size_t stream = ops.stream(op);
    const double now = backend_.now_s();
    (ops.kind(op) == OpKind::compute ? s.compute : s.communication).emplace_back(s.started_s[stream], now);
    if (recorded_[c]) record_slice(c, op, s.started_s[stream], now);
    s.busy[stream] = 0;
    ++s.head[stream];
    ++s.finished;
    s.finish_s = now;
    if (!s.done.empty()) {  // RankClass::host_syncs: the points every op before which has now finished
      s.done[op] = 1;
      while (s.done_prefix < s.done.size() && s.done[s.done_prefix])
        ++s.done_prefix;
      const std::vector<OpId>& syncs = graph_.classes()[c].host_syncs;
      for (; s.next_sync < syncs.size() && syncs[s.next_sync] <= s.done_prefix; ++s.next_sync)
        s.sync_release_s[s.next_sync] = now;
    }
    for (std::uint32_t i = s.succ_begin[op]; i < s.succ_begin[op + 1]; ++i)
      --s.remaining[s.succ[i]];
    try_start_all(c);
  }

  void record_slice(std::size_t c, OpId op, double start, double end) {
    TimelineSlice slice;
    slice.rank_class = c;
    slice.op = op;
    slice.stream = graph_.classes()[c].ops.stream(op);
    slice.start_s = start;
    slice.end_s = end;
    if (auto it = slice_algorithm_.find({c, op}); it != slice_algorithm_.end()) {
      slice.algorithm = std::move(it->second);
      slice_algorithm_.erase(it);
    }
    if (auto it = slice_flow_.find({c, op}); it != slice_flow_.end()) {
      slice.flow = it->second;
      slice_flow_.erase(it);
    }
    timeline_.push_back(std::move(slice));
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
        if (s.busy[stream] && rc.ops.kind(op) != OpKind::compute && rc.ops.kind(op) != OpKind::collective) {
          waits += ": " + std::string(to_string(rc.ops.kind(op))) + " on '" +
                   graph_.communicators()[rc.ops.communicator(op)].name + "' (peer offset " +
                   std::to_string(rc.ops.peer_offset(op)) + ", tag " + std::to_string(rc.ops.tag(op)) +
                   ") that the peer never matches";
        } else if (s.busy[stream] && rc.ops.kind(op) == OpKind::collective) {
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
      t.communication_s = total_length(comm);
      t.tensor_s = s.tensor_s;
      t.low_precision_tensor_s = s.low_precision_tensor_s;
      t.vector_s = s.vector_s;
      t.idle_s = std::max(0.0, t.finish_s - t.compute_s - t.exposed_communication_s);
      if (!s.host_wait.empty()) {
        std::vector<Interval> busy = compute;
        busy.insert(busy.end(), comm.begin(), comm.end());
        const auto host = merge_intervals(std::move(s.host_wait));
        const double waiting = total_length(host) - overlap_length(host, merge_intervals(std::move(busy)));
        t.host_wait_s = std::clamp(waiting, 0.0, t.idle_s);
        t.idle_s -= t.host_wait_s;
      }
      if (c == 0 || t.finish_s > r.step_time_s) {
        r.step_time_s = t.finish_s;
        r.critical_class = c;
        critical_compute = std::move(compute);
      }
    }
    for (auto& rec : records_)
      rec.exposed_s = (rec.end_s - rec.start_s) - overlap_with(rec.start_s, rec.end_s, critical_compute);
    r.collectives = std::move(records_);
    // Backend traffic plus the closed-form collectives' (their links are NVLink ports of switch
    // domains or xGMI links; busy times add up, an upper bound where both kinds overlapped on one link).
    r.link_bytes = backend_.link_usage().bytes();
    r.link_busy_s = backend_.link_usage().busy_s();
    r.link_bytes_by_communicator = backend_.link_usage().bytes_by_label();
    if (reduced_) {  // every link of a class carried what its canonical link did
      for (std::size_t l = 0; l < r.link_bytes.size(); ++l) {
        const int c = link_classes_->canonical[l];
        if (c < 0 || static_cast<std::size_t>(c) == l) continue;
        const auto ci = static_cast<std::size_t>(c);
        r.link_bytes[l] = r.link_bytes[ci];
        r.link_busy_s[l] = r.link_busy_s[ci];
        for (auto& by : r.link_bytes_by_communicator)
          if (!by.empty()) by[l] = by[ci];
      }
    }
    r.transfers_simulated = transfers_simulated_;
    for (const auto& [key, planned] : planned_) {
      const auto runs = static_cast<double>(planned.runs);
      for (std::size_t i = 0; i < planned.link_bytes.size(); ++i) {
        if (!planned.link_busy_s.empty())
          for (const auto& [link, busy_s] : planned.link_busy_s[i])
            r.link_busy_s[static_cast<std::size_t>(link)] += runs * busy_s;
        for (const auto& [link, bytes] : planned.link_bytes[i]) {
          const auto l = static_cast<std::size_t>(link);
          r.link_bytes[l] += runs * bytes;
          if (planned.link_busy_s.empty()) r.link_busy_s[l] += runs * planned.closed_form_s[i];
          auto& by = r.link_bytes_by_communicator;
          const std::size_t comm = std::get<0>(key);
          if (by.size() <= comm) by.resize(comm + 1);
          if (by[comm].empty()) by[comm].assign(r.link_bytes.size(), 0.0);
          by[comm][l] += runs * bytes;
        }
      }
    }
    r.transfers = transfers_;
    r.p2p_bytes = p2p_bytes_;
    r.p2p = std::move(p2p_);
    r.timeline = std::move(timeline_);
    r.timeline_classes = recorded_classes_;
    return r;
  }

  // The network profile a communicator's collectives are planned and timed with: the options' (NCCL),
  // or for userbuffers communicators (Communicator::userbuffers) the same links without NCCL's per-call
  // launch latency and protocol latencies: a userbuffers chunk is a copy into a peer's mapped buffer
  // and a flag (Transformer Engine comm_gemm_overlap), not an NCCL kernel.
  static NetworkProfile userbuffers_profile(NetworkProfile p) {
    p.collective_latency_s.value = 0.0;
    p.nccl_protocols = false;
    return p;
  }
  const NetworkProfile& profile_for(std::uint16_t comm) const {
    return graph_.communicators()[comm].userbuffers ? userbuffers_profile_ : options_.network_profile;
  }

  const ExecutionGraph& graph_;
  const Cluster& cluster_;
  const GpuSpec& gpu_;
  NetworkBackend& backend_;
  const ReplayOptions& options_;
  const bool fresh_backend_;
  const NetworkProfile userbuffers_profile_;
  struct Cell {
    int participants = 0;             // classes that must arrive
    std::vector<std::size_t> groups;  // indices into the communicator's groups
  };
  std::vector<std::vector<int>> cell_of_class_;  // [communicator][class] -> cell (-1: not a member)
  std::vector<std::vector<Cell>> cells_;         // [communicator][cell]
  std::vector<int> class_of_rank_;
  std::vector<std::vector<std::pair<int, int>>> position_;  // [communicator][rank] -> (group, position)
  std::map<ChannelKey, Channel> channels_;
  std::vector<char> recorded_;  // per class: record its ops for the timeline
  std::vector<std::size_t> recorded_classes_;
  std::vector<TimelineSlice> timeline_;
  std::map<std::pair<std::size_t, OpId>, std::string> slice_algorithm_;
  std::map<std::pair<std::size_t, OpId>, std::uint64_t> slice_flow_;
  std::uint64_t p2p_pairs_ = 0;
  double p2p_bytes_ = 0.0;
  std::map<std::uint16_t, P2PRecord> p2p_;
  std::vector<ClassState> states_;
  std::map<std::tuple<std::uint16_t, int, std::uint32_t>, Pending> pending_;
  std::map<PlannedKey, PlannedCollective> planned_;
  std::vector<CollectiveRecord> records_;
  std::vector<std::size_t> collective_calls_;  // while preparing: [class x communicators + comm] -> calls
  // What the kernel model reads of a compute op (the name by its interned text: names of one table
  // are stored once, and a key never outlives the graph).
  struct KernelKey {
    const char* name;
    double flops, bytes;
    std::uint32_t m, n, k, batch;
    std::uint8_t kernel, precision, attention;
    bool operator==(const KernelKey&) const = default;
  };
  struct KernelKeyHash {
    std::size_t operator()(const KernelKey& k) const {
      std::size_t h = std::hash<const void*>{}(k.name);
      auto mix = [&h](std::uint64_t v) {
        h ^= std::hash<std::uint64_t>{}(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
      };
      mix(std::bit_cast<std::uint64_t>(k.flops));
      mix(std::bit_cast<std::uint64_t>(k.bytes));
      mix((std::uint64_t{k.m} << 32) | k.n);
      mix((std::uint64_t{k.k} << 32) | k.batch);
      mix((std::uint64_t{k.kernel} << 16) | (std::uint64_t{k.precision} << 8) | k.attention);
      return h;
    }
  };
  std::unordered_map<KernelKey, std::uint32_t, KernelKeyHash> kernel_ids_;  // while numbering (prepare)
  std::vector<double> kernel_s_;          // per kernel id: its scaled time, < 0 until its first call
  std::vector<std::size_t> compute_ops_;  // per class: its compute ops
  std::size_t launches_ = 0;              // collective records (records_ reserved)
  LinkLoadScratch link_scratch_;          // lent to every plan's idle-fabric rating (plan_for)
  // reduce_to_classes: whether the backend gets representatives, and their link classes.
  bool reduced_ = false;
  std::shared_ptr<const LinkClasses> link_classes_;
  std::shared_ptr<const AdaptiveChecks> checks_;  // adaptive routing: checked at each start
  ClassesDiverged collected_;                     // checks failed so far (collect)
  std::size_t transfers_simulated_ = 0;
  std::uint64_t next_flow_id_ = 0;
  std::size_t transfers_ = 0;
};

}  // namespace

namespace {

// Whether the replay's classes are under adaptive routing, where a check failing at a start makes the
// replay start over (reduce_to_classes applies them only where the backend can: replay() below).
bool checks_may_start_over(const Cluster& cluster, const ReplayOptions& options) {
  return cluster.routes_by_load() && options.traffic_classes && options.adaptive_traffic_classes &&
         !(options.memo && options.memo->diverged);
}

// A child's attempt (replay() on fresh backends), tagged: 'R' its result (replay_result_wire), 'V' the
// variants of the checks that failed, each as its batch, its loaded links' count, then (link, load) pairs.
constexpr char k_attempt_result = 'R';
constexpr char k_attempt_variants = 'V';

std::string encode_variants(const std::vector<ReplayMemo::Variant>& variants) {
  WireWriter wire;
  wire.put(static_cast<std::uint64_t>(variants.size()));
  for (const ReplayMemo::Variant& v : variants) {
    wire.put(v.batch);
    wire.put(static_cast<std::uint64_t>(v.load.size()));
    for (const auto& [link, load] : v.load) {
      wire.put(link);
      wire.put(load);
    }
  }
  return std::string(1, k_attempt_variants) + wire.take();
}

ClassesDiverged decode_variants(std::string_view bytes) {
  WireReader wire(bytes);
  ClassesDiverged diverged;
  diverged.variants.resize(static_cast<std::size_t>(wire.get<std::uint64_t>()));
  for (ReplayMemo::Variant& v : diverged.variants) {
    wire.get(v.batch);
    v.load.resize(static_cast<std::size_t>(wire.get<std::uint64_t>()));
    for (auto& [link, load] : v.load) {
      wire.get(link);
      wire.get(load);
    }
  }
  if (!wire.done()) throw SimulationError("a replay's failed checks: bytes left after the last variant");
  return diverged;
}

}  // namespace

ReplayResult replay(const ExecutionGraph& graph, const Cluster& cluster, const GpuSpec& gpu, NetworkBackend& backend,
                    const ReplayOptions& options) {
  return replay(graph, cluster, gpu, backend, NetworkBackendMaker{}, options);
}

ReplayResult replay(const ExecutionGraph& graph, const Cluster& cluster, const GpuSpec& gpu, NetworkBackend& backend,
                    const NetworkBackendMaker& fresh, const ReplayOptions& options) {
  // A batch's adaptive choices under the load in flight may not be the classes' (traffic_classes.hpp):
  // the replay starts over, with a variant of the message formed under that load (a memo of its own
  // when the caller gave none), or, for a collective's phase or past k_max_variants or k_max_restarts,
  // with every transfer. On `backend` where it can restart (analytical); where it cannot (flow: SimGrid
  // runs once per process) and `fresh` makes backends, each attempt runs in a child process on a
  // backend of its own, which sends back its result or the variants of its failed checks (the memo's
  // classes and variants, those of the analytical clock replays in simulate, seed the first attempt;
  // what a child adds to its copy of the memo is formed again by the next one). Without `fresh` such
  // a backend replays every transfer under adaptive routing.
  ReplayOptions own;
  const ReplayOptions* current = &options;
  const bool in_children = fresh && !backend.restart() && checks_may_start_over(cluster, options);
  for (int restarts = 0;; ++restarts) {
    ClassesDiverged diverged;
    if (in_children) {
      const std::string outcome = run_in_child_process([&] {
        const std::unique_ptr<NetworkBackend> attempt = fresh();
        try {
          Replay r(graph, cluster, gpu, *attempt, *current, true);
          return std::string(1, k_attempt_result) + encode_replay_result(r.run());
        } catch (const ClassesDiverged& e) {
          return encode_variants(e.variants);
        }
      });
      const std::string_view payload = std::string_view(outcome).substr(1);
      if (outcome.front() == k_attempt_result) return decode_replay_result(payload);
      diverged = decode_variants(payload);
    } else {
      try {
        Replay r(graph, cluster, gpu, backend, *current);
        return r.run();
      } catch (ClassesDiverged& e) {
        backend.restart();
        diverged = std::move(e);
      }
    }
    if (current->memo == nullptr) {
      own = options;
      own.memo = make_replay_memo();
      current = &own;
    }
    ReplayMemo& memo = *current->memo;
    if (diverged.variants.empty() || memo.diverged ||
        memo.variants.size() + diverged.variants.size() > k_max_variants || restarts >= k_max_restarts) {
      // Every transfer, on `backend` (in this process: the children had SimGrid's engine, not it).
      memo.diverged = true;
      ReplayOptions every_transfer = *current;
      every_transfer.adaptive_traffic_classes = false;
      Replay r(graph, cluster, gpu, backend, every_transfer);
      return r.run();
    }
    for (auto& v : diverged.variants)
      memo.variants.push_back(std::move(v));
  }
}

}  // namespace clustersim
