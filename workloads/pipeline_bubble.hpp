#pragma once
// The pipeline bubble of a step by closed form, from the times of one chunk's passes: the comparison
// table of DeepSeek-AI, "DeepSeek-V3 Technical Report" (arXiv:2412.19437, Table 2), restated in
// deepseek-ai/DualPipe's README at commit 3da1bbea53606543d7f5f232338fc58096db30e3:
//   1F1B      (pp - 1)(F + B)
//   ZB1P      (pp - 1)(F + B - 2W)          (Qi et al. 2024, zero bubble, one pipeline)
//   DualPipe  (pp/2 - 1)(F&B + B - 3W)
// F: a forward chunk; B: a full backward chunk (input and weight gradients); W: its weight-gradient
// part; F&B: a forward and a backward chunk run overlapped (DualPipe's pairs), at most F + B. pp is the
// number of pipeline stages (even for DualPipe). These are the table's figures (for m >= 2 pp
// micro-batches); the replay of a schedule measures its own bubble.
namespace clustersim {

struct ChunkPassTimes {
  double forward_s = 0.0;           // F
  double backward_s = 0.0;          // B: input-gradient and weight-gradient parts together
  double backward_weight_s = 0.0;   // W: the weight-gradient part of B
  double forward_backward_s = 0.0;  // F&B: a forward and a backward overlapped
};

double bubble_1f1b_s(int pp, const ChunkPassTimes& t);
double bubble_zb1p_s(int pp, const ChunkPassTimes& t);
double bubble_dualpipe_s(int pp, const ChunkPassTimes& t);

}  // namespace clustersim
