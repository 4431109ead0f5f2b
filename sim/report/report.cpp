#include "sim/report/report.hpp"

#include <cmath>
#include <cstdio>
#include <span>
#include <sstream>
#include <variant>

#include <nlohmann/json.hpp>

#include "sim/report/json_fields.hpp"

namespace clustersim {
namespace {

using Json = nlohmann::ordered_json;  // keys in the documented order

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string seconds(double s) {
  if (s == 0.0) return "0 s";
  if (std::fabs(s) >= 1.0) return fmt("%.3f s", s);
  if (std::fabs(s) >= 1e-3) return fmt("%.3f ms", s * 1e3);
  return fmt("%.2f us", s * 1e6);
}

// Each derived default as {"key", "value" (the JSON value itself), "why"}.
Json derived_defaults_json(const std::vector<DerivedDefault>& defaults) {
  Json out = Json::array();
  for (const DerivedDefault& d : defaults)
    out.push_back({{"key", d.key}, {"value", Json::parse(d.value)}, {"why", d.why}});
  return out;
}

std::string gigabytes(double b) {
  return fmt("%.2f GB", b / 1e9);
}

std::string percent(double part, double whole) {
  return whole > 0 ? fmt("%.1f %%", 100.0 * part / whole) : "-";
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string lpad(std::string s, std::size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

// The text of a figure, or "unknown (why)" when it is NaN.
std::string known_or(double v, const std::string& text, const std::string& reason) {
  if (!std::isnan(v)) return text;
  return "unknown" + (reason.empty() ? std::string() : " (" + reason + ")");
}

using R = ReadBack;

const JsonField<DeviceEnergy> kDeviceEnergyFields[] = {
    {"device", &DeviceEnergy::device}, {"count", &DeviceEnergy::count},
    {"avg_w", &DeviceEnergy::avg_w},   {"energy_per_step_j", &DeviceEnergy::energy_per_step_j},
    {"basis", &DeviceEnergy::basis},
};

const JsonField<GpuClassEnergy> kGpuClassFields[] = {
    {"name", &GpuClassEnergy::name},
    {"ranks", &GpuClassEnergy::ranks},
    {"tensor_s", &GpuClassEnergy::tensor_s},
    {"vector_s", &GpuClassEnergy::vector_s},
    {"exposed_communication_s", &GpuClassEnergy::exposed_communication_s},
    {"overlapped_communication_s", &GpuClassEnergy::overlapped_communication_s},
    {"waiting_s", &GpuClassEnergy::waiting_s},
    {"avg_w_per_gpu", &GpuClassEnergy::avg_w_per_gpu},
    {"energy_per_step_j", &GpuClassEnergy::energy_per_step_j},
};

// clock_cap_modelled (absent: true) and clock_cap_prior (absent: false) follow these; then by_device and
// gpu_classes.
const JsonField<PowerStats> kPowerFields[] = {
    {"gpu_avg_w", &PowerStats::gpu_avg_w},
    {"cluster_avg_kw", &PowerStats::cluster_avg_kw},
    {"energy_per_step_j", &PowerStats::energy_per_step_j},
    {"it_avg_kw", &PowerStats::it_avg_kw, R::absent_zero},
    {"peak_kw", &PowerStats::peak_kw, R::absent_zero},
    {"energy_per_token_j", &PowerStats::energy_per_token_j, R::absent_zero_null_nan},
    {"pue", &PowerStats::pue, R::absent_zero},
    {"tensor_power_budget_w", &PowerStats::tensor_power_budget_w, R::absent_zero},
    {"gemm_clock_MHz", &PowerStats::gemm_clock_MHz, R::absent_zero},
    {"tensor_duty_cycle", &PowerStats::tensor_duty_cycle, R::absent_zero},
    {"clock_basis", &PowerStats::clock_basis, R::absent_zero},
};

Json power_json(const PowerStats& p) {
  Json j = fields_json(p, kPowerFields);
  j["clock_cap_modelled"] = p.clock_cap_modelled;
  if (p.clock_cap_prior) j["clock_cap_prior"] = true;
  j["by_device"] = rows_json(p.by_device, kDeviceEnergyFields);
  j["gpu_classes"] = rows_json(p.gpu_classes, kGpuClassFields);
  return j;
}

PowerStats power_from_json(const Json& p) {
  PowerStats s;
  read_fields(p, s, kPowerFields);
  s.clock_cap_modelled = p.value("clock_cap_modelled", true);
  s.clock_cap_prior = p.value("clock_cap_prior", false);
  read_rows(p, "by_device", s.by_device, kDeviceEnergyFields);
  read_rows(p, "gpu_classes", s.gpu_classes, kGpuClassFields);
  return s;
}

const JsonField<CostLine> kCostLineFields[] = {
    {"item", &CostLine::item},           {"count", &CostLine::count},   {"unit_usd", &CostLine::unit_usd},
    {"total_usd", &CostLine::total_usd}, {"source", &CostLine::source},
};

// bill_of_materials follows these.
const JsonField<CostStats> kCostFields[] = {
    {"capex_usd", &CostStats::capex_usd},
    {"usd_per_hour", &CostStats::usd_per_hour},
    {"usd_per_step", &CostStats::usd_per_step},
    {"usd_per_million_tokens", &CostStats::usd_per_million_tokens, R::null_nan},
    {"amortized_usd_per_hour", &CostStats::amortized_usd_per_hour, R::absent_zero},
    {"energy_usd_per_hour", &CostStats::energy_usd_per_hour, R::absent_zero},
    {"operations_usd_per_hour", &CostStats::operations_usd_per_hour, R::absent_zero},
    {"electricity_usd_per_kwh", &CostStats::electricity_usd_per_kwh, R::absent_zero},
    {"amortization_years", &CostStats::amortization_years, R::absent_zero},
    {"tco_usd", &CostStats::tco_usd, R::absent_zero},
};

Json cost_json(const CostStats& c) {
  return section_json(c, kCostFields, "bill_of_materials", &CostStats::bill_of_materials, kCostLineFields);
}

CostStats cost_from_json(const Json& c) {
  return section_from_json(c, kCostFields, "bill_of_materials", &CostStats::bill_of_materials, kCostLineFields);
}

const JsonField<InterruptionCause> kCauseFields[] = {
    {"cause", &InterruptionCause::cause},           {"component", &InterruptionCause::component},
    {"components", &InterruptionCause::components}, {"per_year", &InterruptionCause::per_year},
    {"nodes_down", &InterruptionCause::nodes_down}, {"planned", &InterruptionCause::planned},
    {"expected", &InterruptionCause::expected},     {"mean_per_run", &InterruptionCause::mean_per_run},
    {"source", &InterruptionCause::source},
};

// causes follows these. Every key may be absent (reports written before it existed).
using TT = TimeToTrainStats;
const JsonField<TT> kTimeToTrainFields[] = {
    {"tokens", &TT::tokens, R::absent_zero},
    {"steps", &TT::steps, R::absent_zero},
    {"step_time_s", &TT::step_time_s, R::absent_zero},
    {"straggler_inflation", &TT::straggler_inflation, R::absent_zero},
    {"effective_step_time_s", &TT::effective_step_time_s, R::absent_zero},
    {"checkpoint_bytes", &TT::checkpoint_bytes, R::absent_zero},
    {"storage_kind", &TT::storage_kind, R::absent_zero},
    {"asynchronous_checkpoints", &TT::asynchronous_checkpoints, R::absent_zero},
    {"checkpoint_write_s", &TT::checkpoint_write_s, R::absent_zero},
    {"checkpoint_stall_s", &TT::checkpoint_stall_s, R::absent_zero},
    {"checkpoint_read_s", &TT::checkpoint_read_s, R::absent_zero},
    {"restart_s", &TT::restart_s, R::absent_zero},
    {"mtbf_s", &TT::mtbf_s, R::infinity},
    {"checkpoint_interval_s", &TT::checkpoint_interval_s, R::infinity},
    {"checkpoint_interval_basis", &TT::checkpoint_interval_basis, R::absent_zero},
    {"young_daly_interval_s", &TT::young_daly_interval_s, R::infinity},
    {"runs", &TT::runs, R::absent_zero},
    {"seed", &TT::seed, R::absent_zero},
    {"days_p10", &TT::days_p10, R::absent_zero},
    {"days_p50", &TT::days_p50, R::absent_zero},
    {"days_p90", &TT::days_p90, R::absent_zero},
    {"days_mean", &TT::days_mean, R::absent_zero},
    {"failure_free_days", &TT::failure_free_days, R::absent_zero},
    {"goodput", &TT::goodput, R::absent_zero},
    {"useful_s", &TT::useful_s, R::absent_zero},
    {"checkpoint_s", &TT::checkpoint_s, R::absent_zero},
    {"lost_s", &TT::lost_s, R::absent_zero},
    {"restart_total_s", &TT::restart_total_s, R::absent_zero},
    {"interruptions_expected", &TT::interruptions_expected, R::absent_zero},
    {"interruptions_mean", &TT::interruptions_mean, R::absent_zero},
    {"planned_interruptions_mean", &TT::planned_interruptions_mean, R::absent_zero},
    {"energy_mwh", &TT::energy_mwh, R::absent_zero},
    {"capex_share_usd", &TT::capex_share_usd, R::absent_zero},
    {"energy_usd", &TT::energy_usd, R::absent_zero},
    {"operations_usd", &TT::operations_usd, R::absent_zero},
    {"cost_usd", &TT::cost_usd, R::absent_zero},
};

Json time_to_train_json(const TimeToTrainStats& t) {
  return section_json(t, kTimeToTrainFields, "causes", &TT::causes, kCauseFields);
}

TimeToTrainStats time_to_train_from_json(const Json& j) {
  return section_from_json(j, kTimeToTrainFields, "causes", &TT::causes, kCauseFields);
}

// The memory section: fits (null when the peak is unknown) follows kMemoryHead, peak_phase (null
// for a trace) follows kMemoryBreakdown.
using M = MemoryStats;
const JsonField<M> kMemoryHead[] = {
    {"peak_bytes_per_gpu", &M::peak_bytes_per_gpu, R::null_nan},
    {"capacity_bytes", &M::capacity_bytes},
};
const JsonField<M> kMemoryBreakdown[] = {
    {"weights_bytes", &M::weights_bytes, R::null_nan},
    {"gradients_bytes", &M::gradients_bytes, R::null_nan},
    {"optimizer_bytes", &M::optimizer_bytes, R::null_nan},
    {"activations_bytes", &M::activations_bytes, R::null_nan},
    {"communication_buffers_bytes", &M::communication_buffers_bytes, R::null_nan},
    {"framework_overhead_bytes", &M::framework_overhead_bytes, R::null_nan},
};
const JsonField<M> kMemoryTail[] = {
    {"logits_bytes", &M::logits_bytes, R::null_nan},
    {"transient_bytes", &M::transient_bytes, R::null_nan},
    // reports written before these two lines existed have neither: they counted none (0)
    {"cp_kv_gather_bytes", &M::cp_kv_gather_bytes, R::absent_zero_null_nan},
    {"fp8_saved_operands_bytes", &M::fp8_saved_operands_bytes, R::absent_zero_null_nan},
    {"workspace_bytes", &M::workspace_bytes, R::null_nan},
    {"allocated_peak_bytes", &M::allocated_peak_bytes, R::null_nan},
    {"allocator_reserve_bytes", &M::allocator_reserve_bytes, R::null_nan},
    {"reserved_peak_bytes", &M::reserved_peak_bytes, R::null_nan},
    {"cuda_context_bytes", &M::cuda_context_bytes, R::null_nan},
    // not on the GPU: the optimizer state offloaded to host memory (reports before it: none)
    {"host_optimizer_bytes", &M::host_optimizer_bytes, R::absent_zero_null_nan},
};

Json memory_json(const MemoryStats& m) {
  Json j = fields_json(m, kMemoryHead);
  j["fits"] = std::isnan(m.peak_bytes_per_gpu) ? Json(nullptr) : Json(m.fits);
  write_fields(j, m, kMemoryBreakdown);
  j["peak_phase"] = m.peak_phase;
  write_fields(j, m, kMemoryTail);
  return j;
}

MemoryStats memory_from_json(const Json& j) {
  MemoryStats m;
  read_fields(j, m, kMemoryHead);
  m.fits = j.at("fits").is_null() || j.at("fits").get<bool>();
  read_fields(j, m, kMemoryBreakdown);
  m.peak_phase = j.at("peak_phase").is_null() ? std::string() : j.at("peak_phase").get<std::string>();
  read_fields(j, m, kMemoryTail);
  return m;
}

// The run section: the parallelism object follows kRunHead.
const JsonField<RunInfo> kRunHead[] = {
    {"cluster", &RunInfo::cluster}, {"workload", &RunInfo::workload}, {"gpu", &RunInfo::gpu},
    {"gpus", &RunInfo::gpus},       {"nodes", &RunInfo::nodes},
};
const JsonField<RunInfo> kRunParallelism[] = {
    {"tp", &RunInfo::tp}, {"pp", &RunInfo::pp}, {"dp", &RunInfo::dp}, {"cp", &RunInfo::cp}, {"ep", &RunInfo::ep},
};
const JsonField<RunInfo> kRunTail[] = {
    {"global_batch", &RunInfo::global_batch},
    {"micro_batches", &RunInfo::micro_batches},
    {"seq_len", &RunInfo::seq_len},
    {"parameters", &RunInfo::parameters},
    {"model_flops_per_step", &RunInfo::model_flops_per_step, R::null_nan},
    {"peak_flops_per_gpu", &RunInfo::peak_flops_per_gpu},
    {"precision", &RunInfo::precision},
    {"stack", &RunInfo::stack, R::absent_zero},
    {"ops_simulated", &RunInfo::ops_simulated},
    {"trace", &RunInfo::trace, R::absent_zero},
    {"transfers_simulated", &RunInfo::transfers_simulated},
};

Json run_json(const RunInfo& r) {
  Json j = fields_json(r, kRunHead);
  j["parallelism"] = fields_json(r, kRunParallelism);
  write_fields(j, r, kRunTail);
  return j;
}

RunInfo run_from_json(const Json& j) {
  RunInfo r;
  read_fields(j, r, kRunHead);
  read_fields(j.at("parallelism"), r, kRunParallelism);
  read_fields(j, r, kRunTail);
  return r;
}

// The interval's basis: the datasets (a map: name -> rows) follow kIntervalHead.
using I = StepTimeInterval;
const JsonField<I> kIntervalHead[] = {{"rows", &I::rows}};
const JsonField<I> kIntervalTail[] = {
    {"mean_distance", &I::mean_distance},
    {"max_distance", &I::max_distance},
    {"step_time_error_p5", &I::error_p5},
    {"step_time_error_p50", &I::error_p50},
    {"step_time_error_p95", &I::error_p95},
    {"widening", &I::widening},
    {"rule", &I::rule},
};

Json interval_basis_json(const StepTimeInterval& i) {
  Json b = fields_json(i, kIntervalHead);
  Json datasets = Json::object();
  for (const auto& d : i.datasets)
    datasets[d.dataset] = d.rows;
  b["datasets"] = datasets;
  write_fields(b, i, kIntervalTail);
  return b;
}

StepTimeInterval interval_from_json(const Json& range, const Json& b) {
  StepTimeInterval i;
  i.lo = range.at(0).get<double>();
  i.hi = range.at(1).get<double>();
  read_fields(b, i, kIntervalHead);
  for (const auto& [name, rows] : b.at("datasets").items())
    i.datasets.push_back({name, rows.get<int>()});
  read_fields(b, i, kIntervalTail);
  return i;
}

const JsonField<Breakdown> kBreakdownFields[] = {
    {"compute_s", &Breakdown::compute_s},
    {"exposed_communication_s", &Breakdown::exposed_communication_s},
    {"pipeline_bubble_s", &Breakdown::pipeline_bubble_s},
    {"host_wait_s", &Breakdown::host_wait_s, R::absent_zero},
};

using C = CommunicationStats;
const JsonField<C> kCommunicationFields[] = {
    {"group", &C::group},         {"collective", &C::collective},
    {"algorithm", &C::algorithm}, {"bytes", &C::bytes},
    {"count", &C::count},         {"time_s", &C::time_s},
    {"exposed_s", &C::exposed_s}, {"protocol", &C::protocol, R::absent_zero},
};

const JsonField<LinkUser> kLinkUserFields[] = {{"group", &LinkUser::group}, {"bytes", &LinkUser::bytes}};

// users follows these.
const JsonField<LinkStats> kLinkFields[] = {
    {"id", &LinkStats::id},
    {"kind", &LinkStats::kind},
    {"bytes", &LinkStats::bytes},
    {"bandwidth_Bps", &LinkStats::bandwidth_Bps},
    {"utilization", &LinkStats::utilization},
    {"busy_s", &LinkStats::busy_s},
};

Json link_json(const LinkStats& l) {
  return section_json(l, kLinkFields, "users", &LinkStats::users, kLinkUserFields);
}

LinkStats link_from_json(const Json& j) {
  return section_from_json(j, kLinkFields, "users", &LinkStats::users, kLinkUserFields);
}

// extrapolated and derived_defaults follow these.
const JsonField<Provenance> kProvenanceFields[] = {
    {"fidelity", &Provenance::fidelity},
    {"network", &Provenance::network},
    {"calibration", &Provenance::calibration},
    {"stack", &Provenance::stack, R::absent_zero},
};

}  // namespace

std::vector<MemoryFigure> memory_split_figures() {
  std::vector<MemoryFigure> out;
  for (const std::span<const JsonField<MemoryStats>> fields :
       {std::span<const JsonField<MemoryStats>>(kMemoryBreakdown),
        std::span<const JsonField<MemoryStats>>(kMemoryTail)})
    for (const JsonField<MemoryStats>& f : fields)
      out.push_back({std::string("memory.") + f.key, std::get<double MemoryStats::*>(f.member)});
  return out;
}

std::string Report::to_json(int indent) const {
  Json j;
  j["step_time_s"] = step_time_s;
  if (step_time_interval) {
    j["step_time_interval_s"] = {step_time_interval->lo, step_time_interval->hi};
    j["step_time_interval_basis"] = interval_basis_json(*step_time_interval);
  } else {
    j["step_time_interval_s"] = nullptr;
    j["step_time_interval_basis"] = nullptr;
  }
  j["tokens_per_s"] = tokens_per_s;
  j["tflops_per_gpu"] = tflops_per_gpu;
  j["mfu"] = mfu;
  j["breakdown"] = fields_json(breakdown, kBreakdownFields);
  j["communication"] = rows_json(communication, kCommunicationFields);
  Json links_json = Json::array();
  for (const auto& l : links)
    links_json.push_back(link_json(l));
  j["links"] = links_json;
  j["memory"] = memory_json(memory);
  j["power"] = power ? power_json(*power)
                     : Json{{"gpu_avg_w", nullptr}, {"cluster_avg_kw", nullptr}, {"energy_per_step_j", nullptr}};
  j["cost"] = cost ? cost_json(*cost)
                   : Json{{"capex_usd", nullptr},
                          {"usd_per_hour", nullptr},
                          {"usd_per_step", nullptr},
                          {"usd_per_million_tokens", nullptr}};
  if (time_to_train) j["time_to_train"] = time_to_train_json(*time_to_train);
  Json pv = fields_json(provenance, kProvenanceFields);
  pv["extrapolated"] = provenance.extrapolated;
  pv["derived_defaults"] = derived_defaults_json(provenance.derived_defaults);
  j["provenance"] = pv;
  j["run"] = run_json(run);
  if (!unknown.empty()) {
    Json why = Json::object();
    for (const auto& u : unknown)
      why[u.key] = u.reason;
    j["unknown"] = why;
  }
  return j.dump(indent);
}

Report Report::from_json(const std::string& text) {
  const Json j = Json::parse(text);
  Report r;
  r.step_time_s = j.at("step_time_s").get<double>();
  if (j.contains("step_time_interval_s") && !j.at("step_time_interval_s").is_null())
    r.step_time_interval = interval_from_json(j.at("step_time_interval_s"), j.at("step_time_interval_basis"));
  r.tokens_per_s = number_or_nan(j, "tokens_per_s");
  r.tflops_per_gpu = number_or_nan(j, "tflops_per_gpu");
  r.mfu = number_or_nan(j, "mfu");
  read_fields(j.at("breakdown"), r.breakdown, kBreakdownFields);
  read_rows(j, "communication", r.communication, kCommunicationFields);
  for (const auto& l : j.at("links"))
    r.links.push_back(link_from_json(l));
  r.memory = memory_from_json(j.at("memory"));
  const auto& p = j.at("power");
  if (!p.at("gpu_avg_w").is_null()) r.power = power_from_json(p);
  const auto& c = j.at("cost");
  if (!c.at("capex_usd").is_null()) r.cost = cost_from_json(c);
  if (const auto t = j.find("time_to_train"); t != j.end()) r.time_to_train = time_to_train_from_json(*t);
  const auto& pv = j.at("provenance");
  read_fields(pv, r.provenance, kProvenanceFields);
  r.provenance.extrapolated = pv.at("extrapolated").get<std::vector<std::string>>();
  if (const auto d = pv.find("derived_defaults"); d != pv.end()) {
    for (const auto& e : *d)
      r.provenance.derived_defaults.push_back(
          {e.at("key").get<std::string>(), e.at("value").dump(), e.at("why").get<std::string>()});
  }
  r.run = run_from_json(j.at("run"));
  if (const auto it = j.find("unknown"); it != j.end())
    for (const auto& [key, reason] : it->items())
      r.unknown.push_back({key, reason.get<std::string>()});
  return r;
}

void Report::mark_unknown(std::string key, std::string reason) {
  for (auto& u : unknown)
    if (u.key == key) {
      u.reason = std::move(reason);
      return;
    }
  unknown.push_back({std::move(key), std::move(reason)});
}

std::string Report::unknown_reason(std::string_view key) const {
  for (const auto& u : unknown)
    if (u.key == key) return u.reason;
  return "";
}

std::string Report::to_text() const {
  std::ostringstream o;
  const double step = step_time_s;
  o << "clustersim: " << run.workload << " on " << run.cluster << "\n";
  o << "  " << run.nodes << " nodes x " << run.gpus / std::max(1, run.nodes) << " " << run.gpu << " = " << run.gpus
    << " GPUs;  ";
  if (!run.trace.empty()) {
    // A trace has no model description: its ops are the record (MFU counts their flops).
    o << "trace " << run.trace << "\n\n";
  } else {
    o << "parallelism tp=" << run.tp << " pp=" << run.pp << " dp=" << run.dp << " cp=" << run.cp << " ep=" << run.ep
      << ";  " << fmt("%.2f", run.parameters / 1e9) << " B parameters, " << run.precision
      << (run.stack.empty() ? "" : ", stack " + run.stack) << "\n";
    o << "  global batch " << run.global_batch << " sequences x " << run.seq_len << " tokens, " << run.micro_batches
      << " micro-batches per rank\n\n";
  }

  o << "  Step time          " << seconds(step) << "\n";
  if (step_time_interval) {
    const StepTimeInterval& i = *step_time_interval;
    o << "  Likely measured    " << seconds(i.lo) << " to " << seconds(i.hi) << " (from the errors of the " << i.rows
      << " validation runs nearest to this one, mean distance " << fmt("%.2f", i.mean_distance) << ")\n";
  }
  o << "  Throughput         "
    << known_or(tokens_per_s, fmt("%.0f", tokens_per_s) + " tokens/s", unknown_reason("tokens_per_s")) << "\n";
  o << "  Model flops        "
    << known_or(tflops_per_gpu,
                fmt("%.1f", tflops_per_gpu) + " TFLOP/s per GPU = " + fmt("%.1f %%", 100 * mfu) + " MFU (of " +
                    fmt("%.0f", run.peak_flops_per_gpu / 1e12) + " TFLOP/s dense " + run.precision + " peak)",
                unknown_reason("tflops_per_gpu"))
    << "\n\n";

  o << "  Where the step goes (critical rank)\n";
  o << "    compute                  " << lpad(seconds(breakdown.compute_s), 12) << "  "
    << lpad(percent(breakdown.compute_s, step), 7) << "\n";
  o << "    exposed communication    " << lpad(seconds(breakdown.exposed_communication_s), 12) << "  "
    << lpad(percent(breakdown.exposed_communication_s, step), 7) << "   (communication not hidden behind compute)\n";
  o << "    waiting (bubble)         " << lpad(seconds(breakdown.pipeline_bubble_s), 12) << "  "
    << lpad(percent(breakdown.pipeline_bubble_s, step), 7) << "\n";
  if (breakdown.host_wait_s > 0.0) {
    o << "    waiting for the host     " << lpad(seconds(breakdown.host_wait_s), 12) << "  "
      << lpad(percent(breakdown.host_wait_s, step), 7) << "   (ops ready, not yet issued by the CPU)\n";
  }
  o << "\n";

  if (!communication.empty()) {
    o << "  Communication\n";
    o << "    " << pad("group", 7) << pad("collective", 16) << pad("algorithm", 11) << pad("protocol", 9)
      << lpad("calls", 6) << lpad("bytes/call", 14) << lpad("total time", 14) << lpad("exposed", 13) << "\n";
    for (const auto& c : communication) {
      o << "    " << pad(c.group, 7) << pad(c.collective, 16) << pad(c.algorithm, 11) << pad(c.protocol, 9)
        << lpad(std::to_string(c.count), 6) << lpad(gigabytes(c.count ? c.bytes / static_cast<double>(c.count) : 0), 14)
        << lpad(seconds(c.time_s), 14) << lpad(seconds(c.exposed_s), 13) << "\n";
    }
    o << "\n";
  }

  const std::string peak = known_or(memory.peak_bytes_per_gpu,
                                    gigabytes(memory.peak_bytes_per_gpu) + " of " + gigabytes(memory.capacity_bytes) +
                                        (memory.fits ? "  (fits)" : "  (DOES NOT FIT)"),
                                    unknown_reason("memory.peak_bytes_per_gpu"));
  o << "  Memory per GPU     " << peak << "\n";
  if (std::isnan(memory.weights_bytes)) {
    if (!std::isnan(memory.peak_bytes_per_gpu))
      o << "    split unknown (" << unknown_reason("memory.weights_bytes") << ")\n";
    o << "\n";
  } else {
    if (!memory.peak_phase.empty())
      o << "    at the " << memory.peak_phase << " peak: allocated " << gigabytes(memory.allocated_peak_bytes)
        << ", reserved " << gigabytes(memory.reserved_peak_bytes) << ", + CUDA context "
        << gigabytes(memory.cuda_context_bytes) << "\n";
    o << "    weights " << gigabytes(memory.weights_bytes) << ", gradients " << gigabytes(memory.gradients_bytes)
      << ", optimizer " << gigabytes(memory.optimizer_bytes) << ", activations " << gigabytes(memory.activations_bytes)
      << ",\n    logits " << gigabytes(memory.logits_bytes) << ", transient " << gigabytes(memory.transient_bytes)
      << ", K/V all-gather " << gigabytes(memory.cp_kv_gather_bytes) << ", fp8 saved operands "
      << gigabytes(memory.fp8_saved_operands_bytes) << ",\n    communication buffers "
      << gigabytes(memory.communication_buffers_bytes) << ", workspace " << gigabytes(memory.workspace_bytes)
      << ", allocator reserve " << gigabytes(memory.allocator_reserve_bytes) << "\n";
    if (memory.host_optimizer_bytes > 0.0)
      o << "    in host memory (not on the GPU): optimizer " << gigabytes(memory.host_optimizer_bytes) << "\n";
    o << "\n";
  }

  if (!links.empty()) {
    o << "  Busiest links      (bytes; utilization = bytes / (bandwidth x step); busy = time carrying traffic)\n";
    const std::size_t shown = std::min<std::size_t>(links.size(), 5);
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& l = links[i];
      o << "    " << pad(l.id, 34) << pad(l.kind, 11) << lpad(gigabytes(l.bytes), 12) << "  "
        << lpad(fmt("%.1f %%", 100 * l.utilization), 7) << " of " << fmt("%.0f", l.bandwidth_Bps / 1e9)
        << " GB/s, busy " << seconds(l.busy_s);
      if (!l.users.empty()) o << ", by " << l.users.front().group;
      o << "\n";
    }
    o << "\n";
  }
  if (power) {
    o << "  Power              " << fmt("%.1f kW", power->cluster_avg_kw) << " average (facility, PUE "
      << fmt("%.2f", power->pue) << "; IT " << fmt("%.1f kW", power->it_avg_kw)
      << "), peak <= " << fmt("%.1f kW", power->peak_kw) << ";  GPU " << fmt("%.0f W", power->gpu_avg_w)
      << " average\n";
    if (!power->clock_cap_modelled)
      o << "  GPU clock          the boost clock for every kernel: this GPU's entry does not model the clock under its "
        << fmt("%.0f W", power->tensor_power_budget_w)  // the TDP when the cap is not modelled (step_clock.cpp)
        << " cap (tensor_boost_W), so steps bound by its tensor cores may come out faster than it runs them (a "
           "measured H200 sustained 1440 of 1830 MHz on GEMMs: docs/validation.md)\n";
    else if (power->gemm_clock_MHz > 0)
      o << "  GPU clock          " << fmt("%.0f MHz", power->gemm_clock_MHz) << " for large GEMMs, tensor kernels "
        << fmt("%.0f W", power->tensor_power_budget_w) << " while they run, "
        << fmt("%.0f %%", 100 * power->tensor_duty_cycle) << " of the step (power.clock_basis)\n";
    if (power->clock_cap_modelled && power->clock_cap_prior)
      o << "  Clock under cap    a PRIOR: not measured on this GPU (power.clock_cap_prior; tensor_boost_W's source in "
           "its catalogue entry)\n";
    o << "  Energy             " << fmt("%.1f kJ", power->energy_per_step_j / 1e3) << " per step, "
      << known_or(power->energy_per_token_j, fmt("%.3f J", power->energy_per_token_j) + " per token",
                  unknown_reason("power.energy_per_token_j"))
      << "\n";
    for (const auto& d : power->by_device)
      o << "    " << pad(d.device, 15) << lpad(d.count > 0 ? fmt("%.0f", d.count) : "", 7)
        << lpad(fmt("%.1f kW", d.avg_w / 1e3), 11) << "  "
        << lpad(percent(d.energy_per_step_j, power->energy_per_step_j), 7) << "\n";
    o << "\n";
  } else {
    o << "  Power              not modelled\n";
  }
  if (cost) {
    o << "  Cost               capex " << fmt("%.2f M$", cost->capex_usd / 1e6) << " over "
      << fmt("%.0f", cost->amortization_years) << " years;  " << fmt("%.0f $/h", cost->usd_per_hour) << " ("
      << fmt("%.0f", cost->amortized_usd_per_hour) << " capex + " << fmt("%.0f", cost->energy_usd_per_hour)
      << " energy at " << fmt("%.3f $/kWh", cost->electricity_usd_per_kwh) << ")\n";
    o << "                     " << fmt("%.4f $", cost->usd_per_step) << " per step, "
      << known_or(cost->usd_per_million_tokens, fmt("%.3f $", cost->usd_per_million_tokens) + " per million tokens",
                  "tokens unknown")
      << ";  TCO " << fmt("%.2f M$", cost->tco_usd / 1e6) << "\n\n";
  }
  if (time_to_train) {
    const TimeToTrainStats& t = *time_to_train;
    o << "  Time to train      " << fmt("%.3g tokens", t.tokens) << " in " << fmt("%.0f steps", t.steps) << ": "
      << fmt("%.2f", t.days_p10) << " / " << fmt("%.2f", t.days_p50) << " / " << fmt("%.2f days", t.days_p90)
      << " (p10/p50/p90 of " << t.runs << " runs; " << fmt("%.2f days", t.failure_free_days) << " without failures)\n";
    o << "                     goodput " << fmt("%.1f %%", 100 * t.goodput) << ";  "
      << fmt("%.0f", t.interruptions_mean) << " unexpected interruptions (" << fmt("%.0f", t.interruptions_expected)
      << " expected), " << fmt("%.0f", t.planned_interruptions_mean) << " planned;  MTBF "
      << (std::isfinite(t.mtbf_s) ? fmt("%.2f h", t.mtbf_s / 3600) : std::string("none")) << "\n";
    o << "                     checkpoint " << fmt("%.3g GB", t.checkpoint_bytes / 1e9) << " every "
      << (std::isfinite(t.checkpoint_interval_s) ? seconds(t.checkpoint_interval_s) : std::string("never")) << " ("
      << t.checkpoint_interval_basis << "), stalls " << seconds(t.checkpoint_stall_s) << ";  restart "
      << seconds(t.restart_s) << ";  stragglers x" << fmt("%.4f", t.straggler_inflation) << "\n";
    o << "                     lost: checkpoints " << fmt("%.1f h", t.checkpoint_s / 3600) << ", recomputation "
      << fmt("%.1f h", t.lost_s / 3600) << ", restarts " << fmt("%.1f h", t.restart_total_s / 3600) << "\n";
    o << "                     " << fmt("%.0f MWh", t.energy_mwh) << ", " << fmt("%.2f M$", t.cost_usd / 1e6) << " ("
      << fmt("%.2f", t.capex_share_usd / 1e6) << " capex share + " << fmt("%.2f", t.energy_usd / 1e6) << " energy + "
      << fmt("%.2f", t.operations_usd / 1e6) << " operations)\n";
    for (const InterruptionCause& c : t.causes)
      if (c.expected > 0.0)
        o << "    " << pad(c.cause, 20) << lpad(fmt("%.1f", c.expected), 8) << " expected"
          << lpad(fmt("%.1f", c.mean_per_run), 8) << " per run  (" << fmt("%.0f", c.components) << " " << c.component
          << ", " << fmt("%.4g", c.per_year) << "/year)\n";
    o << "\n";
  }
  o << "  Fidelity           " << provenance.fidelity << ": " << provenance.network << "\n";
  o << "  GPU model          " << provenance.calibration << "\n";
  if (!provenance.stack.empty()) o << "  Software stack     " << provenance.stack << "\n";
  for (const DerivedDefault& d : provenance.derived_defaults)
    o << "  Derived default    " << d.key << " = " << d.value << ": " << d.why << "\n";
  o << "  Simulated          " << run.ops_simulated << " ops, " << run.transfers_simulated << " network flows\n";
  return o.str();
}

}  // namespace clustersim
