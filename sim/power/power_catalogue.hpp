#pragma once
// The power catalogue (sim/power/catalogue): what each GPU draws in each activity, what its server
// draws besides the GPUs, and what NVSwitch chips, NICs, fabric switches and transceivers draw.
// Every figure carries its source; an assumption says so (docs/power_and_cost.md).
#include <string>
#include <string_view>

#include "sim/hardware/gpu_spec.hpp"

namespace clustersim {

// Power of one GPU by activity, in watts (the model of sim/power/gpu_energy.hpp).
struct GpuPowerModel {
  std::string id;
  double tdp_w = 0.0;                    // no activity draws more
  double idle_w = 0.0;                   // outside any step (reported, not used inside one)
  double waiting_w = 0.0;                // inside a step, doing nothing: waiting on other ranks
  double tensor_w = 0.0;                 // tensor-core kernels (gemm, attention) in 16-bit or tf32
  double low_precision_tensor_w = 0.0;   // tensor-core kernels in fp8, mxfp8 or nvfp4
  double vector_w = 0.0;                 // memory- or vector-bound kernels
  double communication_w = 0.0;          // a collective runs, compute stream idle
  double overlap_communication_w = 0.0;  // added to compute power while a collective overlaps it
  double host_w_per_gpu = 0.0;           // the server's CPUs, memory, fans, storage, supply losses, per GPU
  std::string source;                    // the catalogue file, or how the figures were derived
};

// A network device: static_w when idle, max_w when every port carries traffic.
struct DevicePower {
  double static_w = 0.0;
  double max_w = 0.0;
  std::string source;
};

// The catalogue entry of `gpu.id`; a GPU that has none (an inline GPU object) gets figures derived
// from its tdp_w and idle_w with the catalogue's ratios, and its source says so.
GpuPowerModel gpu_power_model(const GpuSpec& gpu);

// NVSwitch chip of a scale-up generation ("nvlink4"); "" or unknown: the newest, said in the source.
DevicePower nvswitch_chip_power(std::string_view generation);
// NIC of the nearest catalogued line rate.
DevicePower nic_power(double speed_Gbps);
// Fabric switch of this technology and the nearest port speed, scaled to `radix` ports.
DevicePower switch_power(std::string_view technology, double speed_Gbps, int radix);
// One transceiver (one end of an optical cable) of the nearest speed; constant power.
DevicePower transceiver_power(double speed_Gbps);

}  // namespace clustersim
