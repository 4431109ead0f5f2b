#include "sim/network/nccl_tests.hpp"

#include <utility>

#include "sim/core/error.hpp"

namespace clustersim {

double bus_factor(CollectiveKind kind, int ranks) {
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::all_reduce:
      return 2.0 * (n - 1) / n;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_to_all:
      return (n - 1) / n;
    case CollectiveKind::broadcast:
    case CollectiveKind::reduce:
      return 1.0;
  }
  return 1.0;
}

CollectiveKind parse_collective_kind(const std::string& text) {
  static constexpr std::pair<const char*, CollectiveKind> kNames[] = {
      {"all_reduce", CollectiveKind::all_reduce},         {"allreduce", CollectiveKind::all_reduce},
      {"all_gather", CollectiveKind::all_gather},         {"allgather", CollectiveKind::all_gather},
      {"reduce_scatter", CollectiveKind::reduce_scatter}, {"reducescatter", CollectiveKind::reduce_scatter},
      {"all_to_all", CollectiveKind::all_to_all},         {"alltoall", CollectiveKind::all_to_all},
      {"broadcast", CollectiveKind::broadcast},           {"reduce", CollectiveKind::reduce}};
  for (const auto& [name, kind] : kNames)
    if (text == name) return kind;
  throw SpecError("--op " + text, "",
                  "expected one of all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, send_recv");
}

}  // namespace clustersim
