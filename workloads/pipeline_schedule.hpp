#pragma once
// The order in which one pipeline stage runs the forward and backward passes of its micro-batches.
//
//  gpipe:       every forward (micro-batch 0..m-1), then every backward (0..m-1) (Huang et al. 2019).
//  1f1b:        pp - stage - 1 warm-up forwards, then alternately one forward and one backward, then the
//               remaining backwards (PipeDream-Flush, Narayanan et al. 2021); fewer micro-batches in
//               flight than GPipe, the same bubble.
//  interleaved: each stage holds v model chunks (chunk c of stage s is global chunk c * pp + s); forwards
//               go through the chunks in groups of pp micro-batches; (pp - stage - 1) * 2 + (v - 1) * pp
//               warm-up forwards, then 1F1B (Narayanan et al. 2021, section 2.2; Megatron-LM's
//               forward_backward_pipelining_with_interleaving). Needs m to be a multiple of pp.
// On uniform stages, the bubble is (pp - 1) / (m + pp - 1) of the step for gpipe and 1f1b, and v times
// smaller for interleaved; that comes out of the replay, it is not computed here.
#include <string_view>
#include <vector>

namespace clustersim {

struct PipelineUnit {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;  // the stage's model chunk (0..v-1); global chunk = chunk * pp + stage
};

// `schedule`: gpipe | 1f1b | interleaved. `chunks`: v (1 unless interleaved).
std::vector<PipelineUnit> pipeline_schedule(std::string_view schedule, int stages, int stage, int micro_batches,
                                            int chunks);

}  // namespace clustersim
