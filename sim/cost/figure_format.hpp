#pragma once
// How the comparison's text table and its HTML page print money, durations and numbers (one rule).
#include <cstdio>
#include <string>

namespace clustersim::figure_format {

inline constexpr double kSecondsPerDay = 86400.0;

inline std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// 1234567 -> "1.23 M$".
inline std::string money(double usd) {
  if (usd >= 1e9) return fmt("%.2f B$", usd / 1e9);
  if (usd >= 1e6) return fmt("%.2f M$", usd / 1e6);
  if (usd >= 1e3) return fmt("%.1f k$", usd / 1e3);
  return fmt("%.2f $", usd);
}

// Seconds as days, hours or seconds: "12.3 d", "4.5 h", "30 s".
inline std::string duration(double s) {
  if (s >= kSecondsPerDay) return fmt("%.1f d", s / kSecondsPerDay);
  if (s >= 3600) return fmt("%.1f h", s / 3600);
  return fmt("%.0f s", s);
}

}  // namespace clustersim::figure_format
