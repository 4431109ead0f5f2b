// Software stacks (training.stack): the registry and its sources, the spec key (defaults the workload
// may override, unknown names refused at their path), and the generator honouring a profile: fused
// and unfused kernels counted by hand, blocking pipeline sends, the fixed per-step costs.
#include "workloads/software_stack.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "../op_counts.hpp"
#include "../spec_error_of.hpp"
#include "sim/core/error.hpp"
#include "workloads/stack_memory_passes.hpp"
#include "workloads/transformer_generator.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {
namespace {

nlohmann::json small_workload() {
  return nlohmann::json::parse(R"({
    "name": "small",
    "model": {"layers": 2, "hidden": 256, "heads": 4, "ffn_hidden": 1024, "seq_len": 128, "vocab": 1000,
              "tied_embeddings": true},
    "training": {"global_batch": 8, "micro_batch": 2}
  })");
}

WorkloadSpec parse(const nlohmann::json& j) {
  return parse_workload_spec(j.dump(), "w.json");
}

// `j` parsed, its parallelism resolved over `gpus` GPUs.
WorkloadSpec resolved(const nlohmann::json& j, int gpus) {
  WorkloadSpec w = parse(j);
  resolve_parallelism(w, gpus);
  return w;
}

// The small workload under ZeRO-3 over dp 4 on pytorch-fsdp2 (global batch 8 / micro-batch 2 / dp 4 = 1
// micro-batch).
nlohmann::json fsdp2_zero3_dp4() {
  nlohmann::json j = small_workload();
  j["parallelism"] = {{"dp", 4}, {"zero_stage", 3}};
  j["training"]["stack"] = "pytorch-fsdp2";
  return j;
}

using testing::count;
using testing::expect_counts;

std::size_t count_kind(const OpTable& ops, OpKind kind) {
  std::size_t n = 0;
  for (OpId i = 0; i < ops.size(); ++i)
    n += ops.kind(i) == kind ? 1 : 0;
  return n;
}

TEST(SoftwareStack, EveryProfileLoadsWithASourceForEveryValue) {
  const auto ids = software_stack_ids();
  for (const char* id : {"megatron-core", "megatron-deepspeed", "pytorch-fsdp2", "jax-xla"})
    EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
  for (const auto& id : ids) {
    const StackProfile s = find_software_stack(id);
    EXPECT_EQ(s.id, id);
    EXPECT_FALSE(s.name.empty());
    // defaults + 3 fusions + optimizer_kernels + pipeline_p2p + 2 step costs, each with its source,
    // + the optional fusions (rmsnorm, rope, gqa, swiglu), pipeline instruction cost, memory passes and
    // host synchronisations the profile gives
    const std::size_t optional =
        s.sources.count("fused.rmsnorm") + s.sources.count("fused.rope") + s.sources.count("fused.gqa") +
        s.sources.count("fused.swiglu") + s.sources.count("pipeline_instruction_us") +
        s.sources.count("memory_passes.fsdp_all_gather_copy_out") +
        s.sources.count("memory_passes.fsdp_reduce_scatter_copy_in") + s.sources.count("memory_passes.optimizer") +
        s.sources.count("host_syncs.micro_batch_load") + s.sources.count("host_syncs.partitioned_pipeline_transfer");
    EXPECT_EQ(s.sources.size(), s.defaults.size() + 7 + optional) << id;
    for (const auto& [key, source] : s.sources)
      EXPECT_GT(source.size(), 20u) << id << " " << key;
    // Every default is a valid workload value: a workload naming the stack parses.
    nlohmann::json j = small_workload();
    j["training"]["stack"] = id;
    EXPECT_EQ(parse(j).training.stack, id);
  }
}

TEST(SoftwareStack, TheDefaultStackIsMegatronCoreAndKeepsTheBuiltInDefaults) {
  const WorkloadSpec w = parse(small_workload());
  EXPECT_EQ(w.training.stack, "");
  EXPECT_EQ(w.training.effective_stack(), "megatron-core");
  EXPECT_EQ(w.training.attention, "flash");
  EXPECT_EQ(w.training.dropout, 0.0);
  EXPECT_EQ(w.training.host_op_us, 0.0);
  EXPECT_TRUE(w.parallelism.overlap_grad_reduce);
  EXPECT_FALSE(w.parallelism.overlap_param_gather);
  EXPECT_FALSE(w.parallelism.tp_comm_overlap);
  EXPECT_EQ(w.parallelism.zero_stage, 0);
}

