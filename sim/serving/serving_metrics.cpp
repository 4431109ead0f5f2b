#include "sim/serving/serving_metrics.hpp"

#include <algorithm>
#include <cmath>

namespace clustersim {
namespace {

// Histogram bins: bin b holds gaps in [kMinGap x kRatio^b, kMinGap x kRatio^(b+1)); 1 ns to 10^5 s.
constexpr double kMinGap_s = 1e-9;
constexpr double kRatio = 1.001;
const double kLogRatio = std::log(kRatio);
const std::size_t kBins = static_cast<std::size_t>(std::ceil(std::log(1e5 / kMinGap_s) / std::log(kRatio))) + 1;

LatencySummary summarize(std::vector<double>& v) {
  LatencySummary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0.0;
  for (const double x : v)
    sum += x;
  s.mean_s = sum / static_cast<double>(v.size());
  s.p50_s = nearest_rank_percentile(v, 50);
  s.p90_s = nearest_rank_percentile(v, 90);
  s.p99_s = nearest_rank_percentile(v, 99);
  s.max_s = v.back();
  return s;
}

}  // namespace

double nearest_rank_percentile(std::span<const double> sorted, double p) {
  const auto n = static_cast<double>(sorted.size());
  const auto rank = static_cast<std::size_t>(std::max(1.0, std::ceil(p / 100.0 * n - 1e-9)));
  return sorted[std::min(rank, sorted.size()) - 1];
}

TokenGapHistogram::TokenGapHistogram() : bins_(kBins, 0) {}

void TokenGapHistogram::add(double gap_s) {
  if (gap_s != last_gap_s_) {
    last_gap_s_ = gap_s;
    const double b = gap_s <= kMinGap_s ? 0.0 : std::floor(std::log(gap_s / kMinGap_s) / kLogRatio);
    last_bin_ = std::min(static_cast<std::size_t>(b), kBins - 1);
  }
  ++bins_[last_bin_];
  ++count_;
}

double TokenGapHistogram::percentile(double p) const {
  if (count_ == 0) return 0.0;
  const auto rank =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(p / 100.0 * static_cast<double>(count_) - 1e-9)));
  std::int64_t seen = 0;
  for (std::size_t b = 0; b < bins_.size(); ++b) {
    seen += bins_[b];
    if (seen >= rank) return kMinGap_s * std::pow(kRatio, static_cast<double>(b) + 0.5);
  }
  return kMinGap_s * std::pow(kRatio, static_cast<double>(kBins) - 0.5);
}

bool attains_slo(const ServedRequest& r, const SloSpec& slo) {
  if (r.status != RequestStatus::finished) return false;
  if (r.first_token_s - r.arrival_s > slo.ttft_s) return false;
  return r.generated < 2 || r.tbt_sum_s / (r.generated - 1) <= slo.tbt_s;
}

ServingSummary summarize_requests(std::span<const ServedRequest> requests, const SloSpec& slo,
                                  const TokenGapHistogram& gaps) {
  ServingSummary s;
  s.requests = std::ssize(requests);
  std::vector<double> ttft;
  std::vector<double> e2e;
  std::vector<double> tbt_mean;
  std::vector<double> tbt_max;
  std::int64_t attained = 0;
  for (const ServedRequest& r : requests) {
    switch (r.status) {
      case RequestStatus::rejected_context:
        ++s.rejected_context;
        continue;
      case RequestStatus::rejected_kv_cache:
        ++s.rejected_kv_cache;
        continue;
      case RequestStatus::rejected_batch_tokens:
        ++s.rejected_batch_tokens;
        continue;
      case RequestStatus::pending:
        continue;
      case RequestStatus::finished:
        break;
    }
    ++s.finished;
    s.input_tokens += r.prompt_tokens;
    s.output_tokens += r.generated;
    s.makespan_s = std::max(s.makespan_s, r.finish_s);
    ttft.push_back(r.first_token_s - r.arrival_s);
    e2e.push_back(r.finish_s - r.arrival_s);
    if (r.generated >= 2) {
      tbt_mean.push_back(r.tbt_sum_s / (r.generated - 1));
      tbt_max.push_back(r.tbt_max_s);
    }
    if (attains_slo(r, slo)) ++attained;
  }
  s.ttft = summarize(ttft);
  s.e2e = summarize(e2e);
  s.tbt_mean = summarize(tbt_mean);
  s.tbt_max = summarize(tbt_max);
  s.tbt_p50_s = gaps.percentile(50);
  s.tbt_p99_s = gaps.percentile(99);
  if (s.makespan_s > 0.0) {
    s.throughput_rps = static_cast<double>(s.finished) / s.makespan_s;
    s.input_tokens_per_s = static_cast<double>(s.input_tokens) / s.makespan_s;
    s.output_tokens_per_s = static_cast<double>(s.output_tokens) / s.makespan_s;
    s.goodput_rps = static_cast<double>(attained) / s.makespan_s;
  }
  if (s.requests > 0) s.slo_attainment = static_cast<double>(attained) / static_cast<double>(s.requests);
  return s;
}

}  // namespace clustersim
