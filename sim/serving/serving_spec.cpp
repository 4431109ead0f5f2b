#include "sim/serving/serving_spec.hpp"

#include <climits>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/resources.hpp"
#include "sim/core/spec_document.hpp"
#include "sim/core/spec_schema.hpp"
#include "sim/serving/serving_router.hpp"
#include "sim/serving/serving_scheduler.hpp"
#include "sim/serving/serving_traffic.hpp"

namespace clustersim {
namespace resources_detail {
std::span<const Resource> serving_preset_resources();  // generated from sim/serving/presets/*.json
}  // namespace resources_detail

namespace {

// Every number format; its name is to_string's (sim/serving/serving_dtype.cpp).
constexpr ServingDtype kDtypes[] = {ServingDtype::fp16, ServingDtype::bf16, ServingDtype::fp8, ServingDtype::int8,
                                    ServingDtype::int4};

}  // namespace

std::vector<std::string> serving_dtype_names() {
  std::vector<std::string> out;
  for (const ServingDtype d : kDtypes)
    out.emplace_back(to_string(d));
  return out;
}

ServingDtype serving_dtype_from_name(std::string_view name) {
  for (const ServingDtype d : kDtypes)
    if (name == to_string(d)) return d;
  throw SimulationError("unknown serving dtype \"" + std::string(name) + "\"");
}

template <>
struct FieldCodec<ServingDtype> {
  static nlohmann::json encode(ServingDtype d) { return to_string(d); }
  static void decode(const nlohmann::json& v, ServingDtype& out) {
    out = serving_dtype_from_name(v.get<std::string>());
  }
};

namespace {

using Row = SchemaRow<ServingSpec>;
constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();
// Per-request token counts are kept in 32 bits by the engine; 2^24 (16.7 M) tokens is 13x the longest
// published context windows (Llama-4 Scout: 10 M), so a larger value is a unit mistake.
constexpr std::int64_t kMaxTokens = std::int64_t{1} << 24;
// Requests in one simulation: 96 bytes of state each (ServedRequest), so 2^26 are 6 GiB.
constexpr std::int64_t kMaxRequests = std::int64_t{1} << 26;

template <auto... Members>
Row row(SpecField field, std::string_view omitted_when = {}) {
  return schema_row<ServingSpec, Members...>(std::move(field), omitted_when);
}

SpecField choice(std::string_view path, std::vector<std::string> (*choices)(), std::string_view default_json,
                 std::string_view doc) {
  return with_known_values(spec_field(path, FieldType::choice, true, default_json, "", doc), choices);
}

SpecField count(std::string_view path, std::int64_t max, std::string_view default_json, std::string_view unit,
                std::string_view doc) {
  return with_unit(integer_field(path, true, 1, max, default_json, "", doc), unit);
}

// A count >= 1 with no JSON default: absent, it stays 0 and `default_doc` says what stands for it.
SpecField count_or_unset(std::string_view path, std::int64_t max, std::string_view default_doc, std::string_view unit,
                         std::string_view doc) {
  return with_unit(integer_field(path, true, 1, max, "", default_doc, doc), unit);
}

SpecField number(std::string_view path, NumberRange range, std::string_view default_json, std::string_view default_doc,
                 std::string_view unit, std::string_view doc) {
  return number_field(path, true, range, default_json, default_doc, unit, doc);
}

std::vector<std::string> preemption_names() {
  return {"recompute", "swap"};
}

std::vector<std::string> arrival_names() {
  return {"poisson", "gamma", "closed"};
}

void read_name(JsonReader& r, const SpecField&, ServingSpec& s) {
  s.name = r.optional_string("name").value_or(std::filesystem::path(r.file()).stem().string());
}

// The model: a workload preset name or file (its `model` block), or an inline `model` object read by the
// workload spec's own reader (so every key, default and check is the workload's, at the same JSON path).
void read_model(JsonReader& r, const SpecField&, ServingSpec& s) {
  const nlohmann::json& m = r.raw("model");
  if (m.is_string()) {
    const std::string source = m.get<std::string>();
    try {
      s.model = load_workload_spec(source).model;
    } catch (const SpecError& e) {
      if (e.file() != source) throw;  // an error inside the workload file names that file
      r.fail("model", "\"" + source + "\": " + e.message());
    }
    s.model_source = source;
    return;
  }
  if (!m.is_object())
    r.fail(
        "model", "expected a workload preset name (" +
                     [] {
                       std::string names;
                       for (const std::string& n : workload_preset_names())
                         names += (names.empty() ? "" : ", ") + n;
                       return names;
                     }() +
                     "), a workload file, or a model object, got " + describe_json(m));
  nlohmann::json doc = {{"model", m}, {"training", {{"global_batch", 1}}}};
  s.model = parse_workload_spec(doc.dump(), r.file()).model;
}

void read_draft(JsonReader& r, const SpecField&, ServingSpec& s) {
  if (!r.has("draft_model")) return;
  const std::string source = r.string("draft_model");
  try {
    s.speculative.draft = load_workload_spec(source).model;
  } catch (const SpecError& e) {
    if (e.file() != source) throw;
    r.fail("draft_model", "\"" + source + "\": " + e.message());
  }
  s.speculative.draft_source = source;
}

void read_trace(JsonReader& r, const SpecField&, ServingSpec& s) {
  if (!r.has("trace")) return;
  const std::string path = r.string("trace");
  const std::filesystem::path p(path);
  s.traffic.trace =
      p.is_absolute() || r.file().empty() ? path : (std::filesystem::path(r.file()).parent_path() / p).string();
}

// The rows of one length distribution ("traffic.prompt" or "traffic.output").
template <LengthSpec TrafficSpec::*Which>
void add_length_rows(std::vector<Row>& t, std::string_view section_doc) {
  using S = ServingSpec;
  using L = LengthSpec;
  constexpr bool prompt = Which == &TrafficSpec::prompt;
  // The paths are the schema's keys: string literals, as SpecField keeps views of them.
  constexpr std::string_view kPaths[2][6] = {{"traffic.output.distribution", "traffic.output.mean", "traffic.output.cv",
                                              "traffic.output.min", "traffic.output.max", "traffic.output.zipf_s"},
                                             {"traffic.prompt.distribution", "traffic.prompt.mean", "traffic.prompt.cv",
                                              "traffic.prompt.min", "traffic.prompt.max", "traffic.prompt.zipf_s"}};
  auto path = [&](const char* key) -> std::string_view {
    for (const std::string_view p : kPaths[prompt ? 1 : 0])
      if (p.substr(p.rfind('.') + 1) == key) return p;
    return {};
  };
  t.push_back(row<&S::traffic, Which, &L::distribution>(
      choice(path("distribution"), &length_distribution_names, "\"fixed\"", section_doc)));
  t.push_back(row<&S::traffic, Which, &L::mean>(
      number(path("mean"), NumberRange::between(1.0, static_cast<double>(kMaxTokens)), "", "required without `trace`",
             "tokens", "fixed: the length; lognormal: its mean; uniform, zipf: not used")));
  t.push_back(row<&S::traffic, Which, &L::cv>(number(path("cv"), NumberRange::between(0.0, 100.0), "0.0", "", "",
                                                     "lognormal: coefficient of variation (> 0)")));
  t.push_back(row<&S::traffic, Which, &L::min>(with_unit(
      integer_field(path("min"), true, 1, kMaxTokens, "1", "", "uniform, zipf: the smallest length; lognormal: clamp"),
      "tokens")));
  t.push_back(row<&S::traffic, Which, &L::max>(
      count_or_unset(path("max"), kMaxTokens, "none (lognormal); required (uniform, zipf)", "tokens",
                     "uniform, zipf: the largest length; lognormal: clamp"),
      "0"));
  t.push_back(row<&S::traffic, Which, &L::zipf_s>(number(path("zipf_s"), NumberRange::positive(), "1.0", "", "",
                                                         "zipf: the exponent s of P(k) ~ 1 / (k - min + 1)^s")));
}

const std::vector<Row>& rows() {
  using S = ServingSpec;
  using Slo = SloSpec;
  using T = TrafficSpec;
  static const std::vector<Row> table = [] {
    std::vector<Row> t;
    auto add = [&t](Row r, Row::Reader read = nullptr) {
      r.read = read;
      t.push_back(std::move(r));
    };
    add(row<&S::name>(spec_field("name", FieldType::string, true, "", "the file's name without its extension", "")),
        &read_name);
    add(row<&S::description>(spec_field("description", FieldType::string, false, "\"\"", "",
                                        "where the model, layout and traffic come from")));
    add(row<&S::model_source>(with_type_doc(
            spec_field("model", FieldType::string, true, "", "",
                       "the served transformer: a workload preset name or file (its `model` block), or a `model` "
                       "object with the workload spec's model keys (dense or MoE, GQA)"),
            "string \\| object")),
        &read_model);

    // replica
    add(row<&S::tp>(count("replica.tp", 1024, "1", "GPUs", "tensor-parallel degree of each replica")));
    add(row<&S::pp>(count("replica.pp", 1024, "1", "GPUs", "pipeline stages of each replica")));
    add(row<&S::ep>(count("replica.ep", 1024, "1", "GPUs",
                          "expert-parallel degree over the tensor-parallel GPUs (vLLM's enable_expert_parallel): "
                          "divides tp and the experts; MoE models only")));
    add(row<&S::dp_attention>(count("replica.dp_attention", 64, "1", "ranks",
                                    "data-parallel attention (SGLang's --enable-dp-attention, DeepSeek-V3 style): "
                                    "the tp GPUs form this many attention ranks of tp / dp_attention GPUs, each "
                                    "with the KV cache of its own requests, the experts over all tp GPUs with an "
                                    "all-to-all between; divides tp; MoE models only, pp 1")));
    add(row<&S::replicas>(
        count("replica.replicas", 1 << 20, "1", "", "model replicas; each runs its own scheduler on tp x pp GPUs")));
    add(row<&S::weight_dtype>(choice("replica.weight_dtype", &serving_dtype_names, "\"bf16\"",
                                     "number format of the weights (int8, int4: one scale per `group_size`)")));
    add(row<&S::kv_dtype>(
        choice("replica.kv_dtype", &serving_dtype_names, "\"bf16\"", "number format of the KV cache")));
    add(row<&S::group_size>(
        count("replica.group_size", 1 << 20, "128", "elements", "int8 / int4: elements per scale")));
    add(row<&S::gpu_memory_utilization>(number("replica.gpu_memory_utilization", {0.0, 1.0, true}, "0.9", "", "",
                                               "the fraction of HBM the engine may use (vLLM's)")));
    add(row<&S::host_overhead_s>(number("replica.host_overhead_s", NumberRange::between(0.0, 10.0), "0.0", "", "s",
                                        "host time per iteration: scheduling, sampling, detokenization")));
    add(row<&S::custom_all_reduce>(spec_field(
        "replica.custom_all_reduce", FieldType::boolean, true, "true", "",
        "tensor-parallel all-reduces under 8 MiB over 2, 4, 6 or 8 GPUs of one NVSwitch (NVLink 4) node take "
        "vLLM's custom all-reduce, timed by its one-shot / two-shot kernels fitted to measured latencies "
        "(docs/serving_iteration_model.md); false: "
        "NCCL (vLLM's disable_custom_all_reduce)")));
    add(row<&S::fp8_block_scales>(spec_field(
        "replica.fp8_block_scales", FieldType::boolean, true, "false", "",
        "fp8 weights with one fp32 scale per 128 x 128 block and activations with one per 1 x 128 "
        "(DeepSeek-V3 / R1's checkpoints, config.json weight_block_size [128, 128]): their GEMMs run at the GPU's "
        "gemm_fp8_blockwise_efficiency (DeepGEMM's kernels); needs weight_dtype fp8")));
    add(row<&S::max_context_tokens>(
        count_or_unset("replica.max_context_tokens", kMaxTokens, "`model.seq_len`", "tokens",
                       "longest prompt + output a request may have; longer ones are rejected and counted"),
        "0"));

    // scheduler
    add(row<&S::scheduler>(choice("scheduler.name", &serving_scheduler_names, "\"continuous\"",
                                  "the batching policy of every replica (docs/serving.md)")));
    add(row<&S::router>(choice("scheduler.router", &serving_router_names, "\"round_robin\"",
                               "which replica an arriving request joins")));
    add(row<&S::max_batch_tokens>(count("scheduler.max_batch_tokens", kMaxTokens, "8192", "tokens",
                                        "most tokens in one iteration (chunked_prefill: the token budget)")));
    add(row<&S::max_batch_requests>(
        count("scheduler.max_batch_requests", 1 << 20, "256", "requests", "most requests in one iteration")));
    add(row<&S::block_size>(
        count("scheduler.block_size", 1 << 16, "16", "tokens", "tokens per KV-cache block (paged attention)")));
    add(row<&S::preemption>(choice("scheduler.preemption", &preemption_names, "\"recompute\"",
                                   "how continuous and chunked_prefill preempt when KV blocks run out: recompute "
                                   "(free the blocks, prefill again) or swap (copy them to host memory over the "
                                   "GPU's PCIe link, `node.pcie_bandwidth_GBps`, and back; vLLM's "
                                   "PreemptionMode)")));
    add(row<&S::swap_space_GiB>(number("replica.swap_space_GiB", NumberRange::between(0.0, 1e6), "4.0", "", "GiB",
                                       "host memory per GPU for swapped KV blocks (vLLM's swap_space); when full, "
                                       "preemption recomputes")));
    add(row<&S::prefix_caching>(spec_field(
        "scheduler.prefix_caching", FieldType::boolean, true, "false", "",
        "automatic prefix caching (vLLM's, SGLang's RadixAttention): requests of one prefix group share the full "
        "KV blocks of their prefix and skip its prefill; unreferenced cached blocks are evicted LRU")));

    // prefill_pool (disaggregated serving)
    using P = PrefillPoolSpec;
    add(row<&S::prefill_pool, &P::replicas>(
        integer_field("prefill_pool.replicas", true, 0, 1 << 20, "0", "",
                      "disaggregated serving (DistServe, Splitwise): replicas that run the prompts; the KV cache "
                      "then moves over the fabric to a `replica` (the decode pool). 0: prefill and decode colocated")));
    add(row<&S::prefill_pool, &P::tp>(count_or_unset("prefill_pool.tp", 1024, "`replica.tp`", "GPUs",
                                                     "tensor-parallel degree of each prefill replica"),
                                      "0"));
    add(row<&S::prefill_pool, &P::pp>(
        count_or_unset("prefill_pool.pp", 1024, "`replica.pp`", "GPUs", "pipeline stages of each prefill replica"),
        "0"));

    // speculative decoding
    using Sp = SpeculativeSpec;
    add(row<&S::speculative, &Sp::draft_source>(
            spec_field("speculative.draft_model", FieldType::string, true, "", "required with `tokens`",
                       "the draft model: a workload preset name or file (its `model` block); it runs on the "
                       "replica's GPUs with the replica's layout")),
        &read_draft);
    add(row<&S::speculative, &Sp::tokens>(with_unit(
        integer_field("speculative.tokens", true, 0, 64, "0", "",
                      "draft tokens k per step (Leviathan et al. 2023; vLLM's num_speculative_tokens); 0: off"),
        "tokens")));
    add(row<&S::speculative, &Sp::acceptance_rate>(
        number("speculative.acceptance_rate", NumberRange::between(0.0, 1.0), "0.0", "", "",
               "probability alpha that the served model accepts a draft token: (1 - alpha^(k+1)) / (1 - alpha) "
               "tokens per step")));

    // slo
    add(row<&S::slo, &Slo::ttft_s>(number("slo.ttft_s", NumberRange::positive(), "2.0", "", "s",
                                          "a request attains the SLO when its time to first token is at most this")));
    add(row<&S::slo, &Slo::tbt_s>(number("slo.tbt_s", NumberRange::positive(), "0.2", "", "s",
                                         "... and its mean time between output tokens at most this")));

    // traffic
    add(row<&S::traffic, &T::arrival>(choice("traffic.arrival", &arrival_names, "\"poisson\"",
                                             "poisson: exponential inter-arrival times; gamma: Gamma ones with `cv` "
                                             "(> 1: bursty); closed: `concurrency` requests in flight, the next "
                                             "sent as one finishes (benchmark clients' closed loop)")));
    add(row<&S::traffic, &T::rate_rps>(number("traffic.rate_rps", NumberRange::positive(), "",
                                              "required without `trace` (but for closed)", "requests/s",
                                              "mean arrival rate over the whole deployment")));
    add(row<&S::traffic, &T::concurrency>(
        count_or_unset("traffic.concurrency", kMaxRequests, "closed only: required", "requests",
                       "requests in flight at once: sent at 0, then one as each finishes or is rejected"),
        "0"));
    add(row<&S::traffic, &T::think_time_s>(
        number("traffic.think_time_s", NumberRange::between(0.0, 1e6), "0.0", "", "s",
               "closed only: mean of each client's exponential pause before each of its requests (its first included: "
               "the clients start apart); 0: none, as vLLM's benchmark_serving and AIPerf send")));
    add(row<&S::traffic, &T::cv>(number("traffic.cv", {0.0, 100.0, true}, "1.0", "", "",
                                        "gamma: coefficient of variation of the inter-arrival times")));
    add(row<&S::traffic, &T::duration_s>(number("traffic.duration_s", NumberRange::positive(), "",
                                                "either this or `requests`", "s", "arrivals in [0, duration_s)"),
                                         "0.0"));
    add(row<&S::traffic, &T::requests>(count_or_unset("traffic.requests", kMaxRequests, "either this or `duration_s`",
                                                      "requests", "this many arrivals"),
                                       "0"));
    add(row<&S::traffic, &T::seed>(
        integer_field("traffic.seed", true, 0, kMaxInt64, "1", "", "the random stream (std::mt19937_64)")));
    add(row<&S::traffic, &T::trace>(spec_field("traffic.trace", FieldType::string, true, "", "none",
                                               "a request trace instead: CSV (header arrival_s,prompt_tokens,"
                                               "output_tokens, optionally prefix_id) or JSONL (one object with those "
                                               "keys a line), relative to the spec; prefix_id: the request's prefix "
                                               "group, whose shared prefix is `prefix_tokens` of its prompt")),
        &read_trace);
    add(row<&S::traffic, &T::prefix_groups>(
        integer_field("traffic.prefix_groups", true, 0, 1 << 20, "0", "",
                      "shared prefixes: each request belongs to one of this many groups and its prompt is the "
                      "group's `prefix_tokens` followed by its own `prompt` tokens; 0: none")));
    add(row<&S::traffic, &T::prefix_tokens>(
        count_or_unset("traffic.prefix_tokens", kMaxTokens, "required with `prefix_groups`", "tokens",
                       "tokens of each group's shared prefix"),
        "0"));
    add(row<&S::traffic, &T::prefix_zipf_s>(number("traffic.prefix_zipf_s", NumberRange::between(0.0, 100.0), "0.0", "",
                                                   "",
                                                   "group popularity: P(g) ~ 1 / (g + 1)^s over groups 0 .. "
                                                   "prefix_groups - 1 (0: uniform)")));
    add_length_rows<&TrafficSpec::prompt>(t, "prompt lengths");
    add_length_rows<&TrafficSpec::output>(t, "output lengths (tokens generated, the first included)");
    return t;
  }();
  return table;
}

JsonReader empty_section(const std::string& file, const std::string& path) {
  static const nlohmann::json empty = nlohmann::json::object();
  return JsonReader(empty, file, path);
}

JsonReader section(JsonReader& parent, std::string_view key) {
  return parent.optional_object(key).value_or(empty_section(parent.file(), parent.path_of(key)));
}

void check_length(JsonReader& r, const LengthSpec& l, bool generated) {
  if (!generated) {
    r.finish();
    return;
  }
  if ((l.distribution == "fixed" || l.distribution == "lognormal") && !r.has("mean"))
    r.fail("mean", "the " + l.distribution + " distribution needs \"mean\"");
  if (l.distribution == "lognormal" && l.cv <= 0.0) r.fail("cv", "the lognormal distribution needs \"cv\" > 0");
  if ((l.distribution == "uniform" || l.distribution == "zipf") && l.max == 0)
    r.fail("max", "the " + l.distribution + " distribution needs \"max\"");
  if (l.distribution == "zipf" && l.max - l.min >= (std::int64_t{1} << 20))
    r.fail("max", "zipf draws from a table of max - min + 1 lengths: at most 1048576, got " +
                      std::to_string(l.max - l.min + 1));
  if (l.max != 0 && l.max < l.min)
    r.fail("max", "max (" + std::to_string(l.max) + ") must be at least min (" + std::to_string(l.min) + ")");
  r.finish();
}

void read_traffic(JsonReader r, ServingSpec& s) {
  read_schema_fields<ServingSpec>(rows(), r, "traffic", s);
  TrafficSpec& t = s.traffic;
  const bool generated = t.trace.empty();
  if (!generated) {
    // A trace names each request's prefix group (column prefix_id); prefix_tokens is still the groups' length.
    for (const char* key : {"rate_rps", "duration_s", "requests", "prompt", "output", "arrival", "cv", "prefix_groups",
                            "prefix_zipf_s", "concurrency", "think_time_s"})
      if (r.has(key))
        r.fail(key,
               std::string("a traffic with a \"trace\" takes its requests from the trace; remove \"") + key + "\"");
  } else {
    if (t.closed_loop()) {
      for (const char* key : {"rate_rps", "cv", "duration_s"})
        if (r.has(key))
          r.fail(key, std::string("a closed loop sends each request as one finishes: its rate is the deployment's; "
                                  "remove \"") +
                          key + "\" (give \"concurrency\" and \"requests\")");
      if (!r.has("concurrency"))
        r.fail("concurrency", "expected the requests in flight \"concurrency\" of the closed loop");
      if (!r.has("requests")) r.fail("requests", "expected the number of requests \"requests\" of the closed loop");
    } else if (r.has("concurrency")) {
      r.fail("concurrency", "\"concurrency\" is for \"arrival\": \"closed\"");
    } else if (r.has("think_time_s")) {
      r.fail("think_time_s", "\"think_time_s\" is for \"arrival\": \"closed\"");
    }
    if (!t.closed_loop() && !r.has("rate_rps"))
      r.fail("rate_rps", "expected the arrival rate \"rate_rps\" (or a \"trace\")");
    if (!t.closed_loop() && r.has("duration_s") == r.has("requests"))
      r.fail(r.has("requests") ? "requests" : "duration_s", "expected exactly one of \"duration_s\" and \"requests\"");
    if (t.duration_s * t.rate_rps > static_cast<double>(kMaxRequests))
      r.fail("duration_s", "rate_rps x duration_s must be at most " + std::to_string(kMaxRequests) + " requests, got " +
                               std::to_string(t.duration_s * t.rate_rps));
    if (!r.has("prompt")) r.fail("prompt", "expected the prompt lengths \"prompt\"");
    if (t.prefix_groups > 0 && !r.has("prefix_tokens"))
      r.fail("prefix_groups", "shared prefixes need their length \"prefix_tokens\"");
    if (t.prefix_groups == 0)
      for (const char* key : {"prefix_tokens", "prefix_zipf_s"})
        if (r.has(key))
          r.fail(key,
                 std::string("\"") + key + "\" describes shared prefixes: set \"prefix_groups\" >= 1 or remove it");
    if (!r.has("output")) r.fail("output", "expected the output lengths \"output\"");
  }
  JsonReader prompt = section(r, "prompt");
  read_schema_fields<ServingSpec>(rows(), prompt, "traffic.prompt", s);
  check_length(prompt, t.prompt, generated);
  JsonReader output = section(r, "output");
  read_schema_fields<ServingSpec>(rows(), output, "traffic.output", s);
  check_length(output, t.output, generated);
  r.finish();
}

ServingSpec parse_document(const nlohmann::json& json, const std::string& file) {
  JsonReader root(json, file);
  ServingSpec s;
  s.source_file = file;
  read_schema_fields<ServingSpec>(rows(), root, "", s);
  for (const char* key : {"replica", "scheduler", "prefill_pool", "speculative", "slo"}) {
    JsonReader r = section(root, key);
    read_schema_fields<ServingSpec>(rows(), r, key, s);
    if (std::string_view(key) == "prefill_pool" && s.prefill_pool.replicas == 0)
      for (const char* k : {"tp", "pp"})
        if (r.has(k))
          r.fail(k, std::string("a prefill pool of 0 replicas (colocated serving) has no \"") + k +
                        "\"; set \"replicas\" >= 1 or remove it");
    if (std::string_view(key) == "speculative" && s.speculative.tokens > 0 && !r.has("draft_model"))
      r.fail("tokens", "speculative decoding needs a \"draft_model\"");
    if (std::string_view(key) == "speculative" && s.speculative.tokens == 0)
      for (const char* k : {"draft_model", "acceptance_rate"})
        if (r.has(k))
          r.fail(k, std::string("\"") + k + "\" is for speculative decoding: set \"tokens\" >= 1 or remove it");
    r.finish();
  }
  read_traffic(root.object("traffic"), s);
  root.finish();
  return s;
}

}  // namespace

ServingSpec parse_serving_spec(std::string_view json_text, const std::string& file) {
  return parse_spec_with(json_text, file, parse_document);
}

ServingSpec load_serving_spec(std::string_view source, const ServingOverrides& overrides) {
  return load_spec_with(source, resources_detail::serving_preset_resources(), "serving", overrides, parse_document);
}

std::vector<std::string> serving_preset_names() {
  return resource_names(resources_detail::serving_preset_resources());
}

ReplicaConfig replica_config(const ServingSpec& spec) {
  return static_cast<const ReplicaConfig&>(spec);
}

ReplicaConfig prefill_replica_config(const ServingSpec& spec) {
  ReplicaConfig r = replica_config(spec);
  r.tp = spec.prefill_tp();
  r.pp = spec.prefill_pp();
  return r;
}

ReplicaConfig draft_replica_config(const ServingSpec& spec) {
  ReplicaConfig r = replica_config(spec);
  r.model = spec.speculative.draft;
  return r;
}

std::string serving_path_of_prefill_replica_path(const ServingSpec& spec, std::string_view replica_path) {
  if ((replica_path == "/tp" && spec.prefill_pool.tp > 0) || (replica_path == "/pp" && spec.prefill_pool.pp > 0))
    return "/prefill_pool" + std::string(replica_path);
  return serving_path_of_replica_path(spec, replica_path);
}

std::string serving_path_of_replica_path(const ServingSpec& spec, std::string_view replica_path) {
  if (replica_path.starts_with("/model")) return spec.model_source.empty() ? std::string(replica_path) : "/model";
  if (replica_path == "/max_batch_tokens") return "/scheduler/max_batch_tokens";
  return "/replica" + std::string(replica_path);
}

std::span<const SpecField> serving_schema() {
  static const std::vector<SpecField> fields = schema_fields<ServingSpec>(rows());
  return fields;
}

}  // namespace clustersim
