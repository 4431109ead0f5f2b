#pragma once
// DualPipe (DeepSeek-V3's bidirectional pipeline schedule): the order of one rank's units, and its rules.
//
// Source: DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437, sec. 3.2.1 and Table 2; the
// reference implementation deepseek-ai/DualPipe at commit 3da1bbea53606543d7f5f232338fc58096db30e3,
// dualpipe/dualpipe.py, DualPipe.step, whose eight steps this follows unit for unit.
//
// pp ranks (even), m micro-batches (even, >= 2 pp): micro-batches 0..m/2-1 enter at rank 0 and run
// through model stages 0..pp-1 (direction 0); m/2..m-1 enter at rank pp-1 and run through the mirrored
// pipeline (direction 1). Rank r holds model stage r for direction 0 (unit chunk 0) and model stage
// pp-1-r for direction 1 (unit chunk 1): two chunks of L/pp layers, hence 2x the parameters of 1F1B.
// With h = min(r, pp-1-r) and n = pp/2 (each unit below is one chunk of one micro-batch; the steps'
// "phase 0" is direction 0 on ranks r < n and direction 1 on ranks r >= n):
//   1  (n-h-1)*2 x F0            5  (n-h-1) x B1, F1&B0
//   2  (h+1) x F0, F1            6  (h+1) x B1, B0 (the second half of them split: zero bubble)
//   3  (n-h-1) x B1(input), W, F1   7  (n-h-1) x W, B0(input)
//   4  (m/2-pp+h+1) x F0&B1, F1&B0  8  (h+1) x W
// "Fx&By" is a forward of phase x overlapped with a full backward of phase y (one F&B pair); W runs the
// weight-gradient part of the oldest split backward (first in, first out). On the two middle ranks the
// first F0&B1 of step 4 is not overlapped (the reference's note: it shortens the bubble).
#include <vector>

#include "workloads/pipeline_schedule.hpp"

namespace clustersim {

// The units of rank `stage` of `stages`. Throws SimulationError when stages or micro_batches break the
// rule below (the spec checks it first, with its JSON path).
std::vector<PipelineUnit> dualpipe_schedule(int stages, int stage, int micro_batches);

// The rule DualPipe.step asserts: pp even and >= 2, m even and >= 2 pp. Empty when met, else the reason.
const char* dualpipe_rule_violation(int stages, int micro_batches);

}  // namespace clustersim
