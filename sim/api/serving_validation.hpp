#pragma once
// Serving validation datasets (`clustersim validate serving-trtllm-inflight`; docs/serving.md,
// "Validation: saturation throughput"): published saturation throughputs of a serving engine, each row
// replayed as a serving run. A dataset is a mapping file (calibration/validation/serving/NAME.json,
// compiled in) that says, as data, how a row becomes a run:
//   name, title, source          what is measured and where it is published
//   data, select {field: value}  the data file (relative to the mapping) and which of its records
//   measured                     the field holding the published output tokens/s
//   models {row model: {source, layers, hidden, heads, kv_heads, ffn_hidden, vocab, seq_len, activation}}
//   clusters {row gpu_id: {preset, overrides}}
//   replica {weight_dtype, kv_dtype, replicas, gpu_memory_utilization, host_overhead_s}
//   scheduler {name, router, max_batch_tokens, max_batch_requests, block_size}
//   assumptions [text]
// Each row (model, gpu_id, tp, pp, input_tokens, output_tokens, requests) is served as a burst of
// `requests` requests at t = 0 with exactly input_tokens / output_tokens tokens on one replica of tp x pp
// GPUs; predicted = output tokens / makespan, error = predicted / measured - 1.
// A mapping may instead carry a whole serving spec (docs/specs.md), for deployments the keys above do not
// describe (closed loops, MoE, MLA, attention data parallelism):
//   spec {serving spec}          served as written, with the row's values set into it:
//   row_values {JSON pointer: {field, scale}}   spec value at the pointer = the row's field x scale
//   metrics {metric: {field, scale}}            metric (output_tokens_per_s, ttft_s = mean TTFT,
//                                 itl_s = mean of the per-request mean gap between tokens, or a
//                                 percentile of serving_compared_metrics()) measured =
//                                 the row's field x scale; one validation row per record and metric
//   clusters {row gpu_id: {preset, overrides}}, name, title, source, data, select, assumptions as above.
// Either form may say "residuals": false (default true): its rows are reported but give the error bars
// no residual (a deployment the bars' features cannot tell from others; the mapping says why).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/serving/serving_metrics.hpp"
#include "sim/serving/serving_spec.hpp"
#include "sim/validation/error_bars.hpp"
#include "sim/validation/error_summary.hpp"

namespace clustersim {

struct ServingValidationRow {
  std::string id;
  std::string metric = "output_tokens_per_s";  // a serving_compared_metrics() name
  PredictionFeatures features;                 // the error bars' features of its deployment (serving_features)
  std::string model;
  std::string gpu;  // the row's gpu_id
  int tp = 1;
  std::string scheduler;  // the policy it ran
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t requests = 0;
  std::int64_t kv_capacity_tokens = 0;
  std::int64_t preemptions = 0;
  double measured = 0.0;   // the published value of `metric`
  double predicted = 0.0;  // the simulated value
  double error() const { return predicted / measured - 1.0; }
};

struct ServingValidationGroup {
  std::string name;  // "all", a metric, a gpu_id or a model
  ErrorSummary errors;
};

struct ServingValidation {
  std::string name;
  std::string title;
  std::string source;
  std::string file;       // the mapping file
  std::string data_file;  // the data file it names
  std::vector<std::string> assumptions;
  bool residuals = true;  // its rows go into the residual file of the error bars
  std::vector<ServingValidationRow> rows;
  std::vector<ServingValidationGroup> groups;  // all, then per metric, per GPU, per model (sorted)
};

struct ServingValidationOptions {
  std::size_t limit = 0;                 // > 0: only the first `limit` rows
  std::optional<std::string> scheduler;  // another policy than the mapping's (a comparison); static and
                                         // continuous run rows with prompts over max_batch_tokens on
                                         // chunked_prefill (they would reject them)
};

// The compiled-in serving datasets, by name (sorted).
std::vector<std::string> serving_validation_names();
bool is_serving_validation(std::string_view name);
// Runs every row of the dataset `name`. Throws SpecError for a bad mapping or data file (file + JSON
// path), or an unknown scheduler; SimulationError when a row's requests do not all finish.
ServingValidation run_serving_validation(std::string_view name, const ServingValidationOptions& options = {});

// The metrics `serve` bounds with error bars, in report order: output_tokens_per_s, ttft_s (the mean
// TTFT), itl_s (the mean over requests of each one's mean gap between tokens).
const std::vector<std::string>& serving_validation_metrics();
// Every metric a serving validation row may compare: serving_metric_names()
// (sim/validation/serving_metric_names.hpp): the three above, then nearest-rank percentiles of TTFT,
// TPOT (each request's mean gap between tokens), ITL (every gap) and E2E.
const std::vector<std::string>& serving_compared_metrics();
// The value of a metric in a run's summary (the prediction).
double serving_metric(const ServingSummary& summary, std::string_view metric);
// The error bars' features of a serving deployment: its GPU and generation, the weight precision,
// sharding "serving" ("serving-ep" with ep > 1 or data-parallel attention), the GPUs of one replica (tp x pp), the
// model's kind (dense / moe) and attention (mha / mla; set_model_features, the training rows' rule). The residual rows
// and `serve`'s intervals take them from here.
PredictionFeatures serving_features(std::string_view gpu_id, const ServingSpec& spec);

// The residual rows of the error bars (sim/validation/error_bars.hpp): one per row (none when the
// mapping says "residuals": false), its metric named,
// the features of its deployment (serving_features).
std::vector<ResidualRow> serving_residual_rows(const ServingValidation& v);

// The report: rows, the statistics per group, the worst rows. JSON keys: dataset, title, source, file,
// data, assumptions, rows [{id, metric, model, gpu, tp, scheduler, input_tokens, output_tokens, requests,
// kv_capacity_tokens, preemptions, measured, predicted, error}], summary [{group, rows, median_abs_error,
// mape, p90_abs_error, max_abs_error, bias}].
std::string serving_validation_text(const ServingValidation& v);
std::string serving_validation_json(const ServingValidation& v, int indent);

}  // namespace clustersim
