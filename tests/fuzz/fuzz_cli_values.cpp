// libFuzzer target: the values a user types on the command line. The first byte picks the parser,
// the rest is the text (several values one per line where the parser takes several):
//   0 --max-bytes/--min-bytes (parse_byte_size)      1 --step-factor (parse_step_factor)
//   2 --ranks on 64 GPUs (parse_rank_list)            3 --op (parse_collective_kind, is_send_recv_op)
//   4 --set lines (split_overrides, then the dgx-h100 and gpt3-1.3b presets with them applied, and the
//     workload's parallelism resolved on the cluster's GPUs, as simulate does)
//   5 a collective sweep request on dgx-h100 (lines: min bytes, max bytes, step factor, ranks, op)
//   6 an argument list, one argument per line (Arguments; UsageError is expected)
#include <cstdint>
#include <string>
#include <vector>

#include "sim/cli/arguments.hpp"
#include "sim/api/spec_overrides.hpp"
#include "sim/collective_sweep.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "topologies/cluster_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace {

std::vector<std::string> lines(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    out.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

const clustersim::ClusterSpec& dgx_h100() {
  static const clustersim::ClusterSpec spec = clustersim::load_cluster_spec("dgx-h100");
  return spec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace clustersim;
  if (size == 0) return 0;
  const std::string text(fuzz::as_text(data + 1, size - 1));
  fuzz::expect_only_spec_errors<cli::UsageError>([&] {
    switch (data[0] % 7) {
      case 0:
        (void)parse_byte_size(text, "--max-bytes");
        break;
      case 1:
        (void)parse_step_factor(text);
        break;
      case 2:
        (void)parse_rank_list(text, 64);
        break;
      case 3:
        if (!is_send_recv_op(text)) (void)parse_collective_kind(text);
        break;
      case 4: {
        const SplitOverrides overrides = split_overrides(lines(text));
        const ClusterSpec cluster = load_cluster_spec("dgx-h100", overrides.cluster);
        WorkloadSpec workload = load_workload_spec("gpt3-1.3b", overrides.workload);
        resolve_parallelism(workload, cluster.gpu_count());
        break;
      }
      case 5: {
        const std::vector<std::string> v = lines(text);
        CollectiveSweepRequest request;
        if (v.size() > 0) request.min_bytes = v[0];
        if (v.size() > 1) request.max_bytes = v[1];
        if (v.size() > 2) request.step_factor = v[2];
        if (v.size() > 3) request.ranks = v[3];
        if (v.size() > 4) request.op = v[4];
        (void)collective_sweep_options(dgx_h100(), request);
        break;
      }
      default: {
        const cli::Arguments a(lines(text), {"cluster", "set", "max-bytes"}, {"json"});
        (void)a.values("set");
        (void)a.value("cluster");
        break;
      }
    }
  });
  return 0;
}
