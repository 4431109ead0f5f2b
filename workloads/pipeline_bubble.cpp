#include "workloads/pipeline_bubble.hpp"

namespace clustersim {

double bubble_1f1b_s(int pp, const ChunkPassTimes& t) {
  return (pp - 1) * (t.forward_s + t.backward_s);
}

double bubble_zb1p_s(int pp, const ChunkPassTimes& t) {
  return (pp - 1) * (t.forward_s + t.backward_s - 2.0 * t.backward_weight_s);
}

double bubble_dualpipe_s(int pp, const ChunkPassTimes& t) {
  return (pp / 2.0 - 1.0) * (t.forward_backward_s + t.backward_s - 3.0 * t.backward_weight_s);
}

}  // namespace clustersim
