#pragma once
// Stragglers: each GPU's step takes its nominal time times a slowdown X (thermal throttling, clocks,
// a slow link), independent across GPUs and steps, lognormal with mean 1 and coefficient of
// variation cv. A synchronous step waits for the slowest of its N GPUs, so the expected step grows
// by E[max of N X] (the largest order statistic): E[max] = integral of x d(F(x)^N).
namespace clustersim {

// The lognormal slowdown's parameters: sigma^2 = ln(1 + cv^2), mu = -sigma^2 / 2 (mean 1).
struct LognormalSlowdown {
  double mu = 0.0;
  double sigma = 0.0;
};
LognormalSlowdown lognormal_slowdown(double cv);

// E[max of n independent slowdowns] (1 for cv = 0 or n = 1), by quadrature of
// integral exp(mu + sigma z) n Phi(z)^(n-1) phi(z) dz; relative error below 1e-9 for n <= 2^24.
double expected_max_slowdown(double cv, double n);

}  // namespace clustersim
