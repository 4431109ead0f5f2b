#include "sim/power/gpu_energy.hpp"

#include <algorithm>

namespace clustersim {
namespace {

// The overlap increment on top of `compute_w`, capped at the TDP.
double overlap_increment_w(const GpuPowerModel& p, double compute_w) {
  return std::clamp(p.tdp_w - compute_w, 0.0, p.overlap_communication_w);
}

}  // namespace

GpuActivity gpu_activity(double tensor_s, double vector_s, double communication_s, double exposed_communication_s,
                         double step_time_s, double low_precision_tensor_s) {
  GpuActivity a;
  a.tensor_s = std::max(0.0, tensor_s);
  a.low_precision_tensor_s = std::clamp(low_precision_tensor_s, 0.0, a.tensor_s);
  a.vector_s = std::max(0.0, vector_s);
  a.exposed_communication_s = std::max(0.0, exposed_communication_s);
  a.overlapped_communication_s = std::max(0.0, communication_s - a.exposed_communication_s);
  a.waiting_s = std::max(0.0, step_time_s - a.tensor_s - a.vector_s - a.exposed_communication_s);
  return a;
}

double gpu_energy_j(const GpuPowerModel& p, const GpuActivity& a) {
  const double wide_tensor_s = a.tensor_s - a.low_precision_tensor_s;
  double e = p.tensor_w * wide_tensor_s + p.low_precision_tensor_w * a.low_precision_tensor_s +
             p.vector_w * a.vector_s + p.communication_w * a.exposed_communication_s + p.waiting_w * a.waiting_s;
  const double compute_s = a.tensor_s + a.vector_s;
  if (compute_s > 0 && a.overlapped_communication_s > 0) {
    const double increment_w = (wide_tensor_s * overlap_increment_w(p, p.tensor_w) +
                                a.low_precision_tensor_s * overlap_increment_w(p, p.low_precision_tensor_w) +
                                a.vector_s * overlap_increment_w(p, p.vector_w)) /
                               compute_s;
    e += increment_w * std::min(a.overlapped_communication_s, compute_s);
  }
  return e;
}

double gpu_peak_w(const GpuPowerModel& p, const GpuActivity& a) {
  double peak = a.waiting_s > 0 ? p.waiting_w : 0.0;
  const bool overlap = a.overlapped_communication_s > 0;
  if (a.tensor_s > a.low_precision_tensor_s)
    peak = std::max(peak, p.tensor_w + (overlap ? overlap_increment_w(p, p.tensor_w) : 0.0));
  if (a.low_precision_tensor_s > 0)
    peak =
        std::max(peak, p.low_precision_tensor_w + (overlap ? overlap_increment_w(p, p.low_precision_tensor_w) : 0.0));
  if (a.vector_s > 0) peak = std::max(peak, p.vector_w + (overlap ? overlap_increment_w(p, p.vector_w) : 0.0));
  if (a.exposed_communication_s > 0) peak = std::max(peak, p.communication_w);
  return peak;
}

}  // namespace clustersim