TEST(SoftwareStack, AProfileSetsDefaultsThatExplicitKeysOverride) {
  nlohmann::json j = small_workload();
  j["training"]["stack"] = "megatron-deepspeed";
  const WorkloadSpec old = parse(j);
  EXPECT_EQ(old.training.attention, "unfused");
  EXPECT_EQ(old.training.dropout, 0.1);
  EXPECT_EQ(old.training.host_op_us, 70.0);
  EXPECT_FALSE(old.parallelism.overlap_grad_reduce);

  j["training"]["attention"] = "flash";
  j["parallelism"] = {{"overlap_grad_reduce", true}};
  const WorkloadSpec given = parse(j);
  EXPECT_EQ(given.training.attention, "flash");
  EXPECT_TRUE(given.parallelism.overlap_grad_reduce);
  EXPECT_EQ(given.training.dropout, 0.1);  // still the stack's

  j = small_workload();
  j["training"]["stack"] = "pytorch-fsdp2";
  EXPECT_EQ(parse(j).parallelism.zero_stage, 3);
  j["parallelism"] = {{"zero_stage", 1}};
  EXPECT_EQ(parse(j).parallelism.zero_stage, 1);
}

TEST(SoftwareStack, OverridesNameTheStackToo) {
  const WorkloadSpec w = load_workload_spec("gpt3-1.3b", {{"training.stack", "jax-xla"}});
  EXPECT_EQ(w.training.stack, "jax-xla");
  // The stack's defaults fill what the preset leaves out; the preset's explicit zero_stage 0 wins.
  EXPECT_TRUE(w.parallelism.overlap_param_gather);
  EXPECT_EQ(w.parallelism.zero_stage, 0);
}

TEST(SoftwareStack, AnUnknownStackIsRefusedAtItsPathWithTheAllowedValues) {
  nlohmann::json j = small_workload();
  j["training"]["stack"] = "megatron-lm-1999";
  const SpecError e = testing::spec_error_of([&] { parse(j); });
  EXPECT_EQ(e.file(), "w.json");
  EXPECT_EQ(e.json_path(), "/training/stack");
  for (const auto& id : software_stack_ids())
    EXPECT_NE(e.message().find(id), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("megatron-lm-1999"), std::string::npos);
  j["training"]["stack"] = 3;
  EXPECT_THROW(parse(j), SpecError);
  EXPECT_THROW(find_software_stack("nope", "x.json", "/training/stack"), SpecError);
}

