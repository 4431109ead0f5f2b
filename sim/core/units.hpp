#pragma once
// Unit conversions. Internally everything is SI: seconds, bytes, bytes per second, flop per second,
// watts, joules, US dollars. Specs use the units their field names carry (_GBps, _Gbps, _us, ...);
// convert at the boundary with these constants and nowhere else.

namespace clustersim::units {

inline constexpr double kGB = 1e9;                 // decimal gigabyte (vendors' GB/s figures)
inline constexpr double kGiB = 1073741824.0;       // binary gibibyte (memory capacities)
inline constexpr double kMiB = 1048576.0;
inline constexpr double kGbpsToBps = 1e9 / 8.0;    // network line rates are in bits per second
inline constexpr double kGBpsToBps = 1e9;
inline constexpr double kUsToS = 1e-6;
inline constexpr double kNsToS = 1e-9;
inline constexpr double kTFLOPs = 1e12;

}  // namespace clustersim::units
