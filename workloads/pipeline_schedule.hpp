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
//  dualpipe:    DeepSeek-V3's bidirectional schedule (DeepSeek-AI 2024, arXiv:2412.19437 sec. 3.2.1;
//               deepseek-ai/DualPipe at 3da1bbea53606543d7f5f232338fc58096db30e3, dualpipe/dualpipe.py
//               DualPipe.step): half the m micro-batches enter at stage 0, half at stage pp - 1; rank r
//               holds two chunks, model stage r (chunk 0, the forward direction's micro-batches) and
//               model stage pp - 1 - r (chunk 1, the reverse direction's); some backwards are split into
//               an input-gradient part and a later weight-gradient part (zero bubble), and in the main
//               phase a forward of one direction runs overlapped with a backward of the other. Needs pp
//               even and m even and >= 2 pp (dualpipe_schedule.hpp).
// On uniform stages, the bubble is (pp - 1) / (m + pp - 1) of the step for gpipe and 1f1b, and v times
// smaller for interleaved; that comes out of the replay, it is not computed here.
#include <string_view>
#include <vector>

namespace clustersim {

// Which part of a backward pass a unit runs: the whole of it, or (zero-bubble schedules) its
// input-gradient part (B) or its weight-gradient part (W), run later.
enum class BackwardPart { full, input, weight };

struct PipelineUnit {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;  // the stage's model chunk (0..v-1); global chunk = chunk * pp + stage (dualpipe: see above)
  BackwardPart part = BackwardPart::full;  // backward units only
  bool overlapped_with_next = false;       // dualpipe: this unit and the next run as one F&B pair
};

// `schedule`: gpipe | 1f1b | interleaved | dualpipe. `chunks`: v (1 unless interleaved).
std::vector<PipelineUnit> pipeline_schedule(std::string_view schedule, int stages, int stage, int micro_batches,
                                            int chunks);

// The model stages whose layers rank `stage` holds: {stage}, or for dualpipe {stage, stages - 1 - stage}
// (interleaved ranks hold v chunks of one stage's share: stage_layers counts them).
std::vector<int> pipeline_rank_stages(std::string_view schedule, int stages, int stage);

// The most forwards of `units` begun and not yet through their full or input-gradient backward, in order.
int peak_forwards_in_flight(const std::vector<PipelineUnit>& units);

}  // namespace clustersim
