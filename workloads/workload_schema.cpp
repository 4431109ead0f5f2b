#include "workloads/workload_schema.hpp"

#include <climits>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/json_reader.hpp"
#include "sim/core/spec_schema.hpp"
#include "workloads/attention_implementation.hpp"
#include "workloads/context_parallel_comm.hpp"
#include "workloads/fp8_recipe.hpp"
#include "workloads/memory_recipe.hpp"
#include "workloads/optimizer_offload.hpp"
#include "workloads/software_stack.hpp"
#include "workloads/trace_format.hpp"
#include "workloads/workload_schema_io.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

// The enums of the workload spec are written by name.
template <>
struct FieldCodec<Precision> {
  static nlohmann::json encode(Precision p) { return to_string(p); }
  static void decode(const nlohmann::json& v, Precision& out) {
    for (const Precision p : training_precisions())
      if (v.get<std::string>() == to_string(p)) out = p;
  }
};

template <>
struct FieldCodec<Fp8Recipe> {
  static nlohmann::json encode(Fp8Recipe r) { return to_string(r); }
  static void decode(const nlohmann::json& v, Fp8Recipe& out) { out = fp8_recipe_from_name(v.get<std::string>()); }
};

namespace {

constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMaxLayers = std::int64_t{1} << 14;  // the largest published dense models: 100-200

// -- values of the spec's structs as JSON ------------------------------------------------------------

using Row = SchemaRow<WorkloadSpec>;

template <auto... Members>
Row row(SpecField field, std::string_view omitted_when = {}) {
  return schema_row<WorkloadSpec, Members...>(std::move(field), omitted_when);
}

std::vector<std::string> precision_choices() {
  std::vector<std::string> out;
  for (const Precision p : training_precisions())
    out.emplace_back(to_string(p));
  return out;
}

std::string fp8_only(const WorkloadSpec& s) {
  if (s.training.precision == Precision::fp8) return "";
  return std::string("applies to precision \"fp8\" only, got precision \"") + to_string(s.training.precision) + "\"";
}

void read_name(JsonReader& r, const SpecField&, WorkloadSpec& s) {
  s.name = r.optional_string("name").value_or(std::filesystem::path(r.file()).stem().string());
}

void read_stack(JsonReader& r, const SpecField&, WorkloadSpec& s) {
  if (r.has("stack")) s.training.stack = resolve_stack_reference(r.string("stack"), r.file(), r.path_of("stack"));
}

void read_trace_path(JsonReader& r, const SpecField&, WorkloadSpec& s) {
  const std::string path = r.string("path");
  const std::filesystem::path p(path);
  s.trace.path =
      p.is_absolute() || r.file().empty() ? path : (std::filesystem::path(r.file()).parent_path() / p).string();
}

void read_trace_step(JsonReader& r, const SpecField&, WorkloadSpec& s) {
  if (!r.has("step")) return;
  const nlohmann::json& step = r.raw("step");
  if (step.is_number_integer() && step.get<std::int64_t>() >= 0) {
    s.trace.step = std::to_string(step.get<std::int64_t>());
  } else if (step.is_string() && step.get<std::string>() == "last") {
    s.trace.step = "last";
  } else {
    r.fail("step", "expected a step number >= 0 (ProfilerStep#N) or \"last\", got " + describe_json(step));
  }
  if (find_trace_format(s.trace.format)->read_step == nullptr)
    r.fail("step", "the " + s.trace.format + " trace format marks no training steps: remove \"step\"");
}

// The step as the spec writes it: "last", a number, or "" (the whole trace; left out).
nlohmann::json get_trace_step(const WorkloadSpec& s) {
  if (s.trace.step.empty() || s.trace.step == "last") return s.trace.step;
  return std::stoll(s.trace.step);
}

void set_trace_step(WorkloadSpec& s, const nlohmann::json& v) {
  s.trace.step = v.is_string() ? v.get<std::string>() : std::to_string(v.get<std::int64_t>());
}

std::string mha_only(const WorkloadSpec& s) {
  if (!s.model.latent_attention()) return "";
  return "does not apply to attention_type \"mla\" (its key/value shape is model.mla)";
}

std::string mla_only(const WorkloadSpec& s) {
  if (s.model.latent_attention()) return "";
  return "applies to attention_type \"mla\" only, got attention_type \"" + s.model.attention_type + "\"";
}

std::string moe_only(const WorkloadSpec& s) {
  if (s.model.moe.experts > 0) return "";
  return "applies to a mixture of experts only (experts > 0)";
}

std::vector<std::string> stack_choices() {
  return software_stack_ids();
}

// The workload's builders (sim/core/spec_schema.hpp has the generic ones).
SpecField integer(std::string_view path, bool stable, std::int64_t min, std::int64_t max, std::string_view default_json,
                  std::string_view default_doc, std::string_view doc) {
  return integer_field(path, stable, min, max, default_json, default_doc, doc);
}

// A required integer field >= 1 (the int members of the spec).
SpecField count(std::string_view path, bool stable, std::string_view unit, std::string_view doc) {
  return with_unit(integer_field(path, stable, 1, INT_MAX, "", "", doc), unit);
}

SpecField number(std::string_view path, bool stable, NumberRange range, std::string_view default_json,
                 std::string_view unit, std::string_view doc) {
  return number_field(path, stable, range, default_json, "", unit, doc);
}

SpecField boolean(std::string_view path, bool stable, std::string_view default_json, std::string_view doc) {
  return spec_field(path, FieldType::boolean, stable, default_json, "", doc);
}

SpecField choice(std::string_view path, bool stable, std::vector<std::string> (*choices)(),
                 std::string_view default_json, std::string_view doc) {
  return with_known_values(spec_field(path, FieldType::choice, stable, default_json, "", doc), choices);
}

SpecField text(std::string_view path, bool stable, std::string_view default_json, std::string_view default_doc,
               std::string_view doc) {
  return spec_field(path, FieldType::string, stable, default_json, default_doc, doc);
}

const std::vector<Row>& rows() {
  using W = WorkloadSpec;
  using M = ModelSpec;
  using E = MoeSpec;
  using L = MlaSpec;
  using T = TrainingSpec;
  using P = ParallelismSpec;
  using R = TraceSpec;
  static const std::vector<Row> table = [] {
    std::vector<Row> t;
    auto add = [&t](Row r, Row::Reader read = nullptr, Row::Applicability applies = nullptr) {
      r.read = read;
      r.applies = applies;
      t.push_back(std::move(r));
    };
    add(row<&W::name>(text("name", true, "", "the file's name without its extension", "")), &read_name);
    add(row<&W::description>(text("description", false, "\"\"", "", "where the model shape comes from"), "\"\""));

    // model
    add(row<&W::model, &M::type>(choice(
        "model.type", true, [] { return std::vector<std::string>{"transformer"}; }, "\"transformer\"", "")));
    add(row<&W::model, &M::layers>(
        integer("model.layers", true, 1, kMaxLayers, "", "",
                "transformer layers; layers x micro-batches per rank per step at most 2^20 (1,048,576; about 2.3 GB "
                "of generated ops), else exit 2 at `/training/global_batch`")));
    add(row<&W::model, &M::hidden>(count("model.hidden", true, "", "hidden size")));
    add(row<&W::model, &M::heads>(count("model.heads", true, "", "attention heads")));
    add(row<&W::model, &M::attention_type>(
        choice(
            "model.attention_type", false,
            [] {
              return std::vector<std::string>{"mha", "mla"};
            },
            "\"mha\"",
            "`mha`: multi-head attention (grouped-query with `kv_heads` < `heads`); `mla`: multi-head latent "
            "attention (DeepSeek-V2/V3; its shape in `model.mla`, `kv_heads` and `head_dim` do not apply): "
            "projections through the latent ranks, attention over qk_nope + qk_rope dimensions per head for "
            "scores and v_head_dim for values, a KV cache of kv_lora_rank + qk_rope_head_dim elements per "
            "token and layer (workloads/transformer_math.cpp)"),
        "\"mha\""));
    add(row<&W::model, &M::kv_heads>(
            integer("model.kv_heads", true, 1, INT_MAX, "", "`heads`",
                    "key/value heads, dividing `heads`; fewer than heads: grouped-query attention"),
            "0"),
        nullptr, &mha_only);
    add(row<&W::model, &M::head_dim>(integer("model.head_dim", false, 1, INT_MAX, "", "hidden / heads", ""), "0"),
        nullptr, &mha_only);
    add(row<&W::model, &M::ffn_hidden>(count("model.ffn_hidden", true, "", "MLP width")));
    add(row<&W::model, &M::seq_len>(count("model.seq_len", true, "tokens", "sequence length")));
    add(row<&W::model, &M::vocab>(count("model.vocab", true, "", "vocabulary size")));
    add(row<&W::model, &M::activation>(choice(
        "model.activation", true,
        [] {
          return std::vector<std::string>{"gelu", "swiglu", "squared_relu"};
        },
        "\"gelu\"", "swiglu: three MLP matrices")));
    add(row<&W::model, &M::tied_embeddings>(
        boolean("model.tied_embeddings", false, "false", "output projection shares the embedding")));
    add(row<&W::model, &M::mtp_depth>(
        integer(
            "model.mtp_depth", false, 0, 16, "0", "",
            "multi-token prediction modules (DeepSeek-V3, arXiv:2412.19437 sec. 2.2, which trains D = 1): on the last "
            "pipeline stage, module k normalizes the previous depth's hidden state and the embedding of token i + k "
            "(the embedding table shared; a copy on the last stage with pp > 1, its gradient all-reduced with the "
            "first), projects the 2h concatenation to h, runs one transformer layer shaped like the model's last "
            "(its experts too), a final norm and the shared output head with a loss of its own. Parameters per "
            "module: 2h^2 + 3 norms + a layer (workloads/transformer_math.cpp)"),
        "0"));
    add(row<&W::model, &M::moe, &E::experts>(
        integer("model.moe.experts", true, 0, INT_MAX, "0", "", "experts per MoE layer; 0: a dense model")));
    add(row<&W::model, &M::moe, &E::top_k>(integer("model.moe.top_k", true, 0, INT_MAX, "0", "",
                                                   "experts per token; at most `experts`, >= 1 with experts")));
    add(row<&W::model, &M::moe, &E::expert_ffn_hidden>(
        integer("model.moe.expert_ffn_hidden", true, 0, INT_MAX, "0", "", "an expert's MLP width; 0: `ffn_hidden`")));
    add(row<&W::model, &M::moe, &E::capacity_factor>(
        number("model.moe.capacity_factor", true, NumberRange::positive(), "1.0", "",
               "with `token_dropping`: the most routed tokens an expert-parallel rank takes, over its mean "
               "(T x top_k); without it, unused (no token is dropped)")));
    add(row<&W::model, &M::moe, &E::token_dropping>(
            boolean("model.moe.token_dropping", false, "false",
                    "tokens past a rank's capacity (`capacity_factor` x T x top_k) skip the experts "
                    "(Megatron-Core's --moe-expert-capacity-factor with token dropping): the busiest rank's "
                    "expert GEMMs and all-to-alls are capped there"),
            "false"),
        nullptr, &moe_only);
    add(row<&W::model, &M::moe, &E::load_imbalance>(number(
        "model.moe.load_imbalance", false, NumberRange::at_least(1.0), "1.0", "",
        "tokens of the busiest expert-parallel rank over the mean; every rank's all-to-alls and expert GEMMs wait "
        "for it (with `load_distribution` `multinomial`: a factor on top of the random imbalance)")));
    add(row<&W::model, &M::moe, &E::load_distribution>(
            choice(
                "model.moe.load_distribution", false,
                [] {
                  return std::vector<std::string>{"factor", "multinomial"};
                },
                "\"factor\"",
                "`factor`: the busiest rank's load is `load_imbalance` x the mean; `multinomial`: each routed copy "
                "picks an expert uniformly, and the busiest of the ep ranks takes the expected maximum of their "
                "loads, T top_k (1 + z_ep sqrt((1 - 1/ep) / (T top_k))) with z_ep the expected largest of ep standard "
                "normals, times `load_imbalance` (workloads/moe_routing.cpp)"),
            "\"factor\""),
        nullptr, &moe_only);
    add(row<&W::model, &M::moe, &E::shared_experts>(
            integer("model.moe.shared_experts", false, 0, INT_MAX, "0", "",
                    "experts every token passes through besides its routed ones (DeepSeek's shared experts), each "
                    "`expert_ffn_hidden` wide, run as one tensor-parallel MLP of shared_experts x expert_ffn_hidden "
                    "(Megatron-Core's shared_expert_intermediate_size)"),
            "0"),
        nullptr, &moe_only);
    add(row<&W::model, &M::moe, &E::first_dense_layers>(
            integer("model.moe.first_dense_layers", false, 0, INT_MAX, "0", "",
                    "the first layers are dense, their MLP `ffn_hidden` wide (DeepSeek-V3's first_k_dense_replace "
                    "3); fewer than `layers`"),
            "0"),
        nullptr, &moe_only);
    add(row<&W::model, &M::moe, &E::max_nodes_per_token>(
            integer("model.moe.max_nodes_per_token", false, 0, INT_MAX, "0", "",
                    "node-limited routing (DeepSeek-V3's M, arXiv:2412.19437 sec. 2.1.2): each token's routed "
                    "experts sit on at most this many nodes of its expert-parallel group, which must hold top_k "
                    "experts; DeepEP's dispatch (`ep=deepep`) sends a token over RDMA once per remote node it "
                    "reaches, the expected count in workloads/expert_routing.cpp; 0: unlimited"),
            "0"),
        nullptr, &moe_only);
    auto mla_dim = [](std::string_view path, std::string_view doc) {
      return integer(path, false, 0, INT_MAX, "0", "", doc);
    };
    add(row<&W::model, &M::mla, &L::q_lora_rank>(
            mla_dim("model.mla.q_lora_rank",
                    "rank of the query's down projection (an RMSNorm between down and up projection); 0: queries "
                    "projected from the hidden state directly (DeepSeek-V2-Lite)"),
            "0"),
        nullptr, &mla_only);
    add(row<&W::model, &M::mla, &L::kv_lora_rank>(
            mla_dim("model.mla.kv_lora_rank", "rank of the compressed key-value latent, cached (>= 1)"), "0"),
        nullptr, &mla_only);
    add(row<&W::model, &M::mla, &L::qk_nope_head_dim>(
            mla_dim("model.mla.qk_nope_head_dim", "per-head query/key dimensions without rotary embedding (>= 1)"),
            "0"),
        nullptr, &mla_only);
    add(row<&W::model, &M::mla, &L::qk_rope_head_dim>(
            mla_dim("model.mla.qk_rope_head_dim",
                    "per-head query/key dimensions with rotary embedding; the rotary key is one per token, shared "
                    "by the heads, and cached (>= 1)"),
            "0"),
        nullptr, &mla_only);
    add(row<&W::model, &M::mla, &L::v_head_dim>(mla_dim("model.mla.v_head_dim", "per-head value dimensions (>= 1)"),
                                                "0"),
        nullptr, &mla_only);

    // training
    add(row<&W::training, &T::stack>(
            with_type_doc(
                with_known_values(
                    text("training.stack", false, "", "`megatron-core`",
                         "the software stack that runs the step (workloads/stacks/README.md; a path ending in `.json`, "
                         "relative to the spec, names a profile file such as `clustersim calibrate --from-trace` "
                         "writes, docs/traces.md): its profile sets `attention`, `dropout`, `host_op_us`, "
                         "`grad_buffer`, `cross_entropy`, `selective_recompute`, `overlap_grad_reduce`, "
                         "`overlap_param_gather`, `tp_comm_overlap` (and `zero_stage` for the FSDP stacks) unless the "
                         "workload gives them, and says which kernels are fused, how the optimizer and the pipeline "
                         "sends are issued and the fixed costs of a step (gradient norm, per-micro-batch loss "
                         "all-reduce). Every value has a source in the profile; the report names the stack "
                         "(`run.stack`, `provenance.stack`). The defaults in this table are the default stack's"),
                    &stack_choices),
                "`megatron-core` \\| `megatron-deepspeed` \\| `pytorch-fsdp2` \\| `jax-xla` \\| a profile "
                "file `*.json`"),
            "\"\""),
        &read_stack);
    add(row<&W::training, &T::global_batch>(with_unit(
        integer("training.global_batch", true, 1, kMaxInt64, "", "",
                "sequences per step; a multiple of micro_batch x dp, at most 65536 micro-batches per rank per step "
                "(global_batch / (micro_batch x dp))"),
        "sequences")));
    add(row<&W::training, &T::micro_batch>(with_unit(
        integer("training.micro_batch", true, 1, INT_MAX, "1", "", "sequences per micro-batch per data-parallel rank"),
        "sequences")));
    add(row<&W::training, &T::precision>(choice("training.precision", true, &precision_choices, "\"bf16\"",
                                                "mixed precision: fp32 master weights and optimizer state")));
    add(row<&W::training, &T::recompute>(choice(
        "training.recompute", true,
        [] {
          return std::vector<std::string>{"none", "selective", "full"};
        },
        "\"none\"", "activation recomputation")));
    add(row<&W::training, &T::optimizer>(choice(
        "training.optimizer", true,
        [] {
          return std::vector<std::string>{"adam", "sgd"};
        },
        "\"adam\"", "")));
    add(row<&W::training, &T::optimizer_offload>(
        choice(
            "training.optimizer_offload", false, &optimizer_offload_names, "\"none\"",
            "where the optimizer state lives: `none`, HBM; `cpu`, host memory (DeepSpeed ZeRO-Offload, Ren et al. "
            "2021; Megatron-Core `--optimizer-cpu-offload`): the fp32 master weights and moments leave the GPU's "
            "memory (the `host_optimizer_bytes` line, checked against the host tier's `host_memory_GB` where the GPU "
            "gives it), each step copies the gradients to the host and the 16-bit weights back over the host link "
            "(NVLink-C2C on GB200 / GB300, PCIe elsewhere) and runs the update on the CPU at the host memory's "
            "bandwidth (workloads/optimizer_offload.cpp, sim/hardware/host_memory_tier.cpp)"),
        "\"none\""));
    add(row<&W::training, &T::attention>(choice(
        "training.attention", false, &attention_implementation_names, "\"flash\"",
        "flash: one fused kernel (FlashAttention-2: causal, the masked tiles skipped; timed by its thread blocks "
        "and tiles, sim/hardware/kernel_model.cpp); triton: the Triton FlashAttention kernel (llm-foundry's "
        "`attn_impl: triton`, MPT with ALiBi): the same fused kernel and memory at 1.80x FlashAttention-2's time "
        "(Dao 2023, FlashAttention-2 sec. 4.1: 1.3-2.5x faster than FlashAttention in Triton; geometric middle; "
        "workloads/attention_implementation.cpp); unfused: Megatron-LM's batched GEMMs around a scale-mask-softmax "
        "over the s x s scores (runs before flash attention)")));
    add(row<&W::training, &T::dropout>(
        number("training.dropout", false, NumberRange::between(0.0, 0.99), "0.0", "",
               "dropout on the attention probabilities and hidden states: its masks and (unfused attention) a kernel "
               "over the probabilities; Megatron-LM's GPT default is 0.1")));
    // Up to one second per op: fitted values are tens of microseconds (docs/validation.md); a larger
    // one is a unit mistake, and an unbounded one overflows the step's time to infinity.
    add(row<&W::training, &T::host_op_us>(number(
        "training.host_op_us", false, NumberRange::between(0.0, 1e6), "0.0", "us",
        "CPU time the framework spends issuing one op of the execution graph: a rank's host issues its ops in "
        "program order, op k at (k + 1) x host_op_us, and none starts on the GPU earlier; where the stack's host "
        "waits for its GPU (`host_syncs`, workloads/stacks/README.md) the count restarts from that moment. Only "
        "small kernels feel it (the report's `breakdown.host_wait_s`). Each op here stands for several "
        "eager-PyTorch kernels (casts, bias adds, copies), so the value is larger than PyTorch's per-kernel "
        "dispatch: 70 fits "
        "Megatron-DeepSpeed on A100 hosts (vTrain's single-node runs, docs/validation.md). 0: the host is never "
        "the bottleneck (CUDA graphs). Every op costs the same, communication and the chunks of `tp_comm_overlap` "
        "included, so the value fitted on plain Megatron-DeepSpeed graphs overstates hosts that issue those "
        "chunks from C++ (Transformer Engine)")));
    add(row<&W::training, &T::grad_buffer>(choice(
        "training.grad_buffer", false, &memory_recipe_names<GradBufferRecipe>, "\"persistent\"",
        "the lifetime and dtype of the main gradients: `persistent`, Megatron-LM's DDP buffer allocated before "
        "the first step (and its gradient-accumulation fusion: weight gradients accumulate straight into it); "
        "`per_step`, PyTorch eager: each main gradient allocated in the backward pass, freed after the optimizer "
        "step (with one micro-batch per step none exists before the backward pass); `persistent_bf16`, "
        "Megatron-Core's buffer in the 16-bit parameter dtype (`grad_reduce_in_fp32` off, NeMo's "
        "`grad_sync_dtype: bf16`): 2 bytes per parameter, reduced in bf16 (half the gradient reduce-scatter / "
        "all-reduce bytes of the step), plus the optimizer's fp32 copy of its shard at the step")));
    add(row<&W::training, &T::cross_entropy>(
        choice("training.cross_entropy", false, &memory_recipe_names<CrossEntropyRecipe>, "\"vocab_parallel\"",
               "the loss over the vocabulary (memory only): Megatron-Core's vocab-parallel cross entropy keeps 6 bytes "
               "per logit at its peak, PyTorch's `F.cross_entropy` of fp32 logits 12, a fused softmax-cross-entropy "
               "kernel (flash-attn's Triton `CrossEntropyLoss`, llm-foundry's default) 4: the 16-bit logits and their "
               "gradient (workloads/memory_recipe.cpp)")));
    add(row<&W::training, &T::selective_recompute>(choice(
        "training.selective_recompute", false, &memory_recipe_names<SelectiveRecomputeRecipe>, "\"attention_core\"",
        "with `recompute` `selective`, what a layer keeps for the backward pass and so what it recomputes: "
        "`attention_core`, Megatron-LM's selective recompute (everything but the core attention's s x s tensors; "
        "the attention core is run again); `matmul_outputs`, torchtitan's op-level selective checkpointing (the "
        "layer's input, every other matmul's output and the attention output are kept; the norms, K, the "
        "attention output projection, the SwiGLU up projection (GeLU: the down projection) and the activation "
        "run again before the layer's backward, and one layer's activations are rebuilt in memory)")));
    add(row<&W::training, &T::torch_compile>(
        boolean("training.torch_compile", false, "false",
                "the model runs under `torch.compile`: its compiler fuses the ops the stack otherwise runs "
                "eagerly (a profile's `fused.rmsnorm` / `fused.rope` / `fused.swiglu` false no longer apply; "
                "workloads/stacks/README.md). torchtitan's Float8 rows ran compiled"),
        "false"));
    add(row<&W::training, &T::fp8_recipe>(choice(
            "training.fp8_recipe", false, &fp8_recipe_names, "\"delayed\"",
            "precision `fp8` only: Transformer Engine's scaling recipe, or `tensorwise`: torchao's Float8Linear with "
            "dynamic tensorwise scaling (torchtitan's Float8: an amax and a cast kernel per operand, eager casts at "
            "6 + 27 bytes per element plus a transposed fp8 copy in the backward, or with `training.torch_compile` "
            "torchao's fused casts at 5 bytes, 7 for weights; workloads/fp8_recipe.cpp), or `blockwise`: "
            "DeepSeek-V3's fine-grained fp8 (one fp32 scale per 1x128 activation tile and 128x128 weight block, "
            "4/128 and 4/16384 bytes per element; GEMMs promoted to CUDA cores every 128 K-elements, timed at the "
            "GPU's `gemm_fp8_blockwise_efficiency`: DeepGEMM on H800). Only the linear layers' "
            "GEMMs (QKV, attention output, MLP, experts; forward, dgrad, wgrad) run in fp8, each bf16 operand cast "
            "once per tensor (cast-transpose kernels; `current` and `nvfp4` add an amax pass, `delayed` a scale "
            "update per forward/backward unit); the rest stays bf16. The GPU must have the recipe's tensor cores "
            "(fp8: Hopper, "
            "Ada, Blackwell; `mxfp8`, `nvfp4`: Blackwell, datasheet rates; `blockwise`: Hopper, Blackwell): else "
            "exit 2 at this path (or "
            "`/training/precision`) with the values it runs")),
        nullptr, &fp8_only);
    add(row<&W::training, &T::fp8_weight_cache>(
            boolean("training.fp8_weight_cache", false, "true",
                    "precision `fp8` only: weights cast to fp8 on the first micro-batch of the step and reused (TE's "
                    "`is_first_microbatch`); `false` casts them every forward")),
        nullptr, &fp8_only);

    // parallelism
    add(row<&W::parallelism, &P::tp>(
        integer("parallelism.tp", true, 1, INT_MAX, "1", "", "tensor-parallel degree (Megatron column/row split)")));
    add(row<&W::parallelism, &P::pp>(integer("parallelism.pp", true, 1, INT_MAX, "1", "", "pipeline-parallel degree")));
    add(row<&W::parallelism, &P::dp>(integer("parallelism.dp", true, 1, INT_MAX, "", "GPUs / (tp pp cp)",
                                             "data-parallel degree: tp x pp x cp x dp must equal the GPUs"),
                                     "0"));
    add(row<&W::parallelism, &P::cp>(
        integer("parallelism.cp", true, 1, INT_MAX, "1", "",
                "context-parallel degree (ring attention, causal load-balanced over 2 cp chunks as Megatron-Core; "
                "`cp_comm` `all_gather`: PyTorch's all-gather variant)")));
    add(row<&W::parallelism, &P::cp_comm>(
        with_known_values(
            spec_field("parallelism.cp_comm", FieldType::choice, false, "\"ring\"",
                       "`ring` (stack `pytorch-fsdp2`: `all_gather`)",
                       "how context parallelism exchanges K and V: `ring`, Megatron-Core / Transformer Engine's p2p "
                       "ring; `all_gather`, PyTorch's `context_parallel` with rotate method allgather (torchtitan's "
                       "default): K/V all-gathered once per layer forward and again in the backward, partial outputs "
                       "merged in fp32 by eager ops, dK/dV around the ring in fp32 "
                       "(workloads/context_parallel_comm.cpp)"),
            &context_parallel_comm_names),
        "\"ring\""));  // the default stays out of older specs' canonical text
    add(row<&W::parallelism, &P::ep>(integer("parallelism.ep", true, 1, INT_MAX, "1", "",
                                             "expert-parallel degree (all-to-all; carved out of tp x cp x dp with "
                                             "`etp` as Megatron-Core does: ep x etp must divide tp x cp x dp)")));
    add(row<&W::parallelism, &P::etp>(
            integer("parallelism.etp", false, 1, INT_MAX, "", "`tp`",
                    "expert tensor-parallel degree (Megatron-Core's expert_tensor_parallel_size): the routed "
                    "experts split over etp ranks while attention keeps `tp`; the expert layers lay the ranks out "
                    "as etp x ep x edp x pp, edp = tp cp dp / (ep etp) (workloads/rank_layout.cpp). etp x ep must "
                    "divide tp x cp x dp and etp the expert width; with etp > 1 the dispatched tokens are "
                    "all-gathered and the experts' outputs reduce-scattered over the etp ranks; an order not ending "
                    "in `pp` needs pp 1 or the expert layout equal to the attention's"),
            "0"),
        nullptr, &moe_only);
    add(row<&W::parallelism, &P::sequence_parallel>(
        boolean("parallelism.sequence_parallel", true, "false",
                "tensor-parallel all-reduces become all-gather + reduce-scatter; norms and residuals on T / tp "
                "tokens")));
    add(row<&W::parallelism, &P::pipeline_schedule>(choice(
        "parallelism.pipeline_schedule", true,
        [] {
          return std::vector<std::string>{"gpipe", "1f1b", "interleaved", "dualpipe"};
        },
        "\"1f1b\"",
        "interleaved needs pp >= 2, pp x virtual_stages <= layers and micro-batches a multiple of pp; dualpipe "
        "(DeepSeek-V3) needs pp even and micro-batches even and >= 2 pp, and holds 2x the parameters")));
    add(row<&W::parallelism, &P::virtual_stages>(
        integer("parallelism.virtual_stages", true, 1, INT_MAX, "1", "",
                "model chunks per pipeline stage; > 1 needs pipeline_schedule `interleaved`")));
    add(row<&W::parallelism, &P::zero_stage>(
        integer("parallelism.zero_stage", true, 0, 3, "0", "",
                "1, 2: gradients reduce-scattered, optimizer on the shard, weights all-gathered after it; 3: each "
                "layer's weights all-gathered before its forward and backward")));
    add(row<&W::parallelism, &P::overlap_grad_reduce>(
        boolean("parallelism.overlap_grad_reduce", true, "true", "gradient all-reduce in buckets during backward")));
    add(row<&W::parallelism, &P::overlap_param_gather>(
        boolean("parallelism.overlap_param_gather", false, "false",
                "ZeRO 1/2: the updated weights are all-gathered during the next step's forward, bucket by bucket "
                "(Megatron's --overlap-param-gather), not after the optimizer")));
    add(row<&W::parallelism, &P::bucket_size_params>(
        with_unit(integer("parallelism.bucket_size_params", false, 1, kMaxInt64, "", "max(40e6, 1e6 x dp)",
                          "gradient bucket size (Megatron-LM's default)"),
                  "parameters"),
        "0"));
    add(row<&W::parallelism, &P::tp_comm_overlap>(boolean(
        "parallelism.tp_comm_overlap", false, "false",
        "tensor-parallel all-gathers and reduce-scatters overlapped with the GEMMs they feed or follow, the "
        "gathers in tp chunks, the forward reduce-scatters in Transformer Engine's 4 splits (Megatron's "
        "--tp-comm-overlap); needs `sequence_parallel`. The chunks are Transformer Engine userbuffers copies, not "
        "NCCL calls: no NCCL per-call latency (docs/collectives.md; report rows `protocol: userbuffers`)")));
    add(row<&W::parallelism, &P::order>(
        text("parallelism.order", false, "\"tp-cp-ep-dp-pp\"", "",
             "rank placement, innermost first (Megatron-LM's order); any permutation with `ep` right before "
             "`dp`")));

    // trace
    add(row<&W::trace, &R::format>(
        choice("trace.format", false, &trace_format_names, "",
               "instead of model/training/parallelism: a recorded trace in this format (docs/traces.md)")));
    add(row<&W::trace, &R::path>(text("trace.path", false, "", "",
                                      "the trace file or folder, relative to the workload file; `{rank}` "
                                      "stands for the rank (chakra)")),
        &read_trace_path);
    add(Row{with_type_doc(text("trace.step", false, "", "the whole trace",
                               "the training step to keep (formats with step annotations: PyTorch's "
                               "ProfilerStep#N): a step number, or `last`, each rank's last step"),
                          "integer >= 0 \\| `last`"),
            &get_trace_step, &set_trace_step, "\"\""},
        &read_trace_step);
    return t;
  }();
  return table;
}

}  // namespace

std::span<const WorkloadField> workload_schema() {
  static const std::vector<SpecField> fields = schema_fields<WorkloadSpec>(rows());
  return fields;
}

const WorkloadField* find_workload_field(std::string_view path) {
  for (const WorkloadField& f : workload_schema())
    if (f.path == path) return &f;
  return nullptr;
}

void read_workload_fields(JsonReader& r, std::string_view section, WorkloadSpec& spec) {
  read_schema_fields<WorkloadSpec>(rows(), r, section, spec);
}

void write_workload_fields(nlohmann::ordered_json& out, std::string_view section, const WorkloadSpec& spec) {
  write_schema_fields<WorkloadSpec>(rows(), out, section, spec);
}

}  // namespace clustersim