// A measured profile (calibrate --from-trace writes them) is a file that training.stack names by a path
// relative to the spec; it is written as canonical text that reads back equal, byte for byte.
TEST(SoftwareStack, AProfileFileIsNamedByItsPathRelativeToTheSpec) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("clustersim_stack_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "profiles");
  StackProfile mine = find_software_stack("megatron-deepspeed");
  mine.id = "mine";
  mine.kernel_time_scale[static_cast<std::size_t>(KernelClass::gemm)] = 0.8;
  mine.sources["kernel_time_scale.gemm"] = "fitted in this test, by hand";
  mine.step_fixed_s = 0.002;
  mine.sources["step.fixed_s"] = "fitted in this test, by hand";
  mine.pipeline_instruction_us = 1500.0;  // no built-in stack sets one any more
  mine.sources["pipeline_instruction_us"] = "fitted in this test, by hand";
  const std::string text = software_stack_to_json(mine);
  const std::string profile = (dir / "profiles" / "mine.json").string();
  std::ofstream(profile, std::ios::binary) << text;
  const StackProfile back = find_software_stack(profile);
  EXPECT_EQ(back, mine);
  EXPECT_EQ(software_stack_to_json(back), text);

  nlohmann::json j = small_workload();
  j["training"]["stack"] = "profiles/mine.json";
  const std::string spec = (dir / "w.json").string();
  const WorkloadSpec w = parse_workload_spec(j.dump(), spec);
  EXPECT_EQ(w.training.stack, profile);
  EXPECT_EQ(w.training.host_op_us, 70.0);  // the profile's defaults apply (megatron-deepspeed's 70 us)
  EXPECT_EQ(find_software_stack(w.training.effective_stack()).id, "mine");

  j["training"]["stack"] = "profiles/nope.json";
  {
    const SpecError e = testing::spec_error_of([&] { parse_workload_spec(j.dump(), spec); });
    EXPECT_EQ(e.file(), spec);
    EXPECT_EQ(e.json_path(), "/training/stack");
    EXPECT_NE(e.message().find("nope.json"), std::string::npos) << e.message();
  }
  // A bad value of the profile file: the file and the value's path.
  const auto expect_refused_at = [&](const nlohmann::json& profile_json, const std::string& path) {
    std::ofstream(profile, std::ios::binary) << profile_json.dump();
    try {
      find_software_stack(profile, spec, "/training/stack");
      ADD_FAILURE() << "expected a SpecError at " << path;
    } catch (const SpecError& e) {
      EXPECT_EQ(e.file(), profile);
      EXPECT_EQ(e.json_path(), path);
    }
  };
  nlohmann::json bad = nlohmann::json::parse(text);
  bad["kernel_time_scale"]["gemm"] = -1;
  expect_refused_at(bad, "/kernel_time_scale/gemm");
  // The pipeline instruction's host time is read back, and a negative one is refused.
  EXPECT_GT(back.pipeline_instruction_us, 0.0);
  bad = nlohmann::json::parse(text);
  bad["pipeline_instruction_us"] = -1;
  expect_refused_at(bad, "/pipeline_instruction_us");
  bad = nlohmann::json::parse(text);
  bad["sources"].erase("kernel_time_scale.gemm");
  std::ofstream(profile, std::ios::binary) << bad.dump();
  {
    const SpecError e = testing::spec_error_of([&] { find_software_stack(profile); });
    EXPECT_EQ(e.json_path(), "/sources");
    EXPECT_NE(e.message().find("kernel_time_scale.gemm"), std::string::npos) << e.message();
  }
  std::filesystem::remove_all(dir);
}

TEST(SoftwareStack, TheSpecRoundTripsWithItsStack) {
  nlohmann::json j = small_workload();
  j["training"]["stack"] = "pytorch-fsdp2";
  const WorkloadSpec w = parse(j);
  EXPECT_EQ(parse_workload_spec(workload_spec_to_json(w), "w.json"), w);
  const WorkloadSpec d = parse(small_workload());
  EXPECT_EQ(parse_workload_spec(workload_spec_to_json(d), "w.json"), d);
}

// The same profile with every fusion on or off (everything else as megatron-deepspeed).
StackProfile fusions(bool on, OptimizerKernels optimizer) {
  StackProfile s = find_software_stack("megatron-deepspeed");
  s.fused = {on, on, on};
  s.optimizer_kernels = optimizer;
  return s;
}

