#include "workloads/dualpipe_schedule.hpp"

#include <algorithm>
#include <deque>
#include <string>
#include <utility>

#include "sim/core/error.hpp"

namespace clustersim {
namespace {

// Builds one rank's units as DualPipe.step issues them (dualpipe_schedule.hpp).
class DualPipeRank {
 public:
  DualPipeRank(int stages, int stage, int micro_batches)
      : second_half_(stage >= stages / 2), half_m_(micro_batches / 2) {}

  void forward(int phase) { units_.push_back(forward_unit(phase)); }
  void backward(int phase, bool zero_bubble) {
    PipelineUnit u = backward_unit(phase);
    if (zero_bubble) {
      u.part = BackwardPart::input;
      deferred_.emplace_back(u.micro_batch, u.chunk);
    }
    units_.push_back(u);
  }
  void weight() {
    if (deferred_.empty()) throw SimulationError("dualpipe schedule: a weight-gradient unit with no split backward");
    const auto [mb, chunk] = deferred_.front();
    deferred_.pop_front();
    units_.push_back({false, mb, chunk, BackwardPart::weight, false});
  }
  // A forward of phase0 overlapped with a (full) backward of phase1: one F&B pair.
  void forward_backward(int phase0, int phase1) {
    PipelineUnit f = forward_unit(phase0);
    f.overlapped_with_next = true;
    units_.push_back(f);
    units_.push_back(backward_unit(phase1));
  }
  std::vector<PipelineUnit> finish() {
    if (!deferred_.empty()) throw SimulationError("dualpipe schedule: split backwards left without their weight part");
    return std::move(units_);
  }

 private:
  int direction(int phase) const { return phase ^ (second_half_ ? 1 : 0); }
  PipelineUnit forward_unit(int phase) {
    const int d = direction(phase);
    return {true, d * half_m_ + next_forward_[d]++, d, BackwardPart::full, false};
  }
  PipelineUnit backward_unit(int phase) {
    const int d = direction(phase);
    return {false, d * half_m_ + next_backward_[d]++, d, BackwardPart::full, false};
  }

  bool second_half_;
  int half_m_;
  int next_forward_[2] = {0, 0};
  int next_backward_[2] = {0, 0};
  std::deque<std::pair<int, int>> deferred_;  // (micro-batch, chunk) of split backwards awaiting W
  std::vector<PipelineUnit> units_;
};

}  // namespace

const char* dualpipe_rule_violation(int stages, int micro_batches) {
  if (stages < 2 || stages % 2 != 0) return "DualPipe needs an even number of pipeline stages pp >= 2";
  if (micro_batches % 2 != 0 || micro_batches < 2 * stages)
    return "DualPipe needs an even number of micro-batches per step, at least 2 x pp";
  return "";
}

std::vector<PipelineUnit> dualpipe_schedule(int stages, int stage, int micro_batches) {
  if (const std::string why = dualpipe_rule_violation(stages, micro_batches); !why.empty())
    throw SimulationError("dualpipe schedule: " + why + " (pp = " + std::to_string(stages) +
                          ", micro-batches = " + std::to_string(micro_batches) + ")");
  const int n = stages / 2;
  const int h = std::min(stage, stages - 1 - stage);
  const bool middle = stage == n - 1 || stage == n;
  DualPipeRank r(stages, stage, micro_batches);
  for (int i = 0; i < (n - h - 1) * 2; ++i)  // step 1: nF0
    r.forward(0);
  for (int i = 0; i < h + 1; ++i) {  // step 2: nF0F1
    r.forward(0);
    r.forward(1);
  }
  for (int i = 0; i < n - h - 1; ++i) {  // step 3: nB1W1F1 (zero bubble)
    r.backward(1, true);
    r.weight();
    r.forward(1);
  }
  for (int i = 0; i < micro_batches / 2 - stages + h + 1; ++i) {  // step 4 (main): nF0B1F1B0
    if (i == 0 && middle) {                                       // not overlapped on the middle ranks
      r.forward(0);
      r.backward(1, false);
    } else {
      r.forward_backward(0, 1);
    }
    r.forward_backward(1, 0);
  }
  for (int i = 0; i < n - h - 1; ++i) {  // step 5: nB1F1B0
    r.backward(1, false);
    r.forward_backward(1, 0);
  }
  bool zero_bubble = false;  // step 6: nB1B0, the second half split
  for (int i = 0; i < h + 1; ++i) {
    if (i == (h + 1) / 2 && h % 2 == 1) zero_bubble = true;
    r.backward(1, zero_bubble);
    if (i == (h + 1) / 2 && h % 2 == 0) zero_bubble = true;
    r.backward(0, zero_bubble);
  }
  for (int i = 0; i < n - h - 1; ++i) {  // step 7: nWB0 (zero bubble)
    r.weight();
    r.backward(0, true);
  }
  for (int i = 0; i < h + 1; ++i)  // step 8: nW
    r.weight();
  return r.finish();
}

}  // namespace clustersim
