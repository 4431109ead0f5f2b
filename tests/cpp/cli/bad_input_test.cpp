// Bad input: exit status 2 and a message naming the file, the JSON path and what was expected. A bad value
// of a spec is a row of the catalogue (bad_inputs.json, bad_input_table_test); these are the cases that
// need more than one run or a check the catalogue cannot state.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace clustersim {
namespace {

using testing::expect_refused;
using testing::run_cli;
using testing::write_temp;

const char* kGoodCluster = R"({
  "name": "small", "gpu": "h100-sxm5-80gb", "nodes": 2,
  "node": {"gpus": 8, "scale_up": {"type": "nvswitch", "bandwidth_GBps": 450, "latency_us": 0.7},
           "nics": 8, "nic_bandwidth_Gbps": 400},
  "fabric": {"type": "fat_tree", "tiers": 2, "switch_radix": 64, "oversubscription": 1.0,
             "rail_optimized": true, "link_latency_us": 0.6, "technology": "infiniband"}
})";

const char* kGoodWorkload = R"({
  "name": "tiny-gpt",
  "model": {"type": "transformer", "layers": 2, "hidden": 1024, "heads": 16, "ffn_hidden": 4096,
            "seq_len": 1024, "vocab": 32000},
  "training": {"global_batch": 32, "micro_batch": 1, "precision": "bf16", "recompute": "none"},
  "parallelism": {"tp": 1, "pp": 1}
})";

// The good specs, written to files, and `clustersim simulate` over them: "simulate [OPTIONS ]--cluster
// CLUSTER --workload WORKLOAD".
struct GoodSpecs {
  std::string cluster = write_temp("good_cluster.json", kGoodCluster);
  std::string workload = write_temp("good_workload.json", kGoodWorkload);

  std::string simulate(const std::string& options = "") const {
    return "simulate " + (options.empty() ? "" : options + " ") + "--cluster " + cluster + " --workload " + workload;
  }
};