TEST(SoftwareStack, AStackWithoutFusedKernelsLaunchesMoreOps) {
  // GPT with biases, unfused attention, dropout 0.1, full recompute, dp 1: global batch 8 / micro-batch 2
  // = 4 micro-batches x 2 layers.
  nlohmann::json j = small_workload();
  j["training"]["stack"] = "megatron-deepspeed";
  j["training"]["recompute"] = "full";
  WorkloadSpec w = resolved(j, 1);
  const ExecutionGraph fused = generate_transformer_training(w, 1, fusions(true, OptimizerKernels::multi_tensor));
  const ExecutionGraph unfused = generate_transformer_training(w, 1, fusions(false, OptimizerKernels::per_tensor));
  const OpTable& f = fused.classes().at(0).ops;
  const OpTable& u = unfused.classes().at(0).ops;
  // Per layer forward (run twice: forward and recompute): bias before the activation (1), bias and
  // dropout before each of the two residual adds (4), scale and mask around the softmax (2) = 7.
  // Per layer backward: dropout before each residual (2), mask and scale after the softmax (2) = 4.
  // 4 micro-batches x 2 layers x (2 x 7 + 4) = 144 more compute ops.
  // Optimizer: 2 layers x 12 tensors + word and position embeddings + final norm weight and bias =
  // 28 kernels instead of 1: 27 more.
  expect_counts(u, {{"fwd.activation.bias", 8},
                    {"recompute.activation.bias", 8},
                    {"fwd.residual1.dropout", 8},
                    {"bwd.attention.mask", 8},
                    {"optimizer.adam", 28}});
  EXPECT_EQ(count(f, "optimizer.adam"), 1u);
  EXPECT_EQ(count_kind(u, OpKind::compute), count_kind(f, OpKind::compute) + 144 + 27);
  // The unfused step moves more bytes and the same flops of GEMMs and attention.
  double fused_bytes = 0.0, unfused_bytes = 0.0, fused_adam = 0.0, unfused_adam = 0.0;
  for (OpId i = 0; i < f.size(); ++i) {
    fused_bytes += f.bytes(i);
    if (f.name(i) == "optimizer.adam") fused_adam += f.bytes(i);
  }
  for (OpId i = 0; i < u.size(); ++i) {
    unfused_bytes += u.bytes(i);
    if (u.name(i) == "optimizer.adam") unfused_adam += u.bytes(i);
  }
  EXPECT_GT(unfused_bytes, fused_bytes);
  EXPECT_NEAR(unfused_adam, fused_adam, 1e-9 * fused_adam);  // the same update, split over tensors
}

TEST(SoftwareStack, BlockingPipelineSendsHoldTheComputeStream) {
  nlohmann::json j = small_workload();
  j["parallelism"] = {{"pp", 2}};
  WorkloadSpec w = resolved(j, 2);
  StackProfile blocking = find_software_stack("megatron-core");
  blocking.pipeline_p2p = PipelineP2P::blocking;
  for (const auto& [stack, waits] :
       {std::pair{find_software_stack("megatron-core"), false}, std::pair{blocking, true}}) {
    const ExecutionGraph g = generate_transformer_training(w, 2, stack);
    const OpTable& ops = g.classes().at(0).ops;
    std::size_t sends = 0, waited = 0;
    for (OpId i = 0; i < ops.size(); ++i) {
      if (ops.name(i) == "pp.send_activation") ++sends;
      for (OpId d : ops.deps(i))
        if (ops.kind(i) == OpKind::compute && ops.name(d) == "pp.send_activation") ++waited;
    }
    EXPECT_EQ(sends, 4u);  // stage 0 sends each of its 4 micro-batches forward
    EXPECT_EQ(waited, waits ? 4u : 0u);
  }
}

// Where the host waits for its GPU (StackHostSyncs), counted per stage of a step of 4 micro-batches
// (global batch 8, micro-batch 2, dp 1). micro_batch_load: before each forward on the first stage,
// after each receive of activations on the last (pp 1: before each forward). partitioned_pipeline_transfer
// (tp > 1 only): after each receive and before each send of the pipeline; on the last stage its wait
// after the receive of activations is the load's (one wait). Stage 0 of pp 2, tp 2: 4 loads + 4 before
// the sends of activations + 4 after the receives of gradients = 12; stage 1: 4 after the receives of
// activations + 4 before the sends of gradients = 8. With tp 1: 4 and 4. Each point is the op right
// after a receive, or the first op of a forward, or a send (checked by name).
TEST(SoftwareStack, HostSynchronisationsFollowTheProfile) {
  StackProfile ds = find_software_stack("megatron-deepspeed");
  ASSERT_TRUE(ds.host_syncs.micro_batch_load);
  ASSERT_TRUE(ds.host_syncs.partitioned_pipeline_transfer);
  const auto syncs = [&](int tp, int pp, const StackProfile& stack) {
    nlohmann::json j = small_workload();
    j["parallelism"] = {{"tp", tp}, {"pp", pp}};
    const WorkloadSpec w = resolved(j, tp * pp);
    const ExecutionGraph g = generate_transformer_training(w, tp * pp, stack);
    std::vector<std::size_t> counts;
    for (const RankClass& c : g.classes()) {
      for (OpId op : c.host_syncs) {
        const std::string_view name = c.ops.name(op), before = op > 0 ? c.ops.name(op - 1) : "";
        EXPECT_TRUE(name == "pp.send_activation" || name == "pp.send_gradient" || name == "fwd.embedding" ||
                    before == "pp.recv_activation" || before == "pp.recv_gradient")
            << c.name << " op " << j << " " << name;
      }
      counts.push_back(c.host_syncs.size());
    }
    return counts;
  };
  EXPECT_EQ(syncs(2, 2, ds), (std::vector<std::size_t>{12, 8}));
  EXPECT_EQ(syncs(1, 2, ds), (std::vector<std::size_t>{4, 4}));
  EXPECT_EQ(syncs(2, 1, ds), (std::vector<std::size_t>{4}));
  StackProfile none = ds;
  none.host_syncs = {};
  EXPECT_EQ(syncs(2, 2, none), (std::vector<std::size_t>{0, 0}));
  EXPECT_EQ(syncs(2, 2, find_software_stack("megatron-core")), (std::vector<std::size_t>{0, 0}));
}

