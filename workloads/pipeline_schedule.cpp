#include "workloads/pipeline_schedule.hpp"

#include <algorithm>
#include <string>

#include "sim/core/error.hpp"
#include "workloads/dualpipe_schedule.hpp"

namespace clustersim {
namespace {

// The k-th forward (or backward) unit of an interleaved stage (Megatron-LM's get_model_chunk_id and
// micro-batch numbering): units go through the chunks in groups of `stages` micro-batches.
PipelineUnit interleaved_unit(int k, bool forward, int stages, int chunks) {
  const int group = k / (stages * chunks);
  const int in_group = k % (stages * chunks);
  int chunk = in_group / stages;
  if (!forward) chunk = chunks - 1 - chunk;
  return {forward, group * stages + in_group % stages, chunk};
}

}  // namespace

std::vector<PipelineUnit> pipeline_schedule(std::string_view schedule, int stages, int stage, int micro_batches,
                                            int chunks) {
  std::vector<PipelineUnit> units;
  const int m = micro_batches;
  if (schedule == "gpipe") {
    for (int mb = 0; mb < m; ++mb)
      units.push_back({true, mb, 0});
    for (int mb = 0; mb < m; ++mb)
      units.push_back({false, mb, 0});
    return units;
  }
  if (schedule == "1f1b") {
    const int warmup = std::min(stages - stage - 1, m);
    int f = 0, b = 0;
    for (; f < warmup; ++f)
      units.push_back({true, f, 0});
    while (f < m) {
      units.push_back({true, f++, 0});
      units.push_back({false, b++, 0});
    }
    while (b < m)
      units.push_back({false, b++, 0});
    return units;
  }
  if (schedule == "interleaved") {
    if (m % stages != 0)
      throw SimulationError("interleaved schedule: micro-batches (" + std::to_string(m) +
                            ") must be a multiple of the pipeline stages (" + std::to_string(stages) + ")");
    const int total = m * chunks;
    const int warmup = std::min((stages - stage - 1) * 2 + (chunks - 1) * stages, total);
    int f = 0, b = 0;
    for (; f < warmup; ++f)
      units.push_back(interleaved_unit(f, true, stages, chunks));
    while (f < total) {
      units.push_back(interleaved_unit(f++, true, stages, chunks));
      units.push_back(interleaved_unit(b++, false, stages, chunks));
    }
    while (b < total)
      units.push_back(interleaved_unit(b++, false, stages, chunks));
    return units;
  }
  if (schedule == "dualpipe") return dualpipe_schedule(stages, stage, m);
  throw SimulationError("unknown pipeline schedule \"" + std::string(schedule) + "\"");
}

std::vector<int> pipeline_rank_stages(std::string_view schedule, int stages, int stage) {
  if (schedule == "dualpipe" && stages - 1 - stage != stage) return {stage, stages - 1 - stage};
  return {stage};
}

int peak_forwards_in_flight(const std::vector<PipelineUnit>& units) {
  int alive = 0, peak = 0;
  for (const PipelineUnit& u : units) {
    if (u.forward)
      peak = std::max(peak, ++alive);
    else if (u.part != BackwardPart::weight)
      --alive;
  }
  return peak;
}

}  // namespace clustersim
