#pragma once
// How many routed tokens the busiest expert-parallel rank takes (model.moe: load_distribution,
// load_imbalance, capacity_factor, token_dropping). The generator sizes every rank's expert GEMMs and
// all-to-alls by it: they wait for the busiest. Formulas and sources in moe_routing.cpp.
#include "workloads/workload_spec.hpp"

namespace clustersim {

// The expected largest of n independent standard normal draws (0 for n = 1; 1/sqrt(pi) for 2).
double expected_max_of_standard_normals(int n);

// Routed token copies the busiest of `ep` ranks receives when each rank routes `tokens` tokens to
// top_k experts: the mean tokens x top_k, times the load distribution's imbalance, capped at
// capacity_factor x the mean with token dropping.
double busiest_rank_routed_tokens(const MoeSpec& moe, int ep, double tokens);

}  // namespace clustersim
