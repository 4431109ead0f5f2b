// The software-stack registry: workloads/stacks/<id>.json, compiled into the library.
//
// File format (workloads/stacks/README.md):
//   id, name, description                 strings (id = the file name)
//   defaults {"<workload key>": value}    keys of stack_default_keys(), set unless the workload gives them
//   fused {bias_activation, bias_dropout_add, masked_softmax}        booleans
//   fused {rmsnorm, rope, gqa}            optional booleans (default true: fused)
//   optimizer_kernels                     "multi_tensor" | "per_tensor"
//   pipeline_p2p                          "overlapped" | "blocking"
//   pipeline_instruction_us               optional: host time per pipeline send/recv instruction, us >= 0
//   host_syncs {micro_batch_load, partitioned_pipeline_transfer}
//                                          optional: booleans (default false); where the host waits for
//                                          its GPU (StackHostSyncs)
//   step {grad_norm, loss_all_reduce}     boolean; "per_micro_batch" | "none"
//   step.fixed_s                          optional: a fixed host cost per step, seconds >= 0
//   kernel_time_scale {"<class>": x}      optional: the kernel model's time of a class times x > 0
//                                          (classes: gemm, attention, elementwise, normalization,
//                                          optimizer, embedding, loss; a class not given: 1)
//   memory_passes {fsdp_all_gather_copy_out, fsdp_reduce_scatter_copy_in, optimizer}
//                                          optional: booleans (default false); "fused" | "foreach"
//                                          (default fused); stack_memory_passes.hpp
//   sources {"<value path>": "where it comes from"}: one for every value above, by its path
//     ("training.host_op_us", "fused.bias_activation", "optimizer_kernels", "step.grad_norm");
//     a missing or extra source is an error of the stack file.
#include "workloads/software_stack.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <span>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/core/enum_names.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/resources.hpp"
#include "sim/core/spec_document.hpp"
#include "workloads/attention_implementation.hpp"
#include "workloads/stack_memory_passes.hpp"

