// The cost model (sim/cost): capex from the built topology's counts, $/hour, $/step, $/token, TCO,
// price overrides, and the design comparison's Pareto front.
#include "sim/cost/cost_model.hpp"

#include <map>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "sim/cost/design_comparison.hpp"
#include "sim/cost/price_catalogue.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim_test_support.hpp"
#include "topologies/cluster.hpp"
#include "topologies/topology_metrics.hpp"

namespace clustersim {
namespace {

CostInputs simple_inputs() {
  CostInputs in;
  in.bill_of_materials = {{"gpu_server", 8, 30000, 240000, "test"}, {"leaf_switch", 2, 36000, 72000, "test"}};
  in.other_capex_usd = 38000;  // capex 350,000 $
  in.step_time_s = 3.6;        // 1,000 steps per hour
  in.tokens_per_step = 1e6;
  in.facility_avg_kw = 10.0;
  in.electricity_usd_per_kwh = 0.1;
  in.amortization_years = 5;
  in.operations_usd_per_year = 8766;  // 1 $/h
  return in;
}

// capex 350,000 $ over 5 x 8,766 h = 7.985... $/h; energy 10 kW x 0.1 $/kWh = 1 $/h; operations 1 $/h.
TEST(CostModel, HourlyStepAndTokenCostsFollowTheirDefinitions) {
  const CostStats c = compute_cost(simple_inputs());
  const double amortized = 350000.0 / (5 * 8766.0);
  EXPECT_DOUBLE_EQ(c.capex_usd, 350000.0);
  EXPECT_NEAR(c.amortized_usd_per_hour, amortized, 1e-9);
  EXPECT_NEAR(c.energy_usd_per_hour, 1.0, 1e-12);
  EXPECT_NEAR(c.operations_usd_per_hour, 1.0, 1e-12);
  EXPECT_NEAR(c.usd_per_hour, amortized + 2.0, 1e-9);
  EXPECT_NEAR(c.usd_per_step, (amortized + 2.0) / 1000.0, 1e-12);
  EXPECT_NEAR(c.usd_per_million_tokens, (amortized + 2.0) / 1000.0, 1e-12);
  EXPECT_NEAR(c.tco_usd, 350000.0 + 2.0 * 5 * 8766.0, 1e-6);
  EXPECT_EQ(c.bill_of_materials.back().item, "other_capex");
}

TEST(CostModel, SameHardwareFasterDesignCostsProportionallyLessPerToken) {
  CostInputs fast = simple_inputs();
  fast.step_time_s /= 2.5;
  const CostStats slow_cost = compute_cost(simple_inputs());
  const CostStats fast_cost = compute_cost(fast);
  EXPECT_DOUBLE_EQ(fast_cost.capex_usd, slow_cost.capex_usd);
  EXPECT_NEAR(fast_cost.usd_per_million_tokens * 2.5, slow_cost.usd_per_million_tokens, 1e-12);
}

double line_total(const std::vector<CostLine>& bom, const std::string& item) {
  double total = 0.0;
  for (const CostLine& l : bom)
    if (l.item == item) total += l.total_usd;
  return total;
}

long device_count(const TopologyMetrics& m, const std::string& kind) {
  for (const DeviceCount& d : m.devices)
    if (d.kind == kind) return d.count;
  return 0;
}

// A fat-tree built in two planes has twice the leaf and spine switches of one plane; each switch
// costs its radix times the price per port, so the switch capex doubles too, while the servers and
// NICs stay the same. (Each plane's links run at half the NIC's rate, so the catalogue would price a
// 200G switch: the price per port is fixed here to compare counts.)
TEST(CostModel, SwitchCapexIsTheCountsTimesRadixTimesPricePerPort) {
  const GpuSpec gpu = find_gpu("h100-sxm5-80gb", "test", "/gpu");
  EXPECT_DOUBLE_EQ(64 * switch_price_per_port("infiniband", 400).usd, 36000.0);  // 64-port NDR, 2024
  const double per_switch = 64 * 500.0;
  std::map<int, double> switch_usd, switches;
  for (int planes : {1, 2}) {
    ClusterSpec spec = testing::fat_tree_spec(8, 8, 8);
    spec.fabric.planes = planes;
    spec.cost.prices.switch_usd_per_port = 500.0;
    const Cluster cluster = Cluster::build(spec);
    const TopologyMetrics m = compute_metrics(cluster);
    const auto bom = bill_of_materials(cluster, m, gpu);
    switches[planes] = static_cast<double>(device_count(m, "leaf_switch") + device_count(m, "spine_switch"));
    switch_usd[planes] = line_total(bom, "leaf_switch") + line_total(bom, "spine_switch");
    EXPECT_DOUBLE_EQ(switch_usd[planes], switches[planes] * per_switch) << planes;
    EXPECT_DOUBLE_EQ(line_total(bom, "gpu_server"), 64 * 37400.0);
    EXPECT_DOUBLE_EQ(line_total(bom, "nic"), 64 * 2200.0);
  }
  ASSERT_DOUBLE_EQ(switches[2], 2 * switches[1]);
  EXPECT_DOUBLE_EQ(switch_usd[2], 2 * switch_usd[1]);
}

TEST(CostModel, PriceOverridesReplaceTheCatalogue) {
  ClusterSpec spec = testing::fat_tree_spec(8, 8, 8);
  spec.cost.prices.switch_usd_per_port = 1000;
  spec.cost.prices.server_usd_per_gpu = 10000;
  spec.cost.prices.transceiver_usd = 0;
  const Cluster cluster = Cluster::build(spec);
  const TopologyMetrics m = compute_metrics(cluster);
  const auto bom = bill_of_materials(cluster, m, find_gpu("h100-sxm5-80gb", "test", "/gpu"));
  for (const CostLine& l : bom) {
    if (l.item == "leaf_switch" || l.item == "spine_switch") {
      EXPECT_DOUBLE_EQ(l.unit_usd, 64 * 1000.0);
      EXPECT_NE(l.source.find("cluster spec"), std::string::npos);
    }
    if (l.item == "gpu_server") {
      EXPECT_DOUBLE_EQ(l.total_usd, 64 * 10000.0);
    }
    if (l.item == "transceiver") {
      EXPECT_DOUBLE_EQ(l.total_usd, 0.0);
    }
  }
}

TEST(CostSpec, NegativePricesAreRefusedWithTheirPath) {
  const std::string head = R"({"gpu": "h100-sxm5-80gb", "node": {"scale_up": {"bandwidth_GBps": 450}}, )";
  SpecError e =
      testing::spec_error_of([&] { parse_cluster_spec(head + R"("cost": {"prices": {"nic_usd": -5}}})", "c.json"); });
  EXPECT_EQ(e.file(), "c.json");
  EXPECT_EQ(e.json_path(), "/cost/prices/nic_usd");
  e = testing::spec_error_of([&] { parse_cluster_spec(head + R"("cost": {"electricity_usd_per_kwh": -0.1}})", "c"); });
  EXPECT_EQ(e.json_path(), "/cost/electricity_usd_per_kwh");
  e = testing::spec_error_of([&] { parse_cluster_spec(head + R"("cost": {"amortization_years": 0}})", "c"); });
  EXPECT_EQ(e.json_path(), "/cost/amortization_years");
  const ClusterSpec ok =
      parse_cluster_spec(head + R"("cost": {"other_capex_usd": 5, "prices": {"switch_usd_per_port": 700}}})", "c");
  EXPECT_EQ(ok.cost.prices.switch_usd_per_port, 700.0);
  EXPECT_EQ(parse_cluster_spec(cluster_spec_to_json(ok), "c"), ok);
}

TEST(PriceCatalogue, EveryCatalogueGpuHasADatedSourcedServerPrice) {
  for (const std::string& id : gpu_catalogue_ids()) {
    const Price p = server_price_per_gpu(id, 0.0);
    EXPECT_GT(p.usd, 0.0) << id;
    EXPECT_EQ(p.source.find("no price"), std::string::npos) << id;
    EXPECT_NE(p.source.find("(20"), std::string::npos) << id << ": " << p.source;  // "(<year>...)"
  }
}

// --- design comparison --------------------------------------------------------------------------

DesignRow row(const std::string& name, double step_s, double usd_per_step, bool fits) {
  Report r;
  r.step_time_s = step_s;
  r.tokens_per_s = 1e6 / step_s;  // 1 M tokens per step
  r.memory.fits = fits;
  CostStats c;
  c.usd_per_step = usd_per_step;
  r.cost = c;
  DesignRow d;
  d.design = name;
  d.report = r;
  return d;
}

TEST(DesignComparison, ParetoFrontOnTimeAndCostAmongDesignsThatFit) {
  // 1e9 tokens = 1,000 steps. fast: 1,000 s, 2,000 $; cheap: 2,000 s, 1,000 $; worse: 2,000 s, 2,000 $;
  // huge: fastest and cheapest but does not fit in memory.
  const DesignComparison c = compare_designs("w", 1e9,
                                             {row("fast", 1.0, 2.0, true), row("cheap", 2.0, 1.0, true),
                                              row("worse", 2.0, 2.0, true), row("huge", 0.5, 0.5, false)});
  ASSERT_EQ(c.rows.size(), 4u);
  EXPECT_NEAR(c.rows[0].train_time_s, 1000.0, 1e-9);
  EXPECT_NEAR(c.rows[0].train_cost_usd, 2000.0, 1e-9);
  EXPECT_TRUE(c.rows[0].pareto);
  EXPECT_TRUE(c.rows[1].pareto);
  EXPECT_FALSE(c.rows[2].pareto);
  EXPECT_FALSE(c.rows[3].pareto);
  EXPECT_EQ(c.pareto_among, "designs that fit in memory");
  const DesignComparison none_fit = compare_designs("w", 1e9, {row("a", 1.0, 2.0, false), row("b", 2.0, 2.0, false)});
  EXPECT_TRUE(none_fit.rows[0].pareto);
  EXPECT_FALSE(none_fit.rows[1].pareto);
  EXPECT_NE(comparison_to_text(c).find("fast"), std::string::npos);
}

// The same design named three times (as `compare --cluster x --cluster x --cluster x`, or Python's
// compare([x, x, x])) is told apart by the comparison itself, for both front ends.
TEST(DesignComparison, RepeatedNamesAreNumbered) {
  const DesignComparison c = compare_designs(
      "w", 1e9,
      {row("x", 1.0, 2.0, true), row("y", 1.0, 2.0, true), row("x", 2.0, 1.0, true), row("x", 3.0, 3.0, true)});
  ASSERT_EQ(c.rows.size(), 4u);
  EXPECT_EQ(c.rows[0].design, "x");
  EXPECT_EQ(c.rows[1].design, "y");
  EXPECT_EQ(c.rows[2].design, "x #2");
  EXPECT_EQ(c.rows[3].design, "x #3");
}

}  // namespace
}  // namespace clustersim