TEST(SoftwareStack, FixedStepCostsFollowTheProfile) {
  nlohmann::json j = small_workload();
  WorkloadSpec w = resolved(j, 2);  // dp 2: 2 micro-batches per rank
  // Megatron-DeepSpeed's profile has both fixed costs; the same profile without them has neither.
  const StackProfile both = find_software_stack("megatron-deepspeed");
  ASSERT_TRUE(both.grad_norm);
  ASSERT_TRUE(both.loss_all_reduce_per_micro_batch);
  StackProfile none = both;
  none.grad_norm = false;
  none.loss_all_reduce_per_micro_batch = false;
  const ExecutionGraph gw = generate_transformer_training(w, 2, both);
  const OpTable& with = gw.classes().at(0).ops;
  const ExecutionGraph g = generate_transformer_training(w, 2, none);
  const OpTable& without = g.classes().at(0).ops;
  EXPECT_EQ(count(with, "fwd.dp.loss_all_reduce"), 2u);
  EXPECT_EQ(count(without, "fwd.dp.loss_all_reduce"), 0u);
  ASSERT_EQ(count(with, "optimizer.grad_norm"), 1u);
  EXPECT_EQ(count(without, "optimizer.grad_norm"), 0u);
  // The norm reads the rank's fp32 gradients: 1,868,800 parameters x 4 bytes (no ZeRO).
  for (OpId i = 0; i < with.size(); ++i) {
    if (with.name(i) == "optimizer.grad_norm") {
      EXPECT_DOUBLE_EQ(with.bytes(i), 1'868'800.0 * 4.0);
    }
  }
}

double bytes_named(const OpTable& ops, std::string_view name) {
  double sum = 0.0;
  for (OpId i = 0; i < ops.size(); ++i)
    sum += ops.name(i) == name ? ops.bytes(i) : 0.0;
  return sum;
}