void expect_refused(const std::string& args, const std::string& expected_in_stderr) {
  const auto r = run_cli(args);
  EXPECT_EQ(r.status, 2) << args << "\nstderr: " << r.err;
  EXPECT_NE(r.err.find(expected_in_stderr), std::string::npos) << args << "\nstderr: " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(CliBadInput, AnUnknownCpCommListsTheKnownMethods) {
  const GoodSpecs good;
  expect_refused(good.simulate() + " --set workload.parallelism.cp_comm=all_to_all",
                 good.workload + ": /parallelism/cp_comm: expected one of ring, all_gather, got \"all_to_all\"");
}

// The fp8 `recipe` on the good specs: refused on `gpu` with exit 2 and `error` (the workload's JSON path
// and why); the good cluster's H100 runs it.
void expect_recipe_refused_on(const std::string& recipe, const std::string& gpu, const std::string& error) {
  const GoodSpecs good;
  const std::string base = good.simulate("--fidelity analytical") +
                           " --set workload.training.precision=fp8 --set workload.training.fp8_recipe=" + recipe;
  expect_refused(base + " --set cluster.gpu=" + gpu, good.workload + ": " + error);
  const auto ok = run_cli(base);
  EXPECT_EQ(ok.status, 0) << ok.err;
}

// torchao's tensorwise recipe needs fp8 tensor cores: refused on an A100, accepted on an H100.
TEST(CliBadInput, TensorwiseFp8OnAGpuWithoutFp8IsRefused) {
  expect_recipe_refused_on("tensorwise", "a100-sxm4-80gb",
                           "/training/precision: the GPU a100-sxm4-80gb has no fp8 tensor cores");
}

// DeepSeek-V3's blockwise fp8 needs block-scaled fp8 GEMM kernels (Hopper, Blackwell): exit 2 on an
// MI300X at /training/fp8_recipe, naming the recipes it runs; the H100 of the good cluster runs it.
TEST(CliBadInput, BlockwiseFp8OnAGpuWithoutItsKernelsIsRefused) {
  expect_recipe_refused_on("blockwise", "mi300x",
                           "/training/fp8_recipe: the GPU mi300x has no block-scaled fp8 GEMM kernels");
}

// A precision the GPU lacks: nvfp4 / mxfp8 on an MI300X (CDNA 3 has neither block-scaled format), nvfp4 on
// an MI355X (it runs MXFP4, not NVFP4): exit 2 naming the recipes the GPU runs; mxfp8 on the MI355X runs.
TEST(CliBadInput, ABlockScaledRecipeTheGpuLacksListsTheRecipesItRuns) {
  const GoodSpecs good;
  const std::string base = good.simulate("--fidelity analytical") + " --set workload.training.precision=fp8";
  for (const char* recipe : {"nvfp4", "mxfp8"})
    expect_refused(base + " --set cluster.gpu=mi300x --set workload.training.fp8_recipe=" + recipe,
                   good.workload + ": /training/fp8_recipe: the GPU mi300x has no " + recipe +
                       " tensor cores: expected one of delayed, current, tensorwise (the recipes it runs), got \"" +
                       recipe + "\"");
  expect_refused(base + " --set cluster.gpu=mi355x --set workload.training.fp8_recipe=nvfp4",
                 good.workload +
                     ": /training/fp8_recipe: the GPU mi355x has no nvfp4 tensor cores: expected one of delayed, "
                     "current, mxfp8, tensorwise (the recipes it runs), got \"nvfp4\"");
  const auto ok = run_cli(base + " --set cluster.gpu=mi355x --set workload.training.fp8_recipe=mxfp8");
  EXPECT_EQ(ok.status, 0) << ok.err;
}

// An unknown GPU names the catalogue's ids, the 2026 entries among them.
TEST(CliBadInput, AnUnknownGpuListsTheCatalogue) {
  const GoodSpecs good;
  expect_refused(good.simulate() + " --set cluster.gpu=mi400x",
                 good.cluster +
                     ": /gpu: unknown GPU 'mi400x'; known: a100-sxm4-40gb, a100-sxm4-80gb, b200, b300, gb200, gb300, "
                     "h100-pcie-80gb, h100-sxm5-80gb, h200-nvl-141gb, h200-sxm-141gb, l4, mi300x, mi325x, mi355x, "
                     "v100-sxm2-32gb");
}

TEST(CliBadInput, AnUnknownStackListsTheKnownStacks) {
  const GoodSpecs good;
  expect_refused(good.simulate() + " --set workload.training.stack=tf1",
                 good.workload +
                     ": /training/stack: expected one of jax-xla, megatron-core, megatron-deepspeed, "
                     "pytorch-fsdp2, got \"tf1\"");
}

// The keys added with the software stacks, fp8, the memory recipes, fabric transports, PCIe and
// power caps, given huge, tiny, negative, out-of-range (1e400 reads as the string it is) and
// wrong-type values: each is refused with exit 2, the file, the JSON path and what was expected;
// never a crash, an internal error or a step of 1e300 seconds.
struct ExtremeCase {
  std::string set;            // "cluster.<key>=<value>" or "workload.<key>=<value>"
  std::string expected_path;  // the JSON path named
  std::string also = "";      // another override the case needs (e.g. precision fp8)
};

TEST(CliBadInput, NewKeysRefuseHugeTinyNegativeAndWrongTypeValues) {
  const std::string cluster = write_temp("extreme_cluster.json", kGoodCluster);
  const std::string workload = write_temp("extreme_workload.json", kGoodWorkload);
  const std::string fp8 = "workload.training.precision=fp8";
  std::vector<ExtremeCase> cases;
  const auto each = [&](const std::string& key, const std::string& path, std::vector<std::string> values,
                        const std::string& also = "") {
    for (const auto& v : values)
      cases.push_back({key + "=" + v, path, also});
  };
  each("workload.training.stack", "/training/stack", {"7", "true", "[]", "\"\""});
  each("workload.training.fp8_recipe", "/training/fp8_recipe", {"\"fp9\"", "3", "true", "{}"}, fp8);
  each("workload.training.fp8_weight_cache", "/training/fp8_weight_cache", {"\"yes\"", "1", "[]"}, fp8);
  each("workload.parallelism.cp_comm", "/parallelism/cp_comm", {"\"allgather\"", "\"p2p\"", "2", "true", "[]"});
  each("workload.training.grad_buffer", "/training/grad_buffer", {"\"sometimes\"", "1", "false"});
  each("workload.training.cross_entropy", "/training/cross_entropy", {"\"fused9\"", "2.5", "{}"});
  each("workload.training.host_op_us", "/training/host_op_us", {"-1", "1e308", "1e400", "\"fast\"", "true"});
  each("cluster.fabric.transport", "/fabric/transport", {"\"carrier-pigeon\"", "7", "[]"});
  each("cluster.node.nics", "/node/nics", {"-1", "1e30", "2.5", "\"eight\"", "true"});
  each("cluster.node.pcie_bandwidth_GBps", "/node/pcie_bandwidth_GBps",
       {"-1", "0", "1e308", "1e-300", "1e400", "\"x\""});
  each("cluster.node.pcie_switches", "/node/pcie_switches", {"-1", "1e30", "0.5", "\"x\""});
  each("cluster.node.nic_bandwidth_Gbps", "/node/nic_bandwidth_Gbps", {"1e308", "1e-300", "-1e400"});
  each("cluster.node.scale_up.bandwidth_GBps", "/node/scale_up/bandwidth_GBps", {"1e308", "1e-300"});
  each("cluster.node.scale_up.latency_us", "/node/scale_up/latency_us", {"1e308", "-1"});
  each("cluster.fabric.link_latency_us", "/fabric/link_latency_us", {"1e308"});
  each("cluster.power.pue", "/power/pue", {"1e308", "0.5", "\"x\""});
  each("cluster.power.gpu_tensor_w", "/power/gpu_tensor_w", {"-1", "1e308", "1e30", "\"x\""});
  each("cluster.power.host_w_per_gpu", "/power/host_w_per_gpu", {"1e308"});
  each("cluster.power.switch_w", "/power/switch_w", {"1e308"});
  each("cluster.cost.electricity_usd_per_kwh", "/cost/electricity_usd_per_kwh", {"1e308", "-1"});
  // The GPU's power-cap keys (an inline GPU on a catalogue base).
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{{"tdp_W", "-1"},
                                                                                   {"tdp_W", "\"x\""},
                                                                                   {"tensor_boost_W", "-5"},
                                                                                   {"clock_power_exponent", "0"},
                                                                                   {"clock_power_exponent", "[]"},
                                                                                   {"power_response_us", "-1"}})
    cases.push_back({"cluster.gpu={\"base\": \"h100-sxm5-80gb\", \"" + key + "\": " + value + "}", "/gpu/" + key});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.set);
    std::string args =
        "simulate --fidelity analytical --cluster " + cluster + " --workload " + workload + " --set '" + c.set + "'";
    if (!c.also.empty()) args += " --set " + c.also;
    const auto r = expect_refused(args);
    const std::string file = c.set.rfind("cluster.", 0) == 0 ? cluster : workload;
    EXPECT_NE(r.err.find(file + ": " + c.expected_path + ": "), std::string::npos) << r.err;
    EXPECT_TRUE(r.err.find("expected") != std::string::npos || r.err.find("one of") != std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(CliBadInput, MalformedJsonNamesLineAndColumn) {
  const std::string cluster = write_temp("malformed.json", "{\n  \"nodes\": 2,\n  \"gpu\": \n}");
  expect_refused("simulate --cluster " + cluster + " --workload gpt3-1.3b", "malformed JSON at line 4, column 1");
}

TEST(CliBadInput, ANumberBeyondADoubleIsMalformedJsonWithItsPosition) {
  const std::string cluster = write_temp("overflow.json", "{\n  \"name\": \"x\",\n  \"nodes\": 1e400\n}");
  expect_refused("simulate --cluster " + cluster + " --workload gpt3-1.3b",
                 cluster +
                     ": /nodes: malformed JSON at line 3, column 12: the number 1e400 is beyond the range "
                     "of a double");
}

TEST(CliBadInput, MissingFileIsRefused) {
  expect_refused("simulate --cluster /nonexistent/c.json --workload gpt3-1.3b",
                 "/nonexistent/c.json: (document): cannot read the cluster spec file");
}

TEST(CliBadInput, UnknownPresetListsTheKnownOnes) {
  expect_refused("simulate --cluster no-such-cluster --workload gpt3-1.3b", "dgx-h100-superpod");
}

TEST(CliBadInput, UnknownFidelityIsRefused) {
  expect_refused("simulate --cluster dgx-h100 --workload gpt3-1.3b --fidelity packet", "expected one of flow");
}

TEST(CliBadInput, AmbiguousOverrideIsRefused) {
  expect_refused("simulate --cluster dgx-h100 --workload gpt3-1.3b --set name=x", "prefix it with cluster.");
}

TEST(CliBadInput, UnknownOptionIsAUsageError) {
  expect_refused("simulate --cluster dgx-h100 --workload gpt3-1.3b --frobnicate", "unknown option --frobnicate");
}

// An algorithm the group cannot run is refused, naming the option and the communicator; never a
// silent fallback to another algorithm.
TEST(CliBadInput, AnAlgorithmTheGroupCannotRunIsRefused) {
  expect_refused("collective --cluster dgx-h100-superpod --set nodes=2 --ranks 0-15 --max-bytes 1M --algorithm nvls",
                 "error: --algorithm: communicator 'sweep' (16 ranks): the nvls algorithm cannot run this "
                 "all_reduce: NVLS reduces inside one NVSwitch domain");
  expect_refused(
      "collective --cluster dgx-h100-superpod --set nodes=2 --ranks 0-15 --op all_to_all --max-bytes 1M "
      "--algorithm tree",
      "error: --algorithm: communicator 'sweep' (16 ranks): the tree algorithm cannot run all_to_all");
  expect_refused("simulate --cluster dgx-a100-superpod --set cluster.nodes=2 --workload gpt3-1.3b --algorithm dp=nvls",
                 "error: --algorithm dp: communicator 'dp' (");
}

TEST(CliBadInput, NoCommandPrintsEveryCommandNameWhole) {
  // Exit 2 without a command; the list names every command in full, then its summary after a space.
  const auto r = expect_refused("");
  for (const char* name :
       {"simulate", "compare", "collective", "calibrate-network", "calibrate", "validate", "presets", "topology"})
    EXPECT_NE(r.out.find(std::string("\n  ") + name + " "), std::string::npos) << name << " in\n" << r.out;
}

}  // namespace
}  // namespace clustersim
