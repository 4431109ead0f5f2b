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
#include "workloads/attention_implementation.hpp"
#include "workloads/context_parallel_comm.hpp"
#include "workloads/fp8_recipe.hpp"
#include "workloads/memory_recipe.hpp"
#include "workloads/rank_layout.hpp"
#include "workloads/trace_format.hpp"

namespace clustersim {
namespace resources_detail {
std::span<const Resource> workload_preset_resources();  // generated from workloads/presets/*.json
}  // namespace resources_detail

namespace {

constexpr std::int64_t kMaxMicroBatchesPerStep = std::int64_t{1} << 16;  // per rank (resolve_parallelism)
// model.layers: the largest published dense models have about 100-200 layers.
constexpr std::int64_t kMaxLayers = std::int64_t{1} << 14;
// Layers x micro-batches per rank per step: the generator makes ops per layer and micro-batch, about
// 2.2 KB of them each (measured: gpt3-1.3b on dgx-h100, 2400 layers x 256 micro-batches took 1.32 GB
// and 35 s), so 2^20 of them are about 2.3 GB; the presets use at most a few ten thousand.
constexpr std::int64_t kMaxLayerMicroBatches = std::int64_t{1} << 20;

// The dtypes: name, bytes of one element, whether `training.precision` accepts it, and whether it is
// an 8-bit or narrower float.
struct PrecisionInfo {
  Precision precision;
  const char* name;
  double bytes;
  bool training;
  bool low;
};
constexpr PrecisionInfo kPrecisions[] = {
    {Precision::fp32, "fp32", 4.0, true, false},   {Precision::tf32, "tf32", 4.0, true, false},
    {Precision::fp16, "fp16", 2.0, true, false},   {Precision::bf16, "bf16", 2.0, true, false},
    {Precision::fp8, "fp8", 1.0, true, true},      {Precision::mxfp8, "mxfp8", 1.0, false, true},
    {Precision::nvfp4, "nvfp4", 0.5, false, true},
};

const PrecisionInfo& info(Precision p) {
  for (const auto& i : kPrecisions) {
    if (i.precision == p) return i;
  }
  return kPrecisions[0];  // unreachable: every enumerator is in the table
}

std::vector<std::string> precision_names() {
  std::vector<std::string> names;
  for (const auto& i : kPrecisions)
    if (i.training) names.emplace_back(i.name);
  return names;
}

Precision precision_from_name(const std::string& name) {
  for (const auto& i : kPrecisions) {
    if (name == i.name) return i.precision;
  }
  return Precision::bf16;  // unreachable: the name was checked against precision_names()
}

const std::vector<std::string> kActivations = {"gelu", "swiglu", "squared_relu"};
const std::vector<std::string> kRecompute = {"none", "selective", "full"};
const std::vector<std::string> kOptimizers = {"adam", "sgd"};
const std::vector<std::string> kSchedules = {"gpipe", "1f1b", "interleaved"};

int positive_int(JsonReader& r, std::string_view key) {
  return static_cast<int>(r.integer(key, 1, INT_MAX));
}

int positive_int_or(JsonReader& r, std::string_view key, int fallback) {
  return static_cast<int>(r.integer_or(key, fallback, 1, INT_MAX));
}

MoeSpec parse_moe(JsonReader r) {
  MoeSpec moe;
  moe.experts = static_cast<int>(r.integer_or("experts", 0, 0, INT_MAX));
  moe.top_k = static_cast<int>(r.integer_or("top_k", 0, 0, INT_MAX));
  moe.expert_ffn_hidden = static_cast<int>(r.integer_or("expert_ffn_hidden", 0, 0, INT_MAX));
  moe.capacity_factor = r.number_or("capacity_factor", 1.0, NumberRange::positive());
  moe.load_imbalance = r.number_or("load_imbalance", 1.0, NumberRange::at_least(1.0));
  if (moe.top_k > moe.experts)
    r.fail("top_k",
           "top_k (" + std::to_string(moe.top_k) + ") must not exceed experts (" + std::to_string(moe.experts) + ")");
  if (moe.experts > 0 && moe.top_k == 0) r.fail("top_k", "a mixture of experts needs top_k >= 1");
  r.finish();
  return moe;
}

ModelSpec parse_model(JsonReader r) {
  ModelSpec m;
  m.type = r.choice_or("type", {"transformer"}, "transformer");
  m.layers = static_cast<int>(r.integer("layers", 1, kMaxLayers));
  m.hidden = positive_int(r, "hidden");
  m.heads = positive_int(r, "heads");
  m.kv_heads = static_cast<int>(r.optional_integer("kv_heads", 1, INT_MAX).value_or(0));
  m.head_dim = static_cast<int>(r.optional_integer("head_dim", 1, INT_MAX).value_or(0));
  m.ffn_hidden = positive_int(r, "ffn_hidden");
  m.seq_len = positive_int(r, "seq_len");
  m.vocab = positive_int(r, "vocab");
  m.activation = r.choice_or("activation", kActivations, "gelu");
  m.tied_embeddings = r.boolean_or("tied_embeddings", false);
  if (auto moe = r.optional_object("moe")) m.moe = parse_moe(*moe);

  if (m.kv_heads > 0 && (m.kv_heads > m.heads || m.heads % m.kv_heads != 0))
    r.fail("kv_heads",
           "kv_heads (" + std::to_string(m.kv_heads) + ") must divide heads (" + std::to_string(m.heads) + ")");
  if (m.head_dim == 0 && m.hidden % m.heads != 0)
    r.fail("heads", "heads (" + std::to_string(m.heads) + ") must divide hidden (" + std::to_string(m.hidden) +
                        ") unless head_dim is given");
  r.finish();
  return m;
}

TrainingSpec parse_training(JsonReader r) {
  TrainingSpec t;
  if (r.has("stack")) t.stack = resolve_stack_reference(r.string("stack"), r.file(), r.path_of("stack"));
  t.global_batch = r.integer("global_batch", 1);
  t.micro_batch = positive_int_or(r, "micro_batch", 1);
  t.precision = precision_from_name(r.choice_or("precision", precision_names(), "bf16"));
  for (const char* key : {"fp8_recipe", "fp8_weight_cache"})
    if (r.has(key) && t.precision != Precision::fp8)
      r.fail(key,
             std::string(key) + " applies to precision \"fp8\" only, got precision \"" + to_string(t.precision) + "\"");
  t.fp8_recipe = fp8_recipe_from_name(r.choice_or("fp8_recipe", fp8_recipe_names(), "delayed"));
  t.fp8_weight_cache = r.boolean_or("fp8_weight_cache", true);
  t.recompute = r.choice_or("recompute", kRecompute, "none");
  t.optimizer = r.choice_or("optimizer", kOptimizers, "adam");
  t.attention = r.choice_or("attention", attention_implementation_names(), "flash");
  t.dropout = r.number_or("dropout", 0.0, NumberRange::between(0.0, 0.99));
  // Up to one second per op: fitted values are tens of microseconds (docs/validation.md); a larger
  // one is a unit mistake, and an unbounded one overflows the step's time to infinity.
  t.host_op_us = r.number_or("host_op_us", 0.0, NumberRange::between(0.0, 1e6));
  t.torch_compile = r.boolean_or("torch_compile", false);
  t.grad_buffer = r.choice_or("grad_buffer", grad_buffer_names(), "persistent");
  t.cross_entropy = r.choice_or("cross_entropy", cross_entropy_names(), "vocab_parallel");
  t.selective_recompute = r.choice_or("selective_recompute", selective_recompute_names(), "attention_core");
  if (t.global_batch % t.micro_batch != 0)
    r.fail("global_batch", "global_batch (" + std::to_string(t.global_batch) + ") must be a multiple of micro_batch (" +
                               std::to_string(t.micro_batch) + ")");
  r.finish();
  return t;
}

ParallelismSpec parse_parallelism(JsonReader r, const ModelSpec& model) {
  ParallelismSpec p;
  p.tp = positive_int_or(r, "tp", 1);
  p.pp = positive_int_or(r, "pp", 1);
  p.dp = static_cast<int>(r.optional_integer("dp", 1, INT_MAX).value_or(0));
  p.cp = positive_int_or(r, "cp", 1);
  p.cp_comm = r.choice_or("cp_comm", context_parallel_comm_names(), "ring");
  p.ep = positive_int_or(r, "ep", 1);
  p.sequence_parallel = r.boolean_or("sequence_parallel", false);
  p.pipeline_schedule = r.choice_or("pipeline_schedule", kSchedules, "1f1b");
  p.virtual_stages = positive_int_or(r, "virtual_stages", 1);
  p.zero_stage = static_cast<int>(r.integer_or("zero_stage", 0, 0, 3));
  p.overlap_grad_reduce = r.boolean_or("overlap_grad_reduce", true);
  p.overlap_param_gather = r.boolean_or("overlap_param_gather", false);
  p.bucket_size_params = r.optional_integer("bucket_size_params", 1).value_or(0);
  p.tp_comm_overlap = r.boolean_or("tp_comm_overlap", false);
  p.order = r.optional_string("order").value_or("tp-cp-ep-dp-pp");
  if (!valid_rank_order(p.order))
    r.fail("order",
           "expected the dimensions tp, cp, ep, dp, pp each once, separated by '-', with ep next to dp "
           "(e.g. \"tp-cp-ep-dp-pp\"), got \"" +
               p.order + "\"");

  if (p.virtual_stages > 1 && p.pipeline_schedule != "interleaved")
    r.fail("virtual_stages",
           "virtual_stages > 1 needs pipeline_schedule \"interleaved\", got \"" + p.pipeline_schedule + "\"");
  if (p.ep > 1 && (model.moe.experts == 0 || model.moe.experts % p.ep != 0))
    r.fail("ep", "ep (" + std::to_string(p.ep) + ") must divide the number of experts (" +
                     std::to_string(model.moe.experts) + ")");
  r.finish();
  return p;
}

TraceSpec parse_trace(JsonReader r, const std::string& file) {
  TraceSpec t;
  t.format = r.choice("format", trace_format_names());
  const std::string path = r.string("path");
  const std::filesystem::path p(path);
  t.path = p.is_absolute() || file.empty() ? path : (std::filesystem::path(file).parent_path() / p).string();
  if (r.has("step")) {
    const nlohmann::json& step = r.raw("step");
    if (step.is_number_integer() && step.get<std::int64_t>() >= 0) {
      t.step = std::to_string(step.get<std::int64_t>());
    } else if (step.is_string() && step.get<std::string>() == "last") {
      t.step = "last";
    } else {
      r.fail("step", "expected a step number >= 0 (ProfilerStep#N) or \"last\", got " + describe_json(step));
    }
    if (find_trace_format(t.format)->read_step == nullptr)
      r.fail("step", "the " + t.format + " trace format marks no training steps: remove \"step\"");
  }
  r.finish();
  return t;
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
  spec.name = root.optional_string("name").value_or(std::filesystem::path(file).stem().string());
  spec.description = root.optional_string("description").value_or("");
  if (auto trace = root.optional_object("trace")) {
    // A trace carries its own ops and groups: a model description would be ignored, so refuse it.
    spec.trace = parse_trace(*trace, file);
    for (const char* key : {"model", "training", "parallelism"}) {
      if (root.has(key))
        root.fail(key, std::string("a workload with a \"trace\" takes its ops from the trace; remove \"") + key + "\"");
    }
    root.finish();
    return spec;
  }
  spec.model = parse_model(root.object("model"));
  spec.training = parse_training(root.object("training"));
  if (auto par = root.optional_object("parallelism")) spec.parallelism = parse_parallelism(*par, spec.model);
  root.finish();
  return spec;
}

std::string str(std::int64_t v) {
  return std::to_string(v);
}

}  // namespace

const char* to_string(Precision p) {
  return info(p).name;
}

double bytes_per_element(Precision p) {
  return info(p).bytes;
}

bool low_precision(Precision p) {
  return info(p).low;
}

std::vector<Precision> training_precisions() {
  std::vector<Precision> out;
  for (const auto& i : kPrecisions)
    if (i.training) out.push_back(i.precision);
  return out;
}

std::int64_t ParallelismSpec::effective_bucket_size_params() const {
  if (bucket_size_params > 0) return bucket_size_params;
  // Megatron-LM (DistributedDataParallel): bucket_size = max(40000000, 1000000 * data_parallel_size).
  return std::max<std::int64_t>(40'000'000, std::int64_t{1'000'000} * std::max(dp, 1));
}

std::int64_t WorkloadSpec::micro_batches() const {
  return training.global_batch / (std::int64_t{training.micro_batch} * std::max(parallelism.dp, 1));
}

WorkloadSpec parse_workload_spec(std::string_view json_text, const std::string& file) {
  const SpecDocument doc = parse_spec_text(json_text, file);
  return parse_document(doc.json, doc.file);
}

WorkloadSpec load_workload_spec(std::string_view source, const WorkloadOverrides& overrides) {
  const SpecDocument doc =
      load_spec_document(source, resources_detail::workload_preset_resources(), "workload", overrides);
  return parse_document(doc.json, doc.file);
}

std::string workload_spec_to_json(const WorkloadSpec& spec) {
  const ModelSpec& m = spec.model;
  const TrainingSpec& t = spec.training;
  const ParallelismSpec& p = spec.parallelism;
  nlohmann::ordered_json j;
  j["name"] = spec.name;
  if (!spec.description.empty()) j["description"] = spec.description;

  if (spec.is_trace()) {
    j["trace"] = {{"format", spec.trace.format}, {"path", spec.trace.path}};
    if (spec.trace.step == "last")
      j["trace"]["step"] = "last";
    else if (!spec.trace.step.empty())
      j["trace"]["step"] = std::stoll(spec.trace.step);
    return j.dump(2);
  }
  nlohmann::ordered_json model;
  model["type"] = m.type;
  model["layers"] = m.layers;
  model["hidden"] = m.hidden;
  model["heads"] = m.heads;
  if (m.kv_heads > 0) model["kv_heads"] = m.kv_heads;
  if (m.head_dim > 0) model["head_dim"] = m.head_dim;
  model["ffn_hidden"] = m.ffn_hidden;
  model["seq_len"] = m.seq_len;
  model["vocab"] = m.vocab;
  model["activation"] = m.activation;
  model["tied_embeddings"] = m.tied_embeddings;
  model["moe"] = {{"experts", m.moe.experts},
                  {"top_k", m.moe.top_k},
                  {"expert_ffn_hidden", m.moe.expert_ffn_hidden},
                  {"capacity_factor", m.moe.capacity_factor},
                  {"load_imbalance", m.moe.load_imbalance}};
  j["model"] = std::move(model);

  j["training"] = nlohmann::ordered_json::object();
  if (!t.stack.empty()) j["training"]["stack"] = t.stack;
  j["training"].update(nlohmann::ordered_json{{"global_batch", t.global_batch},
                                              {"micro_batch", t.micro_batch},
                                              {"precision", to_string(t.precision)},
                                              {"recompute", t.recompute},
                                              {"optimizer", t.optimizer},
                                              {"attention", t.attention},
                                              {"dropout", t.dropout},
                                              {"host_op_us", t.host_op_us}});
  j["training"]["grad_buffer"] = t.grad_buffer;
  j["training"]["cross_entropy"] = t.cross_entropy;
  j["training"]["selective_recompute"] = t.selective_recompute;
  if (t.torch_compile) j["training"]["torch_compile"] = true;
  if (t.precision == Precision::fp8) {
    j["training"]["fp8_recipe"] = to_string(t.fp8_recipe);
    j["training"]["fp8_weight_cache"] = t.fp8_weight_cache;
  }

  nlohmann::ordered_json par;
  par["tp"] = p.tp;
  par["pp"] = p.pp;
  if (p.dp > 0) par["dp"] = p.dp;  // 0: not given (resolved from the GPU count)
  par["cp"] = p.cp;
  if (p.cp_comm != "ring") par["cp_comm"] = p.cp_comm;  // the default stays out of older specs' canonical text
  par["ep"] = p.ep;
  par["sequence_parallel"] = p.sequence_parallel;
  par["pipeline_schedule"] = p.pipeline_schedule;
  par["virtual_stages"] = p.virtual_stages;
  par["zero_stage"] = p.zero_stage;
  par["overlap_grad_reduce"] = p.overlap_grad_reduce;
  par["overlap_param_gather"] = p.overlap_param_gather;
  if (p.bucket_size_params > 0) par["bucket_size_params"] = p.bucket_size_params;
  par["tp_comm_overlap"] = p.tp_comm_overlap;
  par["order"] = p.order;
  j["parallelism"] = std::move(par);
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
  if (m.seq_len % p.cp != 0)
    throw SpecError(file, "/parallelism/cp", "cp (" + str(p.cp) + ") must divide seq_len (" + str(m.seq_len) + ")");
  if (p.dp % p.ep != 0)
    throw SpecError(file, "/parallelism/ep",
                    "ep (" + str(p.ep) + ") must divide dp (" + str(p.dp) +
                        "): expert parallelism is carved out of data parallelism");
  if (m.ffn_hidden % p.tp != 0 || (m.moe.expert_ffn_hidden > 0 && m.moe.expert_ffn_hidden % p.tp != 0))
    throw SpecError(file, "/parallelism/tp",
                    "tp (" + str(p.tp) + ") must divide ffn_hidden (" + str(m.ffn_hidden) + ")");
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