TEST(SoftwareStack, FsdpTwoCopiesAndForeachAdamMoveTheirBytes) {
  // ZeRO-3 over dp 4 (global batch 8 / micro-batch 2 / dp 4 = 1 micro-batch), bf16, 2 layers.
  nlohmann::json j = fsdp2_zero3_dp4();
  WorkloadSpec fsdp = resolved(j, 4);
  j["training"]["stack"] = "megatron-core";
  j["training"]["grad_buffer"] = "per_step";  // the same gradient dtype (fp32) as pytorch-fsdp2's
  WorkloadSpec core = resolved(j, 4);
  const StackMemoryPasses passes = stack_memory_passes("pytorch-fsdp2");
  EXPECT_TRUE(passes.fsdp_all_gather_copy_out);
  EXPECT_TRUE(passes.fsdp_reduce_scatter_copy_in);
  EXPECT_EQ(passes.optimizer, OptimizerImplementation::foreach);
  const StackMemoryPasses none = stack_memory_passes("megatron-core");
  EXPECT_FALSE(none.fsdp_all_gather_copy_out || none.fsdp_reduce_scatter_copy_in);
  EXPECT_EQ(none.optimizer, OptimizerImplementation::fused);

  const ExecutionGraph gf = generate_transformer_training(fsdp, 4);
  const ExecutionGraph gc = generate_transformer_training(core, 4);
  const OpTable& f = gf.classes().at(0).ops;
  const OpTable& c = gc.classes().at(0).ops;
  double gathered = 0.0, scattered = 0.0;
  for (OpId i = 0; i < f.size(); ++i) {
    if (f.kind(i) != OpKind::collective) continue;
    if (f.name(i).starts_with("dp.param_all_gather")) gathered += f.bytes(i);  // the layers' and the root's
    if (f.name(i) == "dp.grad_reduce_scatter") scattered += f.bytes(i);
  }
  ASSERT_GT(gathered, 0.0);
  ASSERT_GT(scattered, 0.0);
  // One copy-out per layer gather (2 layers x forward and backward x 1 micro-batch) and one for the
  // root unit's gather, reading and writing every gathered byte: 2 x the all-gathers' bytes.
  EXPECT_EQ(count(f, "dp.param_all_gather.copy_out"), 5u);
  EXPECT_DOUBLE_EQ(bytes_named(f, "dp.param_all_gather.copy_out"), 2.0 * gathered);
  // The copy-in reads each bf16 gradient (2 bytes) and writes it in fp32 (4), which the reduce-scatter
  // moves: 6 / 4 of its bytes.
  EXPECT_DOUBLE_EQ(bytes_named(f, "dp.grad_reduce_scatter.copy_in"), 1.5 * scattered);
  // foreach AdamW: 80 - 28 = 52 bytes per shard parameter more than the fused kernel, and clip_grad_norm_'s
  // scaling 8: 60, twice the fused kernel's 30 bytes (bf16 mixed precision).
  EXPECT_DOUBLE_EQ(bytes_named(f, "optimizer.adam.foreach_passes"), 2.0 * bytes_named(f, "optimizer.adam"));
  EXPECT_DOUBLE_EQ(foreach_optimizer_extra_bytes("adam", false), 52.0);
  EXPECT_DOUBLE_EQ(foreach_optimizer_extra_bytes("sgd", true), 8.0);
  // Megatron-Core's profile has none of them, and the same optimizer kernel.
  EXPECT_EQ(count(c, "dp.param_all_gather.copy_out"), 0u);
  EXPECT_EQ(count(c, "dp.grad_reduce_scatter.copy_in"), 0u);
  EXPECT_EQ(count(c, "optimizer.adam.foreach_passes"), 0u);
  EXPECT_DOUBLE_EQ(bytes_named(c, "optimizer.adam"), bytes_named(f, "optimizer.adam"));
  // The copy-out runs on the compute stream after its all-gather: each depends on one.
  for (OpId i = 0; i < f.size(); ++i) {
    if (f.name(i) != "dp.param_all_gather.copy_out") continue;
    bool after_gather = false;
    for (OpId d : f.deps(i))
      after_gather = after_gather || f.name(d).starts_with("dp.param_all_gather");
    EXPECT_TRUE(after_gather);
  }
}

TEST(SoftwareStack, ABadMemoryPassIsRefusedAtItsPath) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("clustersim_passes_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string profile = (dir / "mine.json").string();
  // pytorch-fsdp2's profile without its memory passes and their sources: each case below adds its own.
  nlohmann::json good = nlohmann::json::parse(software_stack_to_json(find_software_stack("pytorch-fsdp2")));
  good.erase("memory_passes");
  for (const char* key : {"memory_passes.fsdp_all_gather_copy_out", "memory_passes.fsdp_reduce_scatter_copy_in",
                          "memory_passes.optimizer"})
    good["sources"].erase(key);
  const auto expect_refused_at = [&](const nlohmann::json& profile_json, const std::string& path,
                                     const std::string& says) {
    std::ofstream(profile, std::ios::binary) << profile_json.dump();
    try {
      stack_memory_passes(profile);
      ADD_FAILURE() << "expected a SpecError at " << path;
    } catch (const SpecError& e) {
      EXPECT_EQ(e.file(), profile);
      EXPECT_EQ(e.json_path(), path);
      EXPECT_NE(e.message().find(says), std::string::npos) << e.message();
    }
  };
  nlohmann::json bad = good;
  bad["memory_passes"] = {{"optimizer", "fast"}};
  bad["sources"]["memory_passes.optimizer"] = "x";
  expect_refused_at(bad, "/memory_passes/optimizer", "foreach");  // the allowed values
  bad = good;
  bad["memory_passes"] = {{"fsdp_all_gather_copy_out", true}};  // no source
  expect_refused_at(bad, "/sources", "memory_passes.fsdp_all_gather_copy_out");
  bad = good;
  bad["memory_passes"] = {{"fsdp_copy", true}};
  expect_refused_at(bad, "/memory_passes/fsdp_copy", "");
  std::filesystem::remove_all(dir);
}

