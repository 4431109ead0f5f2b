#pragma once
// The policies of the scheduler registry (serving_scheduler.cpp), one file each.
#include <memory>

#include "sim/serving/serving_scheduler.hpp"

namespace clustersim {

std::unique_ptr<ServingScheduler> make_static_batching_scheduler(const SchedulerLimits& limits);
std::unique_ptr<ServingScheduler> make_continuous_batching_scheduler(const SchedulerLimits& limits);
std::unique_ptr<ServingScheduler> make_chunked_prefill_scheduler(const SchedulerLimits& limits);
std::unique_ptr<ServingScheduler> make_inflight_batching_scheduler(const SchedulerLimits& limits);

}  // namespace clustersim
