#pragma once
// Portable random draws from std::mt19937_64: the standard library's distributions differ between
// implementations, so every seeded simulation (serving traffic, the time-to-train Monte Carlo) draws
// through these transforms and gives the same bytes everywhere.
#include <random>

namespace clustersim::random_draw {

double uniform01(std::mt19937_64& g);  // [0, 1) with 53 random bits
double exponential(std::mt19937_64& g, double rate);
double standard_normal(std::mt19937_64& g);      // Box-Muller (one value per two uniforms)
double gamma(std::mt19937_64& g, double shape);  // Marsaglia-Tsang (2000), scale 1
double lognormal(std::mt19937_64& g, double mean, double cv);

}  // namespace clustersim::random_draw