// A profile written back (calibrate --from-trace copies the workload's stack and writes it) keeps the
// memory passes of the stack it came from, with their sources: read back it is the same profile, and a
// workload naming the file generates the same FSDP copies and foreach optimizer passes as one naming
// the built-in stack (before, the file carried none: a fitted profile dropped ~76 ms of tt-0001's step).
TEST(SoftwareStack, AProfileWrittenBackKeepsItsMemoryPasses) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("clustersim_kept_passes_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  StackProfile mine = find_software_stack("pytorch-fsdp2");
  ASSERT_TRUE(mine.memory_passes.fsdp_all_gather_copy_out);
  ASSERT_TRUE(mine.memory_passes.fsdp_reduce_scatter_copy_in);
  ASSERT_EQ(mine.memory_passes.optimizer, OptimizerImplementation::foreach);
  mine.id = "mine";
  mine.kernel_time_scale[static_cast<std::size_t>(KernelClass::gemm)] = 1.25;
  mine.sources["kernel_time_scale.gemm"] = "fitted in this test, by hand";
  const std::string text = software_stack_to_json(mine);
  const nlohmann::json written = nlohmann::json::parse(text);
  EXPECT_EQ(written.at("memory_passes"),
            (nlohmann::json{
                {"fsdp_all_gather_copy_out", true}, {"fsdp_reduce_scatter_copy_in", true}, {"optimizer", "foreach"}}));
  EXPECT_TRUE(written.at("sources").contains("memory_passes.optimizer"));
  const std::string profile = (dir / "mine.json").string();
  std::ofstream(profile, std::ios::binary) << text;
  const StackProfile back = find_software_stack(profile);
  EXPECT_EQ(back, mine);
  EXPECT_EQ(back.memory_passes, stack_memory_passes("pytorch-fsdp2"));
  EXPECT_EQ(software_stack_to_json(back), text);

  // ZeRO-3 over dp 4, 2 layers, 1 micro-batch: the same passes, op for op and byte for byte.
  nlohmann::json j = fsdp2_zero3_dp4();
  WorkloadSpec builtin = resolved(j, 4);
  j["training"]["stack"] = "mine.json";
  WorkloadSpec fitted = parse_workload_spec(j.dump(), (dir / "w.json").string());
  resolve_parallelism(fitted, 4);
  const ExecutionGraph gb = generate_transformer_training(builtin, 4);
  const ExecutionGraph gf = generate_transformer_training(fitted, 4);
  const OpTable& b = gb.classes().at(0).ops;
  const OpTable& f = gf.classes().at(0).ops;
  for (const char* pass :
       {"dp.param_all_gather.copy_out", "dp.grad_reduce_scatter.copy_in", "optimizer.adam.foreach_passes"}) {
    EXPECT_GT(count(f, pass), 0u) << pass;
    EXPECT_EQ(count(f, pass), count(b, pass)) << pass;
    EXPECT_DOUBLE_EQ(bytes_named(f, pass), bytes_named(b, pass)) << pass;
  }
  // A profile given in memory decides, not the spec's training.stack: megatron-core's passes (none) for
  // the same spec.
  const ExecutionGraph gn = generate_transformer_training(builtin, 4, find_software_stack("megatron-core"));
  EXPECT_EQ(count(gn.classes().at(0).ops, "dp.param_all_gather.copy_out"), 0u);
  EXPECT_EQ(count(gn.classes().at(0).ops, "optimizer.adam.foreach_passes"), 0u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace clustersim
