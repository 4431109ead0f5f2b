#include "sim/api/serving_request.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "sim/core/error.hpp"
#include "sim/core/output_file.hpp"
#include "sim/serving/serving_engine.hpp"
#include "sim/serving/serving_traffic.hpp"
#include "sim/simulate.hpp"

namespace clustersim {
namespace {

constexpr std::array<std::string_view, 6> kClusterKeys = {"gpu", "nodes", "node", "fabric", "power", "cost"};
constexpr std::int64_t kDefaultTimelineRequests = 10'000;
constexpr double kDefaultSampleInterval_s = 1.0;

// A key of the serving spec: the first key of one of its schema's paths (model, replica, traffic, ...).
bool is_serving_key(std::string_view k) {
  if (k == "name" || k == "description") return false;  // both specs have them: a prefix says which
  for (const SpecField& f : serving_schema()) {
    const std::string_view p = f.path;
    if (p.substr(0, p.find('.')) == k) return true;
  }
  return false;
}

}  // namespace

SplitServingOverrides split_serving_overrides(const std::vector<std::string>& settings) {
  SplitServingOverrides out;
  for (const std::string& s : settings) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw SpecError("--set " + s, "", "expected key.path=value (e.g. traffic.rate_rps=20)");
    const std::string key = s.substr(0, eq);
    const std::string value = s.substr(eq + 1);
    const std::string first = key.substr(0, key.find('.'));
    const std::string rest = key.find('.') == std::string::npos ? "" : key.substr(key.find('.') + 1);
    if (first == "cluster" && !rest.empty())
      out.cluster.emplace_back(rest, value);
    else if (first == "serving" && !rest.empty())
      out.serving.emplace_back(rest, value);
    else if (std::find(kClusterKeys.begin(), kClusterKeys.end(), first) != kClusterKeys.end())
      out.cluster.emplace_back(key, value);
    else if (is_serving_key(first))
      out.serving.emplace_back(key, value);
    else
      throw SpecError("--set " + s, "",
                      "cannot tell which spec '" + first +
                          "' belongs to; prefix it with cluster. or serving. (e.g. serving." + key + ")");
  }
  return out;
}

ServingReport serve(const ServingRequest& request) {
  const std::int64_t timeline_requests = request.timeline_requests.value_or(kDefaultTimelineRequests);
  if (timeline_requests < 1)
    throw SpecError("--timeline-requests", "",
                    "expected a number of requests >= 1, got " + std::to_string(timeline_requests));
  const double sample_interval_s = request.sample_interval_s.value_or(kDefaultSampleInterval_s);
  if (!(sample_interval_s > 0.0) || sample_interval_s > 1e9)
    throw SpecError("--sample-interval", "",
                    "expected a number of seconds > 0 (at most 1e9), got " + std::to_string(sample_interval_s));
  if (request.iteration_records < 0)
    throw SpecError("iterations", "",
                    "expected a number of iterations to keep >= 0, got " + std::to_string(request.iteration_records));
  const SplitServingOverrides overrides = split_serving_overrides(request.settings);
  const ClusterSpec cluster = load_cluster_spec(request.cluster, overrides.cluster);
  const ServingSpec spec = load_serving_spec(request.serving, overrides.serving);

  const std::int64_t gpus = std::int64_t{spec.replicas} * spec.tp * spec.pp;
  if (gpus > cluster.gpu_count())
    throw SpecError(spec.source_file, "/replica/replicas",
                    std::to_string(spec.replicas) + " replicas x tp " + std::to_string(spec.tp) + " x pp " +
                        std::to_string(spec.pp) + " need " + std::to_string(gpus) + " GPUs; the cluster " +
                        cluster.name + " has " + std::to_string(cluster.gpu_count()));
  const GpuSpec gpu = simulated_gpu(cluster);
  std::unique_ptr<IterationModel> model;
  try {
    model = make_iteration_model(replica_config(spec), gpu, cluster);
  } catch (const SpecError& e) {
    // The replica's errors name ReplicaConfig's members: say where they are in the serving spec.
    if (e.file() == cluster.source_file) throw;
    throw SpecError(spec.source_file, serving_path_of_replica_path(spec, e.json_path()), e.message());
  }
  const std::vector<RequestArrival> arrivals = make_traffic(spec.traffic);

  ServingRunOptions options;
  options.iteration_records = request.iteration_records;
  options.sample_interval_s = sample_interval_s;
  ServingReport report;
  report.serving = spec.name;
  report.cluster = cluster.name;
  report.gpu = gpu.id;
  report.scheduler = spec.scheduler;
  report.router = spec.router;
  report.replicas = spec.replicas;
  report.tp = spec.tp;
  report.pp = spec.pp;
  report.memory = model->memory();
  report.result = run_serving(spec, *model, arrivals, options);
  report.cost = serving_cost(report.result.summary, static_cast<int>(gpus), gpu, cluster);
  if (request.timeline_path)
    write_output_file(*request.timeline_path,
                      serving_timeline_json(report.result, static_cast<std::size_t>(timeline_requests)) + "\n",
                      "timeline file");
  return report;
}

}  // namespace clustersim
