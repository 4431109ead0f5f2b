#pragma once
// The serving spec (docs/specs.md, "Serving spec"; docs/serving.md): the served model, how each replica
// lays it out and batches its requests, the SLO, and the traffic. Its keys are declared once in
// serving_spec.cpp's schema, which drives the reader, `clustersim schema serving` and the docs' table.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/spec_field.hpp"
#include "sim/serving/iteration_model.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

// A distribution of token counts (prompt or output lengths).
//   fixed: always `mean`; uniform: integers in [min, max]; lognormal: mean `mean`, coefficient of
//   variation `cv`, rounded and clamped to [min, max]; zipf: P(k) ~ 1 / (k - min + 1)^zipf_s on [min, max].
struct LengthSpec {
  std::string distribution = "fixed";
  double mean = 0.0;
  double cv = 0.0;
  std::int64_t min = 1;
  std::int64_t max = 0;  // 0: not given (uniform and zipf need it; lognormal: no upper clamp)
  double zipf_s = 1.0;
};

struct TrafficSpec {
  std::string arrival = "poisson";  // poisson | gamma | closed
  double rate_rps = 0.0;            // mean arrivals per second (the whole deployment); not for closed
  std::int64_t concurrency = 0;     // closed: requests in flight at once (each sent as one finishes)
  double think_time_s = 0.0;        // closed: mean of a client's exponential pause before each request; 0: none
  double cv = 1.0;                  // gamma: coefficient of variation of the inter-arrival times
  double duration_s = 0.0;          // arrivals in [0, duration_s); 0: `requests` decides
  std::int64_t requests = 0;        // this many arrivals; 0: `duration_s` decides
  std::uint64_t seed = 1;
  LengthSpec prompt;
  LengthSpec output;
  std::string trace;  // a request trace file (CSV or JSONL) instead of the generated traffic

  // A closed loop (benchmark clients such as AIPerf or vLLM's `--max-concurrency`): `concurrency`
  // requests are sent at 0 and each next one when one finishes or is rejected, so the rate is the
  // deployment's own.
  bool closed_loop() const { return arrival == "closed"; }
  // Shared prefixes (a system prompt, a few-shot template, a document): each request belongs to one of
  // `prefix_groups` groups, drawn with P(g) ~ 1 / (g + 1)^prefix_zipf_s (0: uniform), and its prompt is
  // the group's `prefix_tokens` followed by its own `prompt` tokens. 0 groups: no shared prefixes.
  std::int64_t prefix_groups = 0;
  std::int64_t prefix_tokens = 0;
  double prefix_zipf_s = 0.0;
};

// Per request: it attains the SLO when its TTFT and its mean time between tokens are both within.
struct SloSpec {
  double ttft_s = 2.0;
  double tbt_s = 0.2;
};

// Disaggregated serving (DistServe, Splitwise): `replicas` > 0 replicas of tp x pp GPUs run every prompt
// (prefill) and emit each request's first token; its KV cache then moves over the fabric to a replica of
// the decode pool (the spec's `replica` section), which generates the rest. 0: colocated (one pool).
struct PrefillPoolSpec {
  int replicas = 0;
  int tp = 0;  // 0: replica.tp
  int pp = 0;  // 0: replica.pp
};

// Speculative decoding (sim/serving/speculative_decoding.hpp): `tokens` > 0 draft tokens per step from
// `draft_model` (a workload preset or file), each accepted with probability `acceptance_rate`.
struct SpeculativeSpec {
  std::string draft_source;  // the workload preset or file of the draft
  ModelSpec draft;
  int tokens = 0;  // k; 0: no speculative decoding
  double acceptance_rate = 0.0;
};

// The replica the iteration model times is the spec's own ReplicaConfig (its members, defaults and
// meanings declared once, in iteration_model.hpp): `model`, the `replica` section's layout and number
// formats, and scheduler.max_batch_tokens. compute_precision is not a key: it stays bf16.
struct ServingSpec : ReplicaConfig {
  std::string name;
  std::string description;   // where the figures come from
  std::string model_source;  // the workload preset or file the model came from; "" when inline
  int replicas = 1;
  std::int64_t max_context_tokens = 0;  // 0: the model's seq_len
  std::string scheduler = "continuous";
  std::string router = "round_robin";
  std::int64_t max_batch_requests = 256;
  std::int64_t block_size = 16;
  bool prefix_caching = false;           // automatic prefix caching (sim/serving/prefix_cache.hpp)
  std::string preemption = "recompute";  // recompute | swap (to host memory over the GPU's host link)
  double swap_space_GiB = 4.0;           // host memory per GPU for swapped KV blocks (vLLM's swap_space)
  PrefillPoolSpec prefill_pool;
  SpeculativeSpec speculative;
  SloSpec slo;
  TrafficSpec traffic;
  std::string source_file;

  std::int64_t context_limit_tokens() const { return max_context_tokens > 0 ? max_context_tokens : model.seq_len; }
  bool disaggregated() const { return prefill_pool.replicas > 0; }
  int prefill_tp() const { return prefill_pool.tp > 0 ? prefill_pool.tp : tp; }
  int prefill_pp() const { return prefill_pool.pp > 0 ? prefill_pool.pp : pp; }
  // GPUs of the deployment: replicas x tp x pp, plus the prefill pool's.
  std::int64_t gpus() const {
    return std::int64_t{replicas} * tp * pp + std::int64_t{prefill_pool.replicas} * prefill_tp() * prefill_pp();
  }
};

using ServingOverrides = std::vector<std::pair<std::string, std::string>>;

// Loads from a JSON file path or a serving preset name (sim/serving/presets/NAME.json), applies
// overrides, validates. Throws SpecError (file + JSON path + what was expected).
ServingSpec load_serving_spec(std::string_view source, const ServingOverrides& overrides = {});
ServingSpec parse_serving_spec(std::string_view json_text, const std::string& file);
std::vector<std::string> serving_preset_names();

// The replica the iteration model times (sim/serving/iteration_model.hpp): the spec's ReplicaConfig.
// And the JSON path in the serving spec of a ReplicaConfig member's path ("/tp" -> "/replica/tp",
// "/max_batch_tokens" -> "/scheduler/max_batch_tokens", "/model/heads" -> "/model/heads" or "/model"
// when the model is a preset).
ReplicaConfig replica_config(const ServingSpec& spec);
// The prefill pool's replica (disaggregated serving): replica_config with the pool's tp and pp, and the
// path of one of its errors ("/tp" -> "/prefill_pool/tp"; other members as serving_path_of_replica_path).
ReplicaConfig prefill_replica_config(const ServingSpec& spec);
// The draft model's replica (speculative decoding): replica_config with the draft's shape, on the same GPUs.
ReplicaConfig draft_replica_config(const ServingSpec& spec);
std::string serving_path_of_prefill_replica_path(const ServingSpec& spec, std::string_view replica_path);
std::string serving_path_of_replica_path(const ServingSpec& spec, std::string_view replica_path);

// The names of the number formats, for the spec's choices; the format of a name (SpecError-free:
// parsers accept only these names).
std::vector<std::string> serving_dtype_names();
ServingDtype serving_dtype_from_name(std::string_view name);

// The schema (every key, in the reader's order); spec_fields_markdown / spec_fields_json render it.
std::span<const SpecField> serving_schema();

}  // namespace clustersim
