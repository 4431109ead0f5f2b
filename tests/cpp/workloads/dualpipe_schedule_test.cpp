// DualPipe (DeepSeek-V3 report, arXiv:2412.19437 sec. 3.2.1, Table 2; deepseek-ai/DualPipe at
// 3da1bbea53606543d7f5f232338fc58096db30e3): the units of each rank in DualPipe.step's order, the
// closed-form bubbles of Table 2, the memory model's 2x parameters and pp + 1 in-flight chunks, and the
// spec's rule that pp and the micro-batches be even (m >= 2 pp).
#include "workloads/dualpipe_schedule.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "../gpt3_175b_fixture.hpp"
#include "../transformer_fixture.hpp"
#include "sim/core/error.hpp"
#include "workloads/memory_model.hpp"
#include "workloads/pipeline_bubble.hpp"
#include "workloads/pipeline_schedule.hpp"
#include "workloads/transformer_generator.hpp"

namespace clustersim {
namespace {

// "F0.1" forward of micro-batch 0 on chunk 1; "B"/"b"/"W": full, input-gradient, weight-gradient
// backward; "&" joins an overlapped F&B pair.
std::string order(const std::vector<PipelineUnit>& units) {
  std::string s;
  for (const PipelineUnit& u : units) {
    const char kind = u.forward                        ? 'F'
                      : u.part == BackwardPart::input  ? 'b'
                      : u.part == BackwardPart::weight ? 'W'
                                                       : 'B';
    s += kind + std::to_string(u.micro_batch) + "." + std::to_string(u.chunk) + (u.overlapped_with_next ? "&" : " ");
  }
  return s;
}

TEST(DualPipeSchedule, FirstRankOfFourFollowsTheReferenceSteps) {
  // pp 4, m 8, rank 0: n = 2, h = 0, not a middle rank (those are 1 and 2). Direction 0 carries
  // micro-batches 0..3 on chunk 0 (stage 0), direction 1 carries 4..7 on chunk 1 (stage 3).
  //   step 1 (n-h-1)*2 = 2: F0 F1            step 2 h+1 = 1: F2, F4
  //   step 3 n-h-1 = 1: b4 W4 F5             step 4 m/2-pp+h+1 = 1: F3&B5, F6&B0
  //   step 5 1: B6, F7&B1                    step 6 h+1 = 1: B7 (full), b2 (zero bubble from here)
  //   step 7 1: W2 b3                        step 8 h+1 = 1: W3
  EXPECT_EQ(order(pipeline_schedule("dualpipe", 4, 0, 8, 1)),
            "F0.0 F1.0 F2.0 F4.1 b4.1 W4.1 F5.1 F3.0&B5.1 F6.1&B0.0 B6.1 F7.1&B1.0 B7.1 b2.0 W2.0 b3.0 W3.0 ");
}

TEST(DualPipeSchedule, MiddleRankDoesNotOverlapItsFirstMainPair) {
  // pp 4, m 8, rank 1: h = 1, no step 1/3/5/7; step 2 2 x (F0, F1); step 4 m/2-pp+h+1 = 2 rounds, the
  // first F0, B1 not overlapped; step 6 2 rounds, i = (h+1)/2 = 1 and h odd: zero bubble from the
  // second B1 on; step 8 2 x W.
  EXPECT_EQ(order(pipeline_schedule("dualpipe", 4, 1, 8, 1)),
            "F0.0 F4.1 F1.0 F5.1 F2.0 B4.1 F6.1&B0.0 F3.0&B5.1 F7.1&B1.0 B6.1 B2.0 b7.1 b3.0 W7.1 W3.0 ");
}

TEST(DualPipeSchedule, MirroredRanksRunMirroredUnits) {
  // The reverse direction is symmetric to the forward one (DualPipe README): rank pp-1-r runs rank r's
  // units with the chunks swapped and the micro-batches of the other direction.
  for (const auto& [pp, m] : {std::pair{4, 8}, {8, 20}, {8, 16}, {16, 40}})
    for (int r = 0; r < pp / 2; ++r) {
      const auto a = pipeline_schedule("dualpipe", pp, r, m, 1);
      const auto b = pipeline_schedule("dualpipe", pp, pp - 1 - r, m, 1);
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t k = 0; k < a.size(); ++k) {
        EXPECT_EQ(a[k].forward, b[k].forward);
        EXPECT_EQ(a[k].part, b[k].part);
        EXPECT_EQ(a[k].overlapped_with_next, b[k].overlapped_with_next);
        EXPECT_EQ(a[k].chunk, 1 - b[k].chunk);
        EXPECT_EQ(a[k].micro_batch, (b[k].micro_batch + m / 2) % m);
      }
    }
}

TEST(DualPipeSchedule, EveryMicroBatchOnceForwardThenBackwardAndPpPlusOneInFlight) {
  for (const auto& [pp, m] : {std::pair{2, 4}, {4, 8}, {8, 20}, {8, 16}, {16, 32}, {16, 40}})
    for (int r = 0; r < pp; ++r) {
      const auto units = pipeline_schedule("dualpipe", pp, r, m, 1);
      std::map<std::pair<int, int>, std::string> seen;  // (micro-batch, chunk) -> its passes in order
      int overlapped = 0;
      for (const PipelineUnit& u : units) {
        seen[{u.micro_batch, u.chunk}] += u.forward ? "F" : u.part == BackwardPart::weight ? "W" : "B";
        if (u.part == BackwardPart::input) seen[{u.micro_batch, u.chunk}] += "i";
        overlapped += u.overlapped_with_next;
      }
      // each micro-batch of a direction on that direction's chunk: F then B (full) or F, B(input), W
      ASSERT_EQ(seen.size(), std::size_t(m));
      for (const auto& [key, passes] : seen) {
        EXPECT_EQ(key.second, key.first < m / 2 ? 0 : 1);
        EXPECT_TRUE(passes == "FB" || passes == "FBiW") << passes;
      }
      // Table 2's activation "PP + 1": pp forwards after steps 1 and 2, one more as step 4 begins
      EXPECT_EQ(peak_forwards_in_flight(units), pp + 1) << "pp " << pp << " rank " << r;
      // step 4 and step 5 pairs: 2 (m/2 - pp + h + 1) + (n - h - 1), less one on the middle ranks
      const int h = std::min(r, pp - 1 - r), n = pp / 2;
      const bool middle = r == n - 1 || r == n;
      EXPECT_EQ(overlapped, 2 * (m / 2 - pp + h + 1) + (n - h - 1) - (middle ? 1 : 0));
    }
}

TEST(DualPipeSchedule, RejectsOddStagesAndTooFewMicroBatches) {
  EXPECT_THROW(pipeline_schedule("dualpipe", 3, 0, 8, 1), SimulationError);
  EXPECT_THROW(pipeline_schedule("dualpipe", 4, 0, 7, 1), SimulationError);
  EXPECT_THROW(pipeline_schedule("dualpipe", 4, 0, 6, 1), SimulationError);  // m < 2 pp
  EXPECT_STREQ(dualpipe_rule_violation(4, 8), "");
}

TEST(PipelineBubble, TableTwoOnAHandWorkedCase) {
  // The same chunk times for the three schedules: F = 1 ms, B = 2 ms, W = 1 ms (half of B), F&B = 2.5 ms
  // (a forward hidden in part under the overlapped backward), pp = 8:
  //   1F1B      7 (1 + 2)           = 21 ms
  //   ZB1P      7 (1 + 2 - 2)       =  7 ms
  //   DualPipe  3 (2.5 + 2 - 3)     = 4.5 ms
  const ChunkPassTimes t{
      .forward_s = 1e-3, .backward_s = 2e-3, .backward_weight_s = 1e-3, .forward_backward_s = 2.5e-3};
  EXPECT_DOUBLE_EQ(bubble_1f1b_s(8, t), 21e-3);
  EXPECT_DOUBLE_EQ(bubble_zb1p_s(8, t), 7e-3);
  EXPECT_DOUBLE_EQ(bubble_dualpipe_s(8, t), 4.5e-3);
  // F = B = W = 1 ms with no overlap credit (F&B = F + B = 2 ms): 7 x 2 = 14, 7 x 0 = 0, 3 x (2 + 1 - 3) = 0
  const ChunkPassTimes equal{
      .forward_s = 1e-3, .backward_s = 1e-3, .backward_weight_s = 1e-3, .forward_backward_s = 2e-3};
  EXPECT_DOUBLE_EQ(bubble_1f1b_s(8, equal), 14e-3);
  EXPECT_DOUBLE_EQ(bubble_zb1p_s(8, equal), 0.0);
  EXPECT_DOUBLE_EQ(bubble_dualpipe_s(8, equal), 0.0);
  // pp = 2: DualPipe's ranks each run both stages; its bubble term vanishes (pp/2 - 1 = 0)
  EXPECT_DOUBLE_EQ(bubble_dualpipe_s(2, t), 0.0);
}

// Times every rank's units of the DualPipe schedule under their dependencies alone (no communication
// cost): a forward waits for the same micro-batch's forward on the previous model stage of its direction
// (rank r - 1 for direction 0, r + 1 for direction 1); a (full or input-gradient) backward for the
// backward on the next model stage, or on the direction's last stage for its own forward; each rank runs
// its units in order, an F&B pair as one unit of forward_backward_s. Returns each rank's idle time
// before the step's end (the last unit anywhere).
std::vector<double> dualpipe_idle_s(int pp, int m, const ChunkPassTimes& t) {
  std::vector<std::vector<PipelineUnit>> units;
  for (int r = 0; r < pp; ++r)
    units.push_back(pipeline_schedule("dualpipe", pp, r, m, 1));
  std::map<std::tuple<bool, int, int>, double> done;  // (forward, micro-batch, rank) -> end time
  std::vector<std::size_t> next(pp, 0);
  std::vector<double> clock(pp, 0.0), busy(pp, 0.0);
  const auto dependency = [&](const PipelineUnit& u, int r) -> std::optional<std::tuple<bool, int, int>> {
    const int step = u.chunk == 0 ? 1 : -1;  // the rank of the next model stage of the unit's direction
    if (u.part == BackwardPart::weight) return std::nullopt;
    if (u.forward) {
      const int from = r - step;
      if (from < 0 || from >= pp) return std::nullopt;
      return std::tuple{true, u.micro_batch, from};
    }
    const int from = r + step;
    if (from < 0 || from >= pp) return std::tuple{true, u.micro_batch, r};  // the loss: its own forward
    return std::tuple{false, u.micro_batch, from};
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < pp; ++r)
      while (next[r] < units[r].size()) {
        const PipelineUnit& u = units[r][next[r]];
        const std::size_t n = u.overlapped_with_next ? 2 : 1;
        double ready = clock[r];
        bool blocked = false;
        for (std::size_t k = 0; k < n; ++k)
          if (const auto d = dependency(units[r][next[r] + k], r)) {
            const auto it = done.find(*d);
            if (it == done.end())
              blocked = true;
            else
              ready = std::max(ready, it->second);
          }
        if (blocked) break;
        const double duration = n == 2                          ? t.forward_backward_s
                                : u.forward                     ? t.forward_s
                                : u.part == BackwardPart::full  ? t.backward_s
                                : u.part == BackwardPart::input ? t.backward_s - t.backward_weight_s
                                                                : t.backward_weight_s;
        clock[r] = ready + duration;
        busy[r] += duration;
        for (std::size_t k = 0; k < n; ++k) {
          const PipelineUnit& x = units[r][next[r] + k];
          if (x.part != BackwardPart::weight) done[{x.forward, x.micro_batch, r}] = clock[r];
        }
        next[r] += n;
        progress = true;
      }
  }
  for (int r = 0; r < pp; ++r)
    EXPECT_EQ(next[r], units[r].size()) << "rank " << r << " deadlocked";
  const double end = *std::max_element(clock.begin(), clock.end());
  std::vector<double> idle;
  for (int r = 0; r < pp; ++r)
    idle.push_back(end - busy[r]);
  return idle;
}

