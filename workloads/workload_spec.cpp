#include "workloads/workload_spec.hpp"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <span>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/resources.hpp"
#include "sim/core/spec_document.hpp"

namespace clustersim {
namespace resources_detail {
std::span<const Resource> workload_preset_resources();  // generated from workloads/presets/*.json
}  // namespace resources_detail

namespace {

// The precisions: name in specs and bytes of one element of the compute dtype.
struct PrecisionInfo {
  Precision precision;
  const char* name;
  double bytes;
};
constexpr PrecisionInfo kPrecisions[] = {
    {Precision::fp32, "fp32", 4.0}, {Precision::tf32, "tf32", 4.0}, {Precision::fp16, "fp16", 2.0},
    {Precision::bf16, "bf16", 2.0}, {Precision::fp8, "fp8", 1.0},
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
    names.emplace_back(i.name);
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
  m.layers = positive_int(r, "layers");
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
  t.global_batch = r.integer("global_batch", 1);
  t.micro_batch = positive_int_or(r, "micro_batch", 1);
  t.precision = precision_from_name(r.choice_or("precision", precision_names(), "bf16"));
  t.recompute = r.choice_or("recompute", kRecompute, "none");
  t.optimizer = r.choice_or("optimizer", kOptimizers, "adam");
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
  p.ep = positive_int_or(r, "ep", 1);
  p.sequence_parallel = r.boolean_or("sequence_parallel", false);
  p.pipeline_schedule = r.choice_or("pipeline_schedule", kSchedules, "1f1b");
  p.virtual_stages = positive_int_or(r, "virtual_stages", 1);
  p.zero_stage = static_cast<int>(r.integer_or("zero_stage", 0, 0, 3));
  p.overlap_grad_reduce = r.boolean_or("overlap_grad_reduce", true);
  p.bucket_size_params = r.optional_integer("bucket_size_params", 1).value_or(0);

  if (p.virtual_stages > 1 && p.pipeline_schedule != "interleaved")
    r.fail("virtual_stages",
           "virtual_stages > 1 needs pipeline_schedule \"interleaved\", got \"" + p.pipeline_schedule + "\"");
  if (p.ep > 1 && (model.moe.experts == 0 || model.moe.experts % p.ep != 0))
    r.fail("ep", "ep (" + std::to_string(p.ep) + ") must divide the number of experts (" +
                     std::to_string(model.moe.experts) + ")");
  r.finish();
  return p;
}

WorkloadSpec parse_document(const nlohmann::json& json, const std::string& file) {
  JsonReader root(json, file);
  if (root.has("trace"))
    throw SpecError(file, "/trace",
                    "trace import is not supported yet; describe the workload with \"model\", \"training\" and "
                    "\"parallelism\"");
  WorkloadSpec spec;
  spec.source_file = file;
  spec.name = root.optional_string("name").value_or(std::filesystem::path(file).stem().string());
  spec.description = root.optional_string("description").value_or("");
  spec.model = parse_model(root.object("model"));
  spec.training = parse_training(root.object("training"));
  if (auto par = root.optional_object("parallelism")) spec.parallelism = parse_parallelism(*par, spec.model);
  root.accept("trace");
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
                  {"capacity_factor", m.moe.capacity_factor}};
  j["model"] = std::move(model);

  j["training"] = {{"global_batch", t.global_batch},
                   {"micro_batch", t.micro_batch},
                   {"precision", to_string(t.precision)},
                   {"recompute", t.recompute},
                   {"optimizer", t.optimizer}};

