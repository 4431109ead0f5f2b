#include "sim/replay/replay_result_wire.hpp"

#include <cstdint>
#include <type_traits>

#include "sim/core/error.hpp"
#include "sim/core/wire_bytes.hpp"

namespace clustersim {
namespace {

static_assert(std::is_trivially_copyable_v<ClassTimes> && std::is_trivially_copyable_v<P2PRecord>);

// Every field of a result, in one order for both directions (`Wire`: WireWriter or WireReader).
template <typename Wire, typename Result>
void each_field(Wire& wire, Result& r) {
  const auto sized = [&wire](auto& n) {  // a std::size_t as 64 bits
    if constexpr (std::is_same_v<Wire, WireWriter>) {
      wire.put(static_cast<std::uint64_t>(n));
    } else {
      n = static_cast<std::size_t>(wire.template get<std::uint64_t>());
    }
  };
  const auto field = [&wire](auto& value) {
    if constexpr (std::is_same_v<Wire, WireWriter>)
      wire.put(value);
    else
      wire.get(value);
  };
  field(r.step_time_s);
  field(r.classes);
  sized(r.critical_class);
  sized(r.transfers);
  sized(r.transfers_simulated);
  field(r.p2p_bytes);
  field(r.link_bytes);
  field(r.link_busy_s);
  field(r.link_bytes_by_communicator);
  std::uint64_t count = r.collectives.size();
  field(count);
  if constexpr (!std::is_same_v<Wire, WireWriter>) r.collectives.resize(static_cast<std::size_t>(count));
  for (auto& c : r.collectives) {
    field(c.communicator);
    field(c.kind);
    field(c.algorithm);
    field(c.protocol);
    field(c.channels);
    field(c.bytes);
    field(c.start_s);
    field(c.end_s);
    field(c.exposed_s);
  }
  count = r.p2p.size();
  field(count);
  if constexpr (std::is_same_v<Wire, WireWriter>) {
    for (const auto& [comm, rec] : r.p2p) {
      wire.put(comm);
      wire.put(rec);
    }
  } else {
    for (std::uint64_t i = 0; i < count; ++i) {
      const auto comm = wire.template get<std::uint16_t>();
      wire.get(r.p2p[comm]);
    }
  }
  count = r.timeline.size();
  field(count);
  if constexpr (!std::is_same_v<Wire, WireWriter>) r.timeline.resize(static_cast<std::size_t>(count));
  for (auto& s : r.timeline) {
    sized(s.rank_class);
    field(s.op);
    field(s.stream);
    field(s.start_s);
    field(s.end_s);
    field(s.algorithm);
    field(s.flow);
  }
  count = r.timeline_classes.size();
  field(count);
  if constexpr (!std::is_same_v<Wire, WireWriter>) r.timeline_classes.resize(static_cast<std::size_t>(count));
  for (auto& c : r.timeline_classes)
    sized(c);
}

}  // namespace

std::string encode_replay_result(const ReplayResult& result) {
  WireWriter wire;
  each_field(wire, result);
  return wire.take();
}

ReplayResult decode_replay_result(std::string_view bytes) {
  WireReader wire(bytes);
  ReplayResult r;
  each_field(wire, r);
  if (!wire.done()) throw SimulationError("a replay's result: bytes left after its last field");
  return r;
}

}  // namespace clustersim
