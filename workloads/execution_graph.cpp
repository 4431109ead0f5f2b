#include "workloads/execution_graph.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "sim/core/error.hpp"

namespace clustersim {

const char* to_string(OpKind k) {
  static constexpr const char* kNames[] = {"compute", "collective", "send", "recv"};
  return kNames[static_cast<int>(k)];
}

const char* to_string(KernelClass k) {
  static constexpr const char* kNames[] = {"gemm",      "attention", "elementwise", "normalization",
                                           "optimizer", "embedding", "loss"};
  return kNames[static_cast<int>(k)];
}

const char* to_string(CollectiveKind k) {
  static constexpr const char* kNames[] = {"all_reduce", "all_gather", "reduce_scatter",
                                           "all_to_all", "broadcast",  "reduce"};
  return kNames[static_cast<int>(k)];
}

std::uint32_t OpTable::intern(std::string_view name) {
  // Few distinct names (a handful per layer kind): a linear scan from the back hits recent ones first.
  for (std::size_t i = names_.size(); i-- > 0;) {
    if (names_[i] == name) return static_cast<std::uint32_t>(i);
  }
  names_.emplace_back(name);
  return static_cast<std::uint32_t>(names_.size() - 1);
}

OpId OpTable::push(OpKind kind, std::uint8_t stream, std::string_view name, std::span<const OpId> deps) {
  const auto id = static_cast<OpId>(kind_.size());
  for (OpId d : deps) {
    if (d >= id) throw SimulationError("op '" + std::string(name) + "' depends on a later op");
  }
  kind_.push_back(kind);
  stream_.push_back(stream);
  name_.push_back(intern(name));
  deps_.insert(deps_.end(), deps.begin(), deps.end());
  dep_begin_.push_back(static_cast<std::uint32_t>(deps_.size()));
  return id;
}

OpId OpTable::add_compute(const ComputeOp& op, std::span<const OpId> deps) {
  if (!(op.duration_s >= 0.0) || op.duration_s == std::numeric_limits<double>::infinity())
    throw SimulationError("op '" + std::string(op.name) + "': duration_s must be a finite number >= 0");
  const OpId id = push(OpKind::compute, op.stream, op.name, deps);
  if (op.duration_s > 0.0) {
    duration_s_.resize(static_cast<std::size_t>(id) + 1, 0.0);
    duration_s_[id] = op.duration_s;
  }
  kernel_.push_back(op.kernel);
  precision_.push_back(op.precision);
  flops_.push_back(op.flops);
  bytes_.push_back(op.bytes);
  m_.push_back(op.m);
  n_.push_back(op.n);
  k_.push_back(op.k);
  batch_.push_back(op.batch);
  attention_.push_back(static_cast<std::uint8_t>((op.causal ? kCausal : 0) | (op.backward ? kBackward : 0) |
                                                 (op.fp8_blockwise ? kFp8Blockwise : 0)));
  collective_.push_back(CollectiveKind::all_reduce);
  communicator_.push_back(0);
  return id;
}

OpId OpTable::add_collective(const CollectiveOp& op, std::span<const OpId> deps) {
  if (!op.pair_bytes.empty()) {
    if (op.collective != CollectiveKind::all_to_all)
      throw SimulationError("op '" + std::string(op.name) + "': per-pair sizes are for all_to_all only, not " +
                            to_string(op.collective));
    for (double b : op.pair_bytes)
      if (!(b >= 0.0) || b == std::numeric_limits<double>::infinity())
        throw SimulationError("op '" + std::string(op.name) + "': per-pair sizes must be finite numbers >= 0");
  }
  const OpId id = push(OpKind::collective, op.stream, op.name, deps);
  if (!op.pair_bytes.empty()) {
    pair_bytes_.emplace_back(op.pair_bytes.begin(), op.pair_bytes.end());
    pair_bytes_slot_.resize(static_cast<std::size_t>(id) + 1, 0);
    pair_bytes_slot_[id] = static_cast<std::uint32_t>(pair_bytes_.size());
  }
  kernel_.push_back(KernelClass::elementwise);
  precision_.push_back(Precision::bf16);
  flops_.push_back(0.0);
  bytes_.push_back(op.bytes);
  m_.push_back(0);
  n_.push_back(0);
  k_.push_back(0);
  batch_.push_back(0);
  attention_.push_back(0);
  collective_.push_back(op.collective);
  communicator_.push_back(op.communicator);
  return id;
}

OpId OpTable::add_p2p(const P2POp& op, std::span<const OpId> deps) {
  if (op.kind != OpKind::send && op.kind != OpKind::recv)
    throw SimulationError("op '" + std::string(op.name) + "': a point-to-point op is a send or a recv");
  const OpId id = push(op.kind, op.stream, op.name, deps);
  kernel_.push_back(KernelClass::elementwise);
  precision_.push_back(Precision::bf16);
  flops_.push_back(0.0);
  bytes_.push_back(op.bytes);
  m_.push_back(static_cast<std::uint32_t>(op.peer_offset));  // stored in the (unused) GEMM m field
  n_.push_back(op.tag);                                      // and n field
  k_.push_back(op.eager ? 1u : 0u);                          // and k field
  batch_.push_back(0);
  attention_.push_back(0);
  collective_.push_back(CollectiveKind::all_reduce);
  communicator_.push_back(op.communicator);
  return id;
}

ComputeOp OpTable::compute_op(OpId i) const {
  ComputeOp op;
  op.name = name(i);
  op.kernel = kernel_[i];
  op.precision = precision_[i];
  op.flops = flops_[i];
  op.bytes = bytes_[i];
  op.m = m_[i];
  op.n = n_[i];
  op.k = k_[i];
  op.batch = batch_[i];
  op.causal = causal(i);
  op.backward = backward(i);
  op.fp8_blockwise = fp8_blockwise(i);
  op.stream = stream_[i];
  op.duration_s = duration_s(i);
  return op;
}

std::size_t OpTable::memory_bytes() const {
  const std::size_t per_op = sizeof(OpKind) + sizeof(std::uint8_t) + sizeof(std::uint32_t) * 6 + sizeof(KernelClass) +
                             sizeof(std::uint8_t) + sizeof(Precision) + sizeof(double) * 2 + sizeof(CollectiveKind) +
                             sizeof(std::uint16_t);
  std::size_t names = 0;
  for (const auto& n : names_)
    names += n.capacity() + sizeof(std::string);
  std::size_t matrices = pair_bytes_slot_.capacity() * sizeof(std::uint32_t);
  for (const auto& m : pair_bytes_)
    matrices += m.capacity() * sizeof(double) + sizeof(m);
  return per_op * size() + deps_.size() * sizeof(OpId) + duration_s_.capacity() * sizeof(double) + names + matrices;
}

std::uint16_t ExecutionGraph::add_communicator(Communicator c) {
  communicators_.push_back(std::move(c));
  return static_cast<std::uint16_t>(communicators_.size() - 1);
}

RankClass& ExecutionGraph::add_class(std::string name, std::vector<int> ranks) {
  classes_.push_back(RankClass{std::move(name), std::move(ranks), OpTable{}, {}});
  return classes_.back();
}

std::size_t ExecutionGraph::op_count() const {
  std::size_t n = 0;
  for (const auto& c : classes_)
    n += c.ops.size();
  return n;
}

void ExecutionGraph::validate() const {
  std::vector<int> owner(static_cast<std::size_t>(world_size_), -1);
  for (std::size_t c = 0; c < classes_.size(); ++c) {
    for (int r : classes_[c].ranks) {
      if (r < 0 || r >= world_size_)
        throw SimulationError("rank class '" + classes_[c].name + "' has rank " + std::to_string(r) + " outside 0.." +
                              std::to_string(world_size_ - 1));
      if (owner[static_cast<std::size_t>(r)] != -1)
        throw SimulationError("rank " + std::to_string(r) + " belongs to two rank classes");
      owner[static_cast<std::size_t>(r)] = static_cast<int>(c);
    }
    const OpTable& ops = classes_[c].ops;
    const std::vector<OpId>& syncs = classes_[c].host_syncs;
    for (std::size_t k = 0; k < syncs.size(); ++k)
      if (syncs[k] >= ops.size() || (k > 0 && syncs[k] <= syncs[k - 1]))
        throw SimulationError("rank class '" + classes_[c].name +
                              "': host synchronisation points must be ascending op ids below " +
                              std::to_string(ops.size()));
    for (OpId i = 0; i < ops.size(); ++i) {
      if (ops.kind(i) != OpKind::compute && ops.communicator(i) >= communicators_.size())
        throw SimulationError("op '" + std::string(ops.name(i)) + "' uses an unknown communicator");
      if (const std::vector<double>* m = ops.pair_bytes(i)) {
        for (const auto& group : communicators_[ops.communicator(i)].groups)
          if (m->size() != group.size() * group.size())
            throw SimulationError("op '" + std::string(ops.name(i)) + "' has " + std::to_string(m->size()) +
                                  " per-pair sizes for a group of " + std::to_string(group.size()) + " ranks (" +
                                  std::to_string(group.size() * group.size()) + " expected)");
      }
    }
  }
  for (std::size_t r = 0; r < owner.size(); ++r) {
    if (owner[r] == -1) throw SimulationError("rank " + std::to_string(r) + " belongs to no rank class");
  }
  for (const auto& comm : communicators_) {
    std::vector<char> member(static_cast<std::size_t>(world_size_), 0);
    for (const auto& group : comm.groups) {
      if (group.empty()) throw SimulationError("communicator '" + comm.name + "' has an empty group");
      std::vector<int> sorted = group;
      std::sort(sorted.begin(), sorted.end());
      if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
        throw SimulationError("communicator '" + comm.name + "' has a group with a duplicate rank");
      if (sorted.front() < 0 || sorted.back() >= world_size_)
        throw SimulationError("communicator '" + comm.name + "' has a rank out of range");
      for (int r : group) {
        if (member[static_cast<std::size_t>(r)]++)
          throw SimulationError("communicator '" + comm.name + "' has rank " + std::to_string(r) + " in two groups");
      }
    }
  }
}

}  // namespace clustersim
