#pragma once
// The checkpoint interval that minimises the expected time lost to checkpoints and recomputation:
// Young's first-order optimum sqrt(2 C M) (J. W. Young, "A first order approximation to the optimum
// checkpoint interval", CACM 17(9), 1974), with C the checkpoint's stall and M the job's mean time
// between failures; Daly's higher-order form (J. T. Daly, "A higher order estimate of the optimum
// checkpoint interval for restart dumps", FGCS 22(3), 2006) for C not small against M.
namespace clustersim {

double young_interval_s(double checkpoint_s, double mtbf_s);
// Daly 2006, eq. 37: sqrt(2 C M) [1 + sqrt(C / 2M) / 3 + C / 18M] - C for C < 2M, else M.
double daly_interval_s(double checkpoint_s, double mtbf_s);

}  // namespace clustersim
