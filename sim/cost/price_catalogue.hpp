#pragma once
// The price catalogue (sim/cost/catalogue/prices.json): US dollars, each with its date and source.
// Lookups by line rate take the nearest catalogued speed and say so in the source.
#include <string>
#include <string_view>

namespace clustersim {

struct Price {
  double usd = 0.0;
  std::string source;  // "<source> (<date>)"
};

// A GPU server without its scale-out NICs, per GPU. A GPU with no entry: the price of the H100 SXM
// entry scaled by TDP, said in the source.
Price server_price_per_gpu(std::string_view gpu_id, double tdp_w);
Price nic_price(double speed_Gbps);
Price switch_price_per_port(std::string_view technology, double speed_Gbps);
Price copper_cable_price(double speed_Gbps);
Price optical_cable_price(double speed_Gbps);
Price transceiver_price(double speed_Gbps);

}  // namespace clustersim
