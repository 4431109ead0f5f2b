#pragma once
// DeepEP's low-latency MoE dispatch and combine as an all-to-all algorithm: every token copy straight to
// its expert's GPU, RDMA between nodes, NVLink inside one. Formulas and the published figures it is
// checked against in deepep_low_latency_algorithm.cpp.
#include "sim/collectives/collective_plan.hpp"

namespace clustersim {

CollectivePlan plan_deepep_low_latency(const CollectiveContext& ctx, const CollectiveRequest& request);

}  // namespace clustersim