TEST(DualPipeSchedule, ItsTimedUnitsHaveTableTwosBubble) {
  // With the input-gradient part as long as the forward (B - W = F) and W <= F, the busiest ranks of the
  // timed schedule idle (pp/2 - 1)(F&B + B - 3W), Table 2's figure. F = 1, B = 2, W = 1 (F, input
  // part and W equal, zero bubble's usual case), no overlap credit (F&B = F + B = 3): every rank idles
  // (pp/2 - 1) x 2, e.g. 6 at pp 8. F&B = 2.5: the middle ranks idle (pp/2 - 1) x 1.5 (4.5 at pp 8),
  // the outer ones less. F = 1, B = 1.5, W = 0.5, F&B = 2: (pp/2 - 1) x 2.
  const ChunkPassTimes cases[] = {{1.0, 2.0, 1.0, 3.0}, {1.0, 2.0, 1.0, 2.5}, {1.0, 1.5, 0.5, 2.0}};
  for (const auto& [pp, m] : {std::pair{4, 8}, {6, 12}, {8, 16}, {8, 20}, {16, 40}})
    for (const ChunkPassTimes& t : cases) {
      const std::vector<double> idle = dualpipe_idle_s(pp, m, t);
      EXPECT_NEAR(*std::max_element(idle.begin(), idle.end()), bubble_dualpipe_s(pp, t), 1e-9)
          << "pp " << pp << " m " << m << " F&B " << t.forward_backward_s;
    }
  EXPECT_DOUBLE_EQ(bubble_dualpipe_s(8, cases[0]), 6.0);
  EXPECT_DOUBLE_EQ(bubble_dualpipe_s(8, cases[1]), 4.5);
  // 1F1B on the same chunk times idles (pp - 1)(F + B) = 21 at pp 8: DualPipe's 6 is 3.5x smaller
  EXPECT_DOUBLE_EQ(bubble_1f1b_s(8, cases[0]), 21.0);
}

