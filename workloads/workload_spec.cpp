#include "workloads/workload_spec.hpp"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <span>

#include <nlohmann/json.hpp>

#include "sim/core/checked_product.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/resources.hpp"
#include "sim/core/spec_document.hpp"
#include "workloads/rank_layout.hpp"
#include "workloads/software_stack.hpp"
#include "workloads/workload_schema_io.hpp"

namespace clustersim {
namespace resources_detail {
std::span<const Resource> workload_preset_resources();  // generated from workloads/presets/*.json
}  // namespace resources_detail

namespace {

constexpr std::int64_t kMaxMicroBatchesPerStep = std::int64_t{1} << 16;  // per rank (resolve_parallelism)
// Layers x micro-batches per rank per step: the generator makes ops per layer and micro-batch, about
// 2.2 KB of them each (measured: gpt3-1.3b on dgx-h100, 2400 layers x 256 micro-batches took 1.32 GB
// and 35 s), so 2^20 of them are about 2.3 GB; the presets use at most a few ten thousand.
constexpr std::int64_t kMaxLayerMicroBatches = std::int64_t{1} << 20;

void parse_moe(JsonReader r, WorkloadSpec& spec) {
  read_workload_fields(r, "model.moe", spec);
  const MoeSpec& moe = spec.model.moe;
  if (moe.top_k > moe.experts)
    r.fail("top_k",
           "top_k (" + std::to_string(moe.top_k) + ") must not exceed experts (" + std::to_string(moe.experts) + ")");
  if (moe.experts > 0 && moe.top_k == 0) r.fail("top_k", "a mixture of experts needs top_k >= 1");
  if (moe.first_dense_layers >= spec.model.layers && moe.experts > 0)
    r.fail("first_dense_layers", "first_dense_layers (" + std::to_string(moe.first_dense_layers) +
                                     ") must be fewer than model.layers (" + std::to_string(spec.model.layers) + ")");
  r.finish();
}

void parse_mla(JsonReader r, WorkloadSpec& spec) {
  read_workload_fields(r, "model.mla", spec);
  const MlaSpec& mla = spec.model.mla;
  const std::pair<const char*, int> required[] = {{"kv_lora_rank", mla.kv_lora_rank},
                                                  {"qk_nope_head_dim", mla.qk_nope_head_dim},
                                                  {"qk_rope_head_dim", mla.qk_rope_head_dim},
                                                  {"v_head_dim", mla.v_head_dim}};
  for (const auto& [key, value] : required)
    if (value < 1)
      r.fail(key, std::string("multi-head latent attention needs ") + key + " >= 1, got " + std::to_string(value));
  r.finish();
}

// An absent optional section: its keys' defaults, checked as if it were given empty.
JsonReader empty_section(const std::string& file, const std::string& path) {
  static const nlohmann::json empty = nlohmann::json::object();
  return JsonReader(empty, file, path);
}

void parse_model(JsonReader r, WorkloadSpec& spec) {
  read_workload_fields(r, "model", spec);
  parse_moe(r.optional_object("moe").value_or(empty_section(r.file(), r.path_of("moe"))), spec);
  const ModelSpec& m = spec.model;
  if (m.latent_attention()) {
    if (!r.has("mla"))
      r.fail("attention_type", "attention_type \"mla\" needs its shape in model.mla (kv_lora_rank, ...)");
    parse_mla(r.object("mla"), spec);
  } else if (r.has("mla")) {
    r.fail("mla", "model.mla applies to attention_type \"mla\" only, got attention_type \"" + m.attention_type + "\"");
  }
  if (m.kv_heads > 0 && (m.kv_heads > m.heads || m.heads % m.kv_heads != 0))
    r.fail("kv_heads",
           "kv_heads (" + std::to_string(m.kv_heads) + ") must divide heads (" + std::to_string(m.heads) + ")");
  if (!m.latent_attention() && m.head_dim == 0 && m.hidden % m.heads != 0)
    r.fail("heads", "heads (" + std::to_string(m.heads) + ") must divide hidden (" + std::to_string(m.hidden) +
                        ") unless head_dim is given");
  r.finish();
}

void parse_training(JsonReader r, WorkloadSpec& spec) {
  read_workload_fields(r, "training", spec);
  const TrainingSpec& t = spec.training;
  if (t.global_batch % t.micro_batch != 0)
    r.fail("global_batch", "global_batch (" + std::to_string(t.global_batch) + ") must be a multiple of micro_batch (" +
                               std::to_string(t.micro_batch) + ")");
  r.finish();
}

void parse_parallelism(JsonReader r, WorkloadSpec& spec) {
  read_workload_fields(r, "parallelism", spec);
  const ParallelismSpec& p = spec.parallelism;
  if (!valid_rank_order(p.order))
    r.fail("order",
           "expected the dimensions tp, cp, ep, dp, pp each once, separated by '-', with ep next to dp "
           "(e.g. \"tp-cp-ep-dp-pp\"), got \"" +
               p.order + "\"");

  if (p.virtual_stages > 1 && p.pipeline_schedule != "interleaved")
    r.fail("virtual_stages",
           "virtual_stages > 1 needs pipeline_schedule \"interleaved\", got \"" + p.pipeline_schedule + "\"");
  const MoeSpec& moe = spec.model.moe;
  if (p.ep > 1 && (moe.experts == 0 || moe.experts % p.ep != 0))
    r.fail("ep",
           "ep (" + std::to_string(p.ep) + ") must divide the number of experts (" + std::to_string(moe.experts) + ")");
  r.finish();
}

void parse_trace(JsonReader r, WorkloadSpec& spec) {
  read_workload_fields(r, "trace", spec);
  r.finish();
}

// The workload with the keys its software stack sets (training.stack, or the default stack) filled in
// where the workload does not give them: the stack's profile is a set of defaults, explicit keys win.
nlohmann::json with_stack_defaults(const nlohmann::json& json, const std::string& file) {
  if (!json.is_object() || json.contains("trace") || !json.contains("training") || !json["training"].is_object())
    return json;  // parse_document reports what is wrong
  JsonReader training(json["training"], file, "/training");
  const std::string id = training.has("stack")
                             ? resolve_stack_reference(training.string("stack"), file, training.path_of("stack"))
                             : std::string(kDefaultStack);
  const StackProfile stack = find_software_stack(id, file, "/training/stack");
  nlohmann::json out = json;
  for (const auto& [path, value] : stack.defaults) {
    const auto dot = path.find('.');
    nlohmann::json& section = out[path.substr(0, dot)];
    if (section.is_null()) section = nlohmann::json::object();
    const std::string key = path.substr(dot + 1);
    if (section.is_object() && !section.contains(key)) section[key] = nlohmann::json::parse(value);
  }
  return out;
}

WorkloadSpec parse_document(const nlohmann::json& original, const std::string& file) {
  const nlohmann::json json = with_stack_defaults(original, file);
  JsonReader root(json, file);
  WorkloadSpec spec;
  spec.source_file = file;
  read_workload_fields(root, "", spec);
  if (auto trace = root.optional_object("trace")) {
    // A trace carries its own ops and groups: a model description would be ignored, so refuse it.
    parse_trace(*trace, spec);
    for (const char* key : {"model", "training", "parallelism"}) {
      if (root.has(key))
        root.fail(key, std::string("a workload with a \"trace\" takes its ops from the trace; remove \"") + key + "\"");
    }
    root.finish();
    return spec;
  }
  parse_model(root.object("model"), spec);
  parse_training(root.object("training"), spec);
  parse_parallelism(root.optional_object("parallelism").value_or(empty_section(file, "/parallelism")), spec);
  root.finish();
  return spec;
}

std::string str(std::int64_t v) {
  return std::to_string(v);
}

// Expert parallelism as Megatron-Core carves it (NVIDIA/Megatron-LM megatron/core/parallel_state.py at
// commit 00caa53, initialize_model_parallel): the expert layers lay the tp x cp x dp ranks of a stage
// out as etp x ep x expert-dp, expert_data_parallel_size = world / (etp ep pp); the pipeline groups
// must agree (its assertion: the order ends with pp, or pp 1, or the expert-dp equals the dp). And its
// MoELayer refuses to train with attention tp > 1 without sequence parallelism
// (megatron/core/transformer/moe/moe_layer.py): the routed tokens are the sequence-parallel shard.
void resolve_expert_parallelism(const WorkloadSpec& spec) {
  const std::string& file = spec.source_file;
  const ParallelismSpec& p = spec.parallelism;
  const ModelSpec& m = spec.model;
  const int etp = p.effective_etp();
  const std::string etp_path = p.etp > 0 ? "/parallelism/etp" : "/parallelism/ep";
  const std::int64_t stage_ranks = std::int64_t{p.tp} * p.cp * p.dp;  // <= the GPU count
  if (stage_ranks % etp != 0)
    throw SpecError(file, "/parallelism/etp",
                    "etp (" + str(etp) + ") must divide tp x cp x dp = " + str(p.tp) + " x " + str(p.cp) + " x " +
                        str(p.dp) + " = " + str(stage_ranks));
  if (stage_ranks / etp % p.ep != 0)
    throw SpecError(file, etp_path,
                    "ep (" + str(p.ep) + ") must divide dp (" + str(p.dp) + ") x tp (" + str(p.tp) + ") x cp (" +
                        str(p.cp) + ") / etp (" + str(etp) + ") = " + str(stage_ranks / etp) +
                        ": expert parallelism is carved out of the data-, tensor- and context-parallel ranks of a "
                        "stage, which the expert layers lay out as etp x ep x expert data parallelism (Megatron-Core; "
                        "etp defaults to tp)");
  if (m.moe.experts == 0) return;
  const int expert_width = m.moe.expert_ffn_hidden > 0 ? m.moe.expert_ffn_hidden : m.ffn_hidden;
  if (expert_width % etp != 0)
    throw SpecError(file, p.etp > 0 ? "/parallelism/etp" : "/parallelism/tp",
                    "etp (" + str(etp) + ") must divide the experts' width (" + str(expert_width) +
                        ", model.moe.expert_ffn_hidden or model.ffn_hidden)");
  if (p.tp > 1 && !p.sequence_parallel)
    throw SpecError(file, "/parallelism/sequence_parallel",
                    "a mixture of experts with tp > 1 (" + str(p.tp) +
                        ") needs sequence_parallel true: the experts route each tensor-parallel rank's shard of the "
                        "tokens (Megatron-Core's MoELayer refuses to train otherwise)");
  const bool same_layout = etp == p.tp && p.cp == 1;
  if (!same_layout && p.pp > 1 && !p.order.ends_with("-pp"))
    throw SpecError(file, "/parallelism/order",
                    "with etp != tp or cp > 1 the expert layers lay the ranks out apart from the attention's, and "
                    "their pipeline groups agree only when the order ends with \"pp\" (or pp is 1), got \"" +
                        p.order + "\"");
}

}  // namespace

std::int64_t ParallelismSpec::effective_bucket_size_params() const {
  if (bucket_size_params > 0) return bucket_size_params;
  // Megatron-LM (DistributedDataParallel): bucket_size = max(40000000, 1000000 * data_parallel_size).
  return std::max<std::int64_t>(40'000'000, std::int64_t{1'000'000} * std::max(dp, 1));
}

std::int64_t WorkloadSpec::micro_batches() const {
  return training.global_batch / (std::int64_t{training.micro_batch} * std::max(parallelism.dp, 1));
}

WorkloadSpec parse_workload_spec(std::string_view json_text, const std::string& file) {
  return parse_spec_with(json_text, file, parse_document);
}

WorkloadSpec load_workload_spec(std::string_view source, const WorkloadOverrides& overrides) {
  return load_spec_with(source, resources_detail::workload_preset_resources(), "workload", overrides, parse_document);
}

std::string workload_spec_to_json(const WorkloadSpec& spec) {
  nlohmann::ordered_json j;
  write_workload_fields(j, "", spec);
  if (spec.is_trace()) {
    j["trace"] = nlohmann::ordered_json::object();
    write_workload_fields(j["trace"], "trace", spec);
    return j.dump(2);
  }
  nlohmann::ordered_json model = nlohmann::ordered_json::object();
  write_workload_fields(model, "model", spec);
  model["moe"] = nlohmann::ordered_json::object();
  write_workload_fields(model["moe"], "model.moe", spec);
  if (spec.model.latent_attention()) {
    model["mla"] = nlohmann::ordered_json::object();
    write_workload_fields(model["mla"], "model.mla", spec);
  }
  j["model"] = std::move(model);
  j["training"] = nlohmann::ordered_json::object();
  write_workload_fields(j["training"], "training", spec);
  j["parallelism"] = nlohmann::ordered_json::object();
  write_workload_fields(j["parallelism"], "parallelism", spec);
  return j.dump(2);
}

void resolve_parallelism(WorkloadSpec& spec, int gpu_count) {
  const std::string& file = spec.source_file;
  ParallelismSpec& p = spec.parallelism;
  const ModelSpec& m = spec.model;
  if (gpu_count <= 0) throw SpecError(file, "/parallelism", "the cluster has no GPUs (" + str(gpu_count) + ")");

  // Each factor is at most INT_MAX, so the product may overflow 64 bits (2^30 * 2^30 * 16 wrapped to 0).
  const std::optional<std::int64_t> product = checked_product({p.tp, p.pp, p.cp});
  if (!product || *product > gpu_count)
    throw SpecError(file, "/parallelism",
                    "tp * pp * cp = " + str(p.tp) + " * " + str(p.pp) + " * " + str(p.cp) + " = " +
                        (product ? str(*product) : std::string("more than 2^63")) + " exceeds the " + str(gpu_count) +
                        " GPUs of the cluster");
  const std::int64_t model_parallel = *product;
  if (p.dp == 0) {
    if (gpu_count % model_parallel != 0)
      throw SpecError(file, "/parallelism",
                      "tp * pp * cp = " + str(p.tp) + " * " + str(p.pp) + " * " + str(p.cp) + " = " +
                          str(model_parallel) + " does not divide the " + str(gpu_count) + " GPUs of the cluster");
    p.dp = static_cast<int>(gpu_count / model_parallel);
  } else if (model_parallel * p.dp != gpu_count) {  // <= 2^31 * 2^31: fits
    throw SpecError(file, "/parallelism/dp",
                    "tp * pp * cp * dp = " + str(p.tp) + " * " + str(p.pp) + " * " + str(p.cp) + " * " + str(p.dp) +
                        " = " + str(model_parallel * p.dp) + ", but the cluster has " + str(gpu_count) + " GPUs");
  }

  const std::int64_t per_step = std::int64_t{spec.training.micro_batch} * p.dp;
  if (spec.training.global_batch % per_step != 0)
    throw SpecError(file, "/training/global_batch",
                    "global_batch (" + str(spec.training.global_batch) + ") must be a multiple of micro_batch * dp = " +
                        str(spec.training.micro_batch) + " * " + str(p.dp) + " = " + str(per_step));
  // Each micro-batch of a step is generated and replayed op by op: a bound keeps a mistyped batch from
  // overflowing the generator's counters or exhausting memory (a realistic step has at most a few
  // thousand per rank: 16 M tokens of 512-token sequences on one data-parallel rank are 32768).
  if (spec.micro_batches() > kMaxMicroBatchesPerStep)
    throw SpecError(file, "/training/global_batch",
                    "global_batch (" + str(spec.training.global_batch) + ") gives " + str(spec.micro_batches()) +
                        " micro-batches per rank per step (global_batch / (micro_batch * dp)); expected at most " +
                        str(kMaxMicroBatchesPerStep));
  if (spec.micro_batches() * m.layers > kMaxLayerMicroBatches)  // <= 2^16 * 2^14: fits
    throw SpecError(file, "/training/global_batch",
                    "model.layers x micro-batches per rank per step = " + str(m.layers) + " x " +
                        str(spec.micro_batches()) + " = " + str(spec.micro_batches() * m.layers) +
                        " layer passes to generate; expected at most " + str(kMaxLayerMicroBatches) +
                        " (about 2.3 GB of ops): fewer layers or a smaller global_batch");
  if (m.heads % p.tp != 0 || m.effective_kv_heads() % p.tp != 0)
    throw SpecError(file, "/parallelism/tp",
                    "tp (" + str(p.tp) + ") must divide heads (" + str(m.heads) + ") and kv_heads (" +
                        str(m.effective_kv_heads()) + ")");
  if (p.pp > m.layers)
    throw SpecError(file, "/parallelism/pp",
                    "pp (" + str(p.pp) + ") must not exceed the number of layers (" + str(m.layers) + ")");

  const std::int64_t chunks = std::int64_t{p.pp} * p.virtual_stages;  // 2^31 * 2^31 fits in 64 bits
  if (p.virtual_stages > 1 && p.pp < 2)
    throw SpecError(file, "/parallelism/virtual_stages",
                    "virtual stages (interleaving) need pp >= 2, got pp = " + str(p.pp));
  if (chunks > m.layers)
    throw SpecError(
        file, "/parallelism/virtual_stages",
        "pp * virtual_stages = " + str(chunks) + " model chunks must not exceed the " + str(m.layers) + " layers");
  if (p.pipeline_schedule == "interleaved" && spec.micro_batches() % p.pp != 0)
    throw SpecError(file, "/training/global_batch",
                    "the interleaved schedule needs the micro-batches per step (" + str(spec.micro_batches()) +
                        " = global_batch / (micro_batch * dp)) to be a multiple of pp (" + str(p.pp) + ")");
  if (p.pipeline_schedule == "dualpipe") {  // DualPipe.step's assertion (dualpipe_schedule.hpp)
    if (p.pp < 2 || p.pp % 2 != 0)
      throw SpecError(file, "/parallelism/pp",
                      "the dualpipe schedule needs an even number of pipeline stages pp >= 2 (micro-batches enter "
                      "from both ends and rank i pairs stages i and pp - 1 - i), got pp = " +
                          str(p.pp));
    if (spec.micro_batches() % 2 != 0 || spec.micro_batches() < 2 * std::int64_t{p.pp})
      throw SpecError(file, "/training/global_batch",
                      "the dualpipe schedule needs an even number of micro-batches per step, at least 2 x pp = " +
                          str(2 * std::int64_t{p.pp}) + " (half enter from each end), got " +
                          str(spec.micro_batches()) + " = global_batch / (micro_batch * dp)");
  }
  if (m.seq_len % p.cp != 0)
    throw SpecError(file, "/parallelism/cp", "cp (" + str(p.cp) + ") must divide seq_len (" + str(m.seq_len) + ")");
  resolve_expert_parallelism(spec);
  if (m.ffn_hidden % p.tp != 0 ||
      (m.moe.shared_experts > 0 && m.moe.expert_ffn_hidden > 0 && m.moe.expert_ffn_hidden % p.tp != 0))
    throw SpecError(file, "/parallelism/tp",
                    "tp (" + str(p.tp) + ") must divide ffn_hidden (" + str(m.ffn_hidden) +
                        ") and the shared experts' expert_ffn_hidden (" + str(m.moe.expert_ffn_hidden) + ")");
  if (p.sequence_parallel && p.tp > 1 && (std::int64_t{spec.training.micro_batch} * m.seq_len / p.cp) % p.tp != 0)
    throw SpecError(file, "/parallelism/sequence_parallel",
                    "sequence parallelism splits the micro-batch's tokens over tp ranks: micro_batch * seq_len / cp "
                    "must be a multiple of tp (" +
                        str(p.tp) + ")");
  if (p.tp_comm_overlap && p.tp > 1 && !p.sequence_parallel)
    throw SpecError(file, "/parallelism/tp_comm_overlap",
                    "overlapping tensor-parallel communication with GEMMs needs sequence_parallel (Megatron-LM's "
                    "--tp-comm-overlap overlaps all-gathers and reduce-scatters)");
}

std::vector<std::string> workload_preset_names() {
  return resource_names(resources_detail::workload_preset_resources());
}

}  // namespace clustersim