  nlohmann::ordered_json par;
  par["tp"] = p.tp;
  par["pp"] = p.pp;
  if (p.dp > 0) par["dp"] = p.dp;  // 0: not given (resolved from the GPU count)
  par["cp"] = p.cp;
  par["ep"] = p.ep;
  par["sequence_parallel"] = p.sequence_parallel;
  par["pipeline_schedule"] = p.pipeline_schedule;
  par["virtual_stages"] = p.virtual_stages;
  par["zero_stage"] = p.zero_stage;
  par["overlap_grad_reduce"] = p.overlap_grad_reduce;
  if (p.bucket_size_params > 0) par["bucket_size_params"] = p.bucket_size_params;
  j["parallelism"] = std::move(par);
  return j.dump(2);
}

void resolve_parallelism(WorkloadSpec& spec, int gpu_count) {
  const std::string& file = spec.source_file;
  ParallelismSpec& p = spec.parallelism;
  const ModelSpec& m = spec.model;
  if (gpu_count <= 0) throw SpecError(file, "/parallelism", "the cluster has no GPUs (" + str(gpu_count) + ")");

  const std::int64_t model_parallel = std::int64_t{p.tp} * p.pp * p.cp;
  if (p.dp == 0) {
    if (gpu_count % model_parallel != 0)
      throw SpecError(file, "/parallelism",
                      "tp * pp * cp = " + str(p.tp) + " * " + str(p.pp) + " * " + str(p.cp) + " = " +
                          str(model_parallel) + " does not divide the " + str(gpu_count) + " GPUs of the cluster");
    p.dp = static_cast<int>(gpu_count / model_parallel);
  } else if (model_parallel * p.dp != gpu_count) {
    throw SpecError(file, "/parallelism/dp",
                    "tp * pp * cp * dp = " + str(p.tp) + " * " + str(p.pp) + " * " + str(p.cp) + " * " + str(p.dp) +
                        " = " + str(model_parallel * p.dp) + ", but the cluster has " + str(gpu_count) + " GPUs");
  }

  const std::int64_t per_step = std::int64_t{spec.training.micro_batch} * p.dp;
  if (spec.training.global_batch % per_step != 0)
    throw SpecError(file, "/training/global_batch",
                    "global_batch (" + str(spec.training.global_batch) + ") must be a multiple of micro_batch * dp = " +
                        str(spec.training.micro_batch) + " * " + str(p.dp) + " = " + str(per_step));
  if (m.heads % p.tp != 0 || m.effective_kv_heads() % p.tp != 0)
    throw SpecError(file, "/parallelism/tp",
                    "tp (" + str(p.tp) + ") must divide heads (" + str(m.heads) + ") and kv_heads (" +
                        str(m.effective_kv_heads()) + ")");
  if (p.pp > m.layers)
    throw SpecError(file, "/parallelism/pp",
                    "pp (" + str(p.pp) + ") must not exceed the number of layers (" + str(m.layers) + ")");

  // This milestone simulates data parallelism only. The checks above stay valid when the other
  // dimensions arrive; these refusals are removed one by one as they do.
  struct Unsimulated {
    const char* path;
    int value;
    int simulated;
    const char* what;
  };
  const Unsimulated refusals[] = {
      {"/parallelism/tp", p.tp, 1,
       "only tp = 1 is simulated so far (tensor parallelism arrives with the "
       "parallel-training milestone)"},
      {"/parallelism/pp", p.pp, 1,
       "only pp = 1 is simulated so far (pipeline parallelism arrives with the "
       "parallel-training milestone)"},
      {"/parallelism/cp", p.cp, 1,
       "only cp = 1 is simulated so far (context parallelism arrives with the "
       "parallel-training milestone)"},
      {"/parallelism/ep", p.ep, 1,
       "only ep = 1 is simulated so far (expert parallelism arrives with the "
       "parallel-training milestone)"},
      {"/parallelism/zero_stage", p.zero_stage, 0,
       "only zero_stage = 0 is simulated so far (sharded optimizers arrive with the parallel-training milestone)"},
  };
  for (const auto& r : refusals) {
    if (r.value != r.simulated) throw SpecError(file, r.path, r.what);
  }
}

std::vector<std::string> workload_preset_names() {
  return resource_names(resources_detail::workload_preset_resources());
}

}  // namespace clustersim