using testing::gpt3_175b;  // tp 8, pp 8, dp 16, 96 micro-batches of 1 (hardware_memory_model_test's layout)

TEST(DualPipeMemory, TwoStagesOfParametersAndPpPlusOneChunksInFlight) {
  const DeviceMemory h100{80e9, true};
  const auto dual = estimate_memory_per_stage(gpt3_175b("dualpipe"), h100);
  const auto onef = estimate_memory_per_stage(gpt3_175b("1f1b"), h100);
  ASSERT_EQ(dual.size(), 8u);
  // Stage parameters per GPU (hardware_memory_model_test): stage 0 2,822,731,776, stages 1-6
  // 2,718,922,752, stage 7 2,797,590,528. Rank 0 holds stages 0 and 7: 5,620,322,304; rank 3 holds
  // 3 and 4: 5,437,845,504 (2x); weights 2 bytes each.
  EXPECT_DOUBLE_EQ(dual[0].parameters, 5'620'322'304.0);
  EXPECT_DOUBLE_EQ(dual[7].parameters, 5'620'322'304.0);
  EXPECT_DOUBLE_EQ(dual[3].parameters, 2.0 * onef[3].parameters);
  EXPECT_DOUBLE_EQ(dual[3].weights_bytes, 2.0 * onef[3].weights_bytes);
  for (int i = 0; i < 8; ++i) {
    EXPECT_DOUBLE_EQ(dual[i].micro_batches_in_flight, 9.0);      // pp + 1 on every rank
    EXPECT_DOUBLE_EQ(onef[i].micro_batches_in_flight, 8.0 - i);  // 1F1B: pp - i
  }
  // Rank 3's chunks have 12 layers each, as 1F1B's stage 0 (which holds no output head either):
  // 9 chunks in flight against 8.
  EXPECT_DOUBLE_EQ(dual[3].activations_bytes * 8.0, onef[0].activations_bytes * 9.0);
  // rank 0 also holds the last stage's loss: its logits as 1F1B's stage 7
  EXPECT_DOUBLE_EQ(dual[0].logits_bytes, onef[7].logits_bytes);
}

TEST(DualPipeReplay, TheGeneratorSaysItIsNotReplayedYet) {
  // Not a stub reported as done: the graph does not route DualPipe's two directions, so the generator
  // refuses it with the key's path rather than replaying another schedule under its name.
  WorkloadSpec s = testing::transformer_workload(
      "gpt", {.layers = 4, .hidden = 512, .heads = 8, .ffn_hidden = 2048, .seq_len = 256, .vocab = 1024}, 8, 1);
  s.parallelism.pp = 2;
  s.parallelism.dp = 1;
  s.parallelism.pipeline_schedule = "dualpipe";
  try {
    generate_transformer_training(s, 2);
    ADD_FAILURE() << "no SpecError";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.json_path(), "/parallelism/pipeline_schedule");
  }
}

}  // namespace
}  // namespace clustersim