namespace clustersim {
namespace resources_detail {
std::span<const Resource> software_stack_resources();  // generated from workloads/stacks/*.json
}  // namespace resources_detail

namespace {

// Workload keys a stack may default: the framework's choices, not the user's model or layout.
const std::vector<std::string> kDefaultKeys = {
    "training.attention",
    "training.dropout",
    "training.host_op_us",
    "training.grad_buffer",
    "training.cross_entropy",
    "training.selective_recompute",
    "parallelism.overlap_grad_reduce",
    "parallelism.overlap_param_gather",
    "parallelism.tp_comm_overlap",
    "parallelism.zero_stage",
    "parallelism.cp_comm",
};

struct FusionField {
  const char* key;
  bool StackFusions::*member;
  bool required;  // optional keys default to fused (true)
};
constexpr FusionField kFusions[] = {
    {"bias_activation", &StackFusions::bias_activation, true},
    {"bias_dropout_add", &StackFusions::bias_dropout_add, true},
    {"masked_softmax", &StackFusions::masked_softmax, true},
    {"rmsnorm", &StackFusions::rmsnorm, false},
    {"rope", &StackFusions::rope, false},
    {"gqa", &StackFusions::gqa, false},
    {"swiglu", &StackFusions::swiglu, false},
};

constexpr EnumName<OptimizerKernels> kOptimizerKernels[] = {
    {OptimizerKernels::multi_tensor, "multi_tensor"},
    {OptimizerKernels::per_tensor, "per_tensor"},
};

constexpr EnumName<PipelineP2P> kPipelineP2P[] = {
    {PipelineP2P::overlapped, "overlapped"},
    {PipelineP2P::blocking, "blocking"},
};

const std::vector<std::string> kLossAllReduce = {"per_micro_batch", "none"};

constexpr EnumName<OptimizerImplementation> kOptimizerImplementations[] = {
    {OptimizerImplementation::fused, "fused"},
    {OptimizerImplementation::foreach, "foreach"},
};

// An optional boolean of a profile's section ("memory_passes.fsdp_all_gather_copy_out"), default false.
template <class Flags>
struct FlagField {
  const char* key;
  bool Flags::*member;
};
constexpr FlagField<StackMemoryPasses> kMemoryPassFlags[] = {
    {"fsdp_all_gather_copy_out", &StackMemoryPasses::fsdp_all_gather_copy_out},
    {"fsdp_reduce_scatter_copy_in", &StackMemoryPasses::fsdp_reduce_scatter_copy_in},
};
constexpr FlagField<StackHostSyncs> kHostSyncFlags[] = {
    {"micro_batch_load", &StackHostSyncs::micro_batch_load},
    {"partitioned_pipeline_transfer", &StackHostSyncs::partitioned_pipeline_transfer},
};

// The flags the section gives, each recorded as a value that needs a source ("section.key").
template <class Flags, std::size_t N>
void read_flags(JsonReader& section, const std::string& name, const FlagField<Flags> (&fields)[N], Flags& flags,
                std::set<std::string>& values) {
  for (const auto& f : fields) {
    if (!section.has(f.key)) continue;
    flags.*f.member = section.boolean(f.key);
    values.insert(name + "." + f.key);
  }
}

// The flags a profile sets: a value with its source, or one differing from the default (false).
template <class Flags, std::size_t N>
void write_flags(nlohmann::ordered_json& section, const std::string& name, const FlagField<Flags> (&fields)[N],
                 const Flags& flags, const std::map<std::string, std::string>& sources) {
  for (const auto& f : fields)
    if (flags.*f.member || sources.count(name + "." + f.key) != 0) section[f.key] = flags.*f.member;
}

StackProfile parse_stack_file(JsonReader r) {
  StackProfile s;
  std::set<std::string> values;  // paths of the values read: each needs a source
  s.id = r.string("id");
  s.name = r.string("name");
  s.description = r.string("description");

  JsonReader defaults = r.object("defaults");
  for (const auto& [key, value] : r.raw("defaults").items()) {
    bool known = false;
    for (const auto& k : kDefaultKeys)
      known = known || k == key;
    if (!known) {
      std::string allowed;
      for (const auto& k : kDefaultKeys)
        allowed += (allowed.empty() ? "" : ", ") + k;
      defaults.fail(key, "a stack may set only these workload keys: " + allowed);
    }
    defaults.accept(key);
    s.defaults.emplace_back(key, value.dump());
    values.insert(key);
  }
  defaults.finish();

  JsonReader fused = r.object("fused");
  for (const auto& f : kFusions) {
    if (!f.required && !fused.has(f.key)) continue;  // the default: fused, nothing to source
    s.fused.*f.member = fused.boolean(f.key);
    values.insert(std::string("fused.") + f.key);
  }
  fused.finish();

  // choice() accepts only the table's names, so value_named finds each
  s.optimizer_kernels = *value_named(kOptimizerKernels, r.choice("optimizer_kernels", enum_names(kOptimizerKernels)));
  values.insert("optimizer_kernels");
  s.pipeline_p2p = *value_named(kPipelineP2P, r.choice("pipeline_p2p", enum_names(kPipelineP2P)));
  values.insert("pipeline_p2p");
  if (auto instruction = r.optional_number("pipeline_instruction_us", NumberRange::between(0.0, 1e6))) {
    s.pipeline_instruction_us = *instruction;
    values.insert("pipeline_instruction_us");
  }
  if (auto syncs = r.optional_object("host_syncs")) {
    read_flags(*syncs, "host_syncs", kHostSyncFlags, s.host_syncs, values);
    syncs->finish();
  }

  JsonReader step = r.object("step");
  s.grad_norm = step.boolean("grad_norm");
  s.loss_all_reduce_per_micro_batch = step.choice("loss_all_reduce", kLossAllReduce) == "per_micro_batch";
  values.insert("step.grad_norm");
  values.insert("step.loss_all_reduce");
  if (auto fixed = step.optional_number("fixed_s", NumberRange::non_negative())) {
    s.step_fixed_s = *fixed;
    values.insert("step.fixed_s");
  }
  step.finish();

  if (auto scale = r.optional_object("kernel_time_scale")) {
    for (KernelClass k : kKernelClasses) {
      if (auto x = scale->optional_number(to_string(k), NumberRange::positive())) {
        s.kernel_time_scale[static_cast<std::size_t>(k)] = *x;
        values.insert(std::string("kernel_time_scale.") + to_string(k));
      }
    }
    scale->finish();
  }

  if (auto passes = r.optional_object("memory_passes")) {
    read_flags(*passes, "memory_passes", kMemoryPassFlags, s.memory_passes, values);
    if (passes->has("optimizer")) {
      s.memory_passes.optimizer =
          *value_named(kOptimizerImplementations, passes->choice("optimizer", enum_names(kOptimizerImplementations)));
      values.insert("memory_passes.optimizer");
    }
    passes->finish();
  }

  JsonReader sources = r.object("sources");
  for (const auto& [key, text] : r.raw("sources").items()) {
    if (values.count(key) == 0) sources.fail(key, "a source for a value the stack does not set");
    s.sources[key] = sources.string(key);
  }
  for (const auto& v : values)
    if (s.sources.count(v) == 0) r.fail("sources", "every value needs a source; missing: \"" + v + "\"");
  sources.finish();
  r.finish();
  return s;
}

// The profile `id`: a built-in id, or a profile file (is_stack_file).
StackProfile load_stack(std::string_view id, const std::string& file, const std::string& json_path) {
  if (is_stack_file(id)) {
    const std::string path(id);
    std::ifstream in(path, std::ios::binary);
    if (!in)
      throw SpecError(file, json_path,
                      "cannot read the software stack profile file \"" + path +
                          "\" (a path ending in .json is resolved relative to the spec's directory)");
    std::ostringstream text;
    text << in.rdbuf();
    const SpecDocument doc = parse_spec_text(text.str(), path);
    return parse_stack_file(JsonReader(doc.json, doc.file));
  }
  const Resource* entry = find_resource(resources_detail::software_stack_resources(), id);
  if (entry == nullptr) {
    std::string known;
    for (const auto& s : software_stack_ids())
      known += (known.empty() ? "" : ", ") + s;
    throw SpecError(file, json_path,
                    "unknown software stack \"" + std::string(id) + "\"; expected one of " + known +
                        ", or the path of a stack profile file ending in .json");
  }
  const SpecDocument doc = parse_spec_text(entry->text, entry->path);
  StackProfile parsed = parse_stack_file(JsonReader(doc.json, doc.file));
  if (parsed.id != entry->name)
    throw SpecError(doc.file, "/id", "the id '" + parsed.id + "' differs from the file name '" + entry->name + "'");
  return parsed;
}

}  // namespace

std::vector<std::string> software_stack_ids() {
  return resource_names(resources_detail::software_stack_resources());
}

std::vector<std::string> stack_default_keys() {
  return kDefaultKeys;
}

bool is_stack_file(std::string_view reference) {
  return reference.size() > 5 && reference.substr(reference.size() - 5) == ".json";
}

std::string resolve_stack_reference(const std::string& reference, const std::string& file,
                                    const std::string& json_path) {
  if (!is_stack_file(reference)) {
    const std::vector<std::string> ids = software_stack_ids();
    if (std::find(ids.begin(), ids.end(), reference) == ids.end()) {
      std::string known;
      for (const auto& id : ids)
        known += (known.empty() ? "" : ", ") + id;
      throw SpecError(file, json_path,
                      "expected one of " + known + ", got \"" + reference +
                          "\" (or the path of a stack profile file ending in .json, relative to this spec)");
    }
    return reference;
  }
  // Absolute, so that a spec written back (workload_spec_to_json) and read from elsewhere names the same file.
  const std::filesystem::path p(reference);
  const std::filesystem::path resolved =
      p.is_absolute() || file.empty() ? p : std::filesystem::path(file).parent_path() / p;
  return std::filesystem::absolute(resolved).lexically_normal().string();
}

StackProfile find_software_stack(std::string_view id, const std::string& file, const std::string& json_path) {
  return load_stack(id, file, json_path);
}

StackMemoryPasses stack_memory_passes(std::string_view id, const std::string& file, const std::string& json_path) {
  return load_stack(id, file, json_path).memory_passes;
}

// PyTorch's foreach Adam/AdamW (torch/optim/adamw.py _multi_tensor_adamw @ v2.5.0; adam.py
// _multi_tensor_adam with decoupled weight decay @ v2.6.0, the same passes), per fp32 parameter, each
// pass one multi-tensor kernel reading and writing whole tensors:
//   _foreach_mul_(params, 1 - lr wd)                    read p, write p                  8
//   _foreach_lerp_(exp_avgs, grads, 1 - beta1)          read m, g, write m              12
//   _foreach_mul_(exp_avg_sqs, beta2)                   read v, write v                  8
//   _foreach_addcmul_(exp_avg_sqs, grads, grads, ...)   read v, g, write v              12
//   exp_avg_sq_sqrt = _foreach_sqrt(exp_avg_sqs)        read v, write a temporary        8
//   _foreach_div_(exp_avg_sq_sqrt, bc2_sqrt)            read, write the temporary        8
//   _foreach_add_(exp_avg_sq_sqrt, eps)                 read, write the temporary        8
//   _foreach_addcdiv_(params, exp_avgs, sqrt, step)     read p, m, the temporary, write p 16
// 80 bytes, against the fused kernel's 28 (read g, read and write p, m, v) that optimizer_step_cost
// counts: 52 more. clip_grad_norm_ (torch/nn/utils/clip_grad.py, foreach) then scales every gradient by
// the clamped clip coefficient whatever its value (_foreach_mul_: read and write the fp32 gradient, 8),
// after the norm pass the graph counts. SGD's foreach passes are not counted (0).
double foreach_optimizer_extra_bytes(std::string_view optimizer, bool grad_norm) {
  constexpr double kAdamForeachBytes = 80.0, kAdamFusedBytes = 28.0, kClipScaleBytes = 8.0;
  const double optimizer_passes = optimizer == "adam" ? kAdamForeachBytes - kAdamFusedBytes : 0.0;
  return optimizer_passes + (grad_norm ? kClipScaleBytes : 0.0);
}

std::string software_stack_to_json(const StackProfile& s) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["id"] = s.id;
  j["name"] = s.name;
  j["description"] = s.description;
  Json defaults = Json::object();
  for (const auto& [key, value] : s.defaults)
    defaults[key] = Json::parse(value);
  j["defaults"] = defaults;
  Json fused = Json::object();
  for (const auto& f : kFusions)
    if (f.required || !(s.fused.*f.member) || s.sources.count(std::string("fused.") + f.key) > 0)
      fused[f.key] = s.fused.*f.member;
  j["fused"] = fused;
  j["optimizer_kernels"] = name_of(kOptimizerKernels, s.optimizer_kernels);
  j["pipeline_p2p"] = name_of(kPipelineP2P, s.pipeline_p2p);
  if (s.sources.count("pipeline_instruction_us") != 0) j["pipeline_instruction_us"] = s.pipeline_instruction_us;
  Json syncs = Json::object();
  write_flags(syncs, "host_syncs", kHostSyncFlags, s.host_syncs, s.sources);
  if (!syncs.empty()) j["host_syncs"] = syncs;
  Json step = {{"grad_norm", s.grad_norm},
               {"loss_all_reduce", s.loss_all_reduce_per_micro_batch ? "per_micro_batch" : "none"}};
  if (s.sources.count("step.fixed_s") != 0) step["fixed_s"] = s.step_fixed_s;
  j["step"] = step;
  Json scale = Json::object();
  for (KernelClass k : kKernelClasses) {
    const std::string key = std::string("kernel_time_scale.") + to_string(k);
    if (s.sources.count(key) != 0) scale[to_string(k)] = s.kernel_time_scale[static_cast<std::size_t>(k)];
  }
  if (!scale.empty()) j["kernel_time_scale"] = scale;
  // The memory passes a profile sets (a value with its source, or one differing from the default: none).
  Json passes = Json::object();
  write_flags(passes, "memory_passes", kMemoryPassFlags, s.memory_passes, s.sources);
  if (s.memory_passes.optimizer != OptimizerImplementation::fused || s.sources.count("memory_passes.optimizer") != 0)
    passes["optimizer"] = name_of(kOptimizerImplementations, s.memory_passes.optimizer);
  if (!passes.empty()) j["memory_passes"] = passes;
  Json sources = Json::object();
  for (const auto& [key, text] : s.sources)
    sources[key] = text;
  j["sources"] = sources;
  return j.dump(2) + "\n";
}

std::array<double, kKernelClassCount> kernel_time_scales(const StackProfile& stack, std::string_view attention) {
  std::array<double, kKernelClassCount> scales = stack.kernel_time_scale;
  scales[static_cast<std::size_t>(KernelClass::attention)] *= find_attention_implementation(attention).time_vs_flash2;
  return scales;
}

}  // namespace clustersim
