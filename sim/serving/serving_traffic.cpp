#include "sim/serving/serving_traffic.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numbers>
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/bounded_json.hpp"
#include "sim/core/csv_table.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/named_table.hpp"
#include "sim/core/random_draw.hpp"
#include "sim/core/spec_document.hpp"

namespace clustersim {

namespace {

constexpr double kMaxTokens = static_cast<double>(std::int64_t{1} << 24);
constexpr std::int64_t kMaxPrefixGroups = std::int64_t{1} << 20;  // as traffic.prefix_groups

// splitmix64 (Steele, Lea, Flood 2014): independent seeds for the three streams from one seed.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The length distributions (traffic.prompt/output.distribution): the spec's choices are their names.
enum class LengthShape : std::uint8_t { fixed, uniform, lognormal, zipf };
struct NamedLengthShape {
  std::string_view name;
  LengthShape shape;
};
constexpr NamedLengthShape kLengthShapes[] = {{"fixed", LengthShape::fixed},
                                              {"uniform", LengthShape::uniform},
                                              {"lognormal", LengthShape::lognormal},
                                              {"zipf", LengthShape::zipf}};

class LengthSampler {
 public:
  explicit LengthSampler(const LengthSpec& spec)
      : spec_(spec),
        shape_(find_named(std::span<const NamedLengthShape>(kLengthShapes), spec.distribution, "length distribution")
                   .shape) {
    if (shape_ == LengthShape::zipf) {
      const std::int64_t n = spec.max - spec.min + 1;
      cdf_.resize(static_cast<std::size_t>(n));
      double sum = 0.0;
      for (std::int64_t k = 1; k <= n; ++k)
        cdf_[static_cast<std::size_t>(k - 1)] = sum += std::pow(static_cast<double>(k), -spec.zipf_s);
      for (double& c : cdf_)
        c /= sum;
    }
  }

  std::int32_t draw(std::mt19937_64& g) const {
    const double hi = spec_.max > 0 ? static_cast<double>(spec_.max) : kMaxTokens;
    const double lo = static_cast<double>(spec_.min);
    double v = 0.0;
    switch (shape_) {
      case LengthShape::uniform:
        v = lo + std::floor(random_draw::uniform01(g) * (hi - lo + 1.0));
        break;
      case LengthShape::lognormal:
        v = std::round(random_draw::lognormal(g, spec_.mean, spec_.cv));
        break;
      case LengthShape::zipf: {
        const double u = random_draw::uniform01(g);
        const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
        v = lo + static_cast<double>(std::min<std::ptrdiff_t>(it - cdf_.begin(), std::ssize(cdf_) - 1));
        break;
      }
      case LengthShape::fixed:
        v = std::round(spec_.mean);
        break;
    }
    return static_cast<std::int32_t>(std::clamp(v, lo, hi));
  }

 private:
  LengthSpec spec_;
  LengthShape shape_;
  std::vector<double> cdf_;
};

[[noreturn]] void bad_row(const std::string& file, int line, std::string_view column, const std::string& what) {
  throw SpecError(file, "line " + std::to_string(line) + "/column " + std::string(column), what);
}

// A cell's number; none when the cell is not one whole finite number.
std::optional<double> parse_number(std::string_view text) {
  std::string s(text);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

struct RowChecker {
  const std::string& file;
  double last_arrival_s = 0.0;

  double arrival(int line, std::optional<double> value, const std::string& shown) {
    const double v = value.value_or(-1.0);
    if (!value || v < 0.0) bad_row(file, line, "arrival_s", "expected a time in seconds >= 0, got " + shown);
    if (v < last_arrival_s)
      bad_row(file, line, "arrival_s",
              "arrival times must not decrease: " + shown + " after " + std::to_string(last_arrival_s));
    last_arrival_s = v;
    return v;
  }

  std::int32_t tokens(int line, std::string_view column, std::optional<double> value, const std::string& shown) {
    const double v = value.value_or(0.0);
    if (!value || v < 1.0 || v > kMaxTokens || v != std::floor(v))
      bad_row(file, line, column, "expected an integer number of tokens between 1 and 16777216, got " + shown);
    return static_cast<std::int32_t>(v);
  }

  // The optional prefix group of a row (prefix caching): an integer in 0 .. 2^20 - 1.
  std::int32_t prefix_id(int line, std::optional<double> value, const std::string& shown) {
    const double v = value.value_or(-1.0);
    if (!value || v < 0.0 || v >= kMaxPrefixGroups || v != std::floor(v))
      bad_row(file, line, "prefix_id",
              "expected a prefix group: an integer between 0 and " + std::to_string(kMaxPrefixGroups - 1) + ", got " +
                  shown);
    return static_cast<std::int32_t>(v);
  }
};

std::vector<RequestArrival> parse_csv(std::string_view text, const std::string& file) {
  std::vector<RequestArrival> out;
  RowChecker check{file};
  std::size_t columns[3] = {0, 0, 0};
  std::size_t header_size = 0;
  std::optional<std::size_t> prefix_column;  // optional: the prefix group of each request
  constexpr const char* kColumns[3] = {"arrival_s", "prompt_tokens", "output_tokens"};
  int line = 0;
  bool header = true;
  for (std::size_t pos = 0; pos <= text.size();) {
    const std::size_t eol = std::min(text.find('\n', pos), text.size());
    const std::string_view raw = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line;
    if (raw.empty() || raw == "\r") continue;
    const std::vector<std::string> cells = split_csv_line(raw);
    if (header) {
      for (int c = 0; c < 3; ++c) {
        const auto it = std::find(cells.begin(), cells.end(), kColumns[c]);
        if (it == cells.end())
          bad_row(file, line, kColumns[c], "expected a header naming arrival_s, prompt_tokens and output_tokens");
        columns[c] = static_cast<std::size_t>(it - cells.begin());
      }
      const auto prefix = std::find(cells.begin(), cells.end(), "prefix_id");
      if (prefix != cells.end()) prefix_column = static_cast<std::size_t>(prefix - cells.begin());
      header_size = cells.size();
      header = false;
      continue;
    }
    if (cells.size() < header_size)
      bad_row(file, line, kColumns[0],
              "expected " + std::to_string(header_size) + " cells, got " + std::to_string(cells.size()));
    RequestArrival a;
    const std::string& t = cells[columns[0]];
    a.arrival_s = check.arrival(line, parse_number(t), "\"" + t + "\"");
    const std::string& p = cells[columns[1]];
    a.prompt_tokens = check.tokens(line, kColumns[1], parse_number(p), "\"" + p + "\"");
    const std::string& o = cells[columns[2]];
    a.output_tokens = check.tokens(line, kColumns[2], parse_number(o), "\"" + o + "\"");
    if (prefix_column) {
      const std::string& g = cells[*prefix_column];
      a.prefix_group = check.prefix_id(line, parse_number(g), "\"" + g + "\"");
    }
    out.push_back(a);
  }
  if (header) throw SpecError(file, "line 1", "expected a header naming arrival_s, prompt_tokens and output_tokens");
  return out;
}

std::vector<RequestArrival> parse_jsonl(std::string_view text, const std::string& file) {
  std::vector<RequestArrival> out;
  RowChecker check{file};
  int line = 0;
  for (std::size_t pos = 0; pos <= text.size();) {
    const std::size_t eol = std::min(text.find('\n', pos), text.size());
    const std::string_view raw = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line;
    if (raw.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    // Bounded like every JSON a user gives (sim/core/bounded_json): a number beyond a double or a
    // value nested too deep is a bad row, not an exception of the parser's.
    BoundedJsonResult parsed = parse_bounded_json(raw);
    if (parsed.error)
      throw SpecError(file, "line " + std::to_string(line) + "/column " + std::to_string(parsed.error->byte + 1),
                      "malformed JSON" + (parsed.error->path.empty() ? "" : " at " + parsed.error->path) + ": " +
                          parsed.error->reason);
    nlohmann::json row = std::move(parsed.value);
    if (!row.is_object()) bad_row(file, line, "1", "expected an object, got " + describe_json(row));
    auto value = [&](const char* key) {
      if (!row.contains(key)) bad_row(file, line, key, std::string("expected the key \"") + key + "\"");
      const std::optional<double> v =
          row[key].is_number() ? std::optional<double>(row[key].get<double>()) : std::nullopt;
      return std::pair<std::optional<double>, std::string>{v, describe_json(row[key])};
    };
    RequestArrival a;
    auto [t, ts] = value("arrival_s");
    a.arrival_s = check.arrival(line, t, ts);
    auto [p, ps] = value("prompt_tokens");
    a.prompt_tokens = check.tokens(line, "prompt_tokens", p, ps);
    auto [o, os] = value("output_tokens");
    a.output_tokens = check.tokens(line, "output_tokens", o, os);
    if (row.contains("prefix_id")) {
      auto [g, gs] = value("prefix_id");
      a.prefix_group = check.prefix_id(line, g, gs);
    }
    out.push_back(a);
  }
  return out;
}

}  // namespace

std::vector<std::string> length_distribution_names() {
  return names_of(std::span<const NamedLengthShape>(kLengthShapes));
}

std::vector<RequestArrival> parse_request_trace(std::string_view text, const std::string& file, bool jsonl) {
  return jsonl ? parse_jsonl(text, file) : parse_csv(text, file);
}

std::vector<RequestArrival> read_request_trace(const std::string& path) {
  const std::string text = read_text_file(path, "request trace");
  return parse_request_trace(text, path, std::filesystem::path(path).extension() == ".jsonl");
}

std::vector<RequestArrival> make_traffic(const TrafficSpec& t) {
  if (!t.trace.empty()) return read_request_trace(t.trace);
  std::mt19937_64 arrivals(splitmix64(t.seed));
  std::mt19937_64 prompts(splitmix64(t.seed + 1));
  std::mt19937_64 outputs(splitmix64(t.seed + 2));
  const LengthSampler prompt(t.prompt);
  const LengthSampler output(t.output);
  // Prefix groups from a fourth stream (the other three are as without them): g - 1 of zipf on [1, groups].
  std::mt19937_64 groups(splitmix64(t.seed + 3));
  const LengthSampler group(
      LengthSpec{"zipf", 0.0, 0.0, 1, std::max<std::int64_t>(t.prefix_groups, 1), t.prefix_zipf_s});
  // Gamma inter-arrival times with mean 1 / rate and CV cv: shape 1 / cv^2, scale cv^2 / rate.
  const double shape = 1.0 / (t.cv * t.cv);
  const bool gamma = t.arrival == "gamma";
  std::vector<RequestArrival> out;
  if (t.requests > 0) out.reserve(static_cast<std::size_t>(t.requests));
  if (t.closed_loop()) {  // the engine sets each later arrival when a request leaves
    for (std::int64_t i = 0; i < t.requests; ++i)
      out.push_back({i < t.concurrency ? 0.0 : kClosedLoopPending_s, prompt.draw(prompts), output.draw(outputs)});
    if (t.think_time_s > 0.0) {  // a fifth stream: the clients' pauses (the other streams as without them)
      std::mt19937_64 pauses(splitmix64(t.seed + 4));
      for (RequestArrival& a : out)
        a.think_s = random_draw::exponential(pauses, 1.0 / t.think_time_s);
      // The first requests are sent after the clients' first pauses, taken in order of time (the engine
      // takes arrivals in order): the i-th at the i-th shortest; their lengths stay where they were drawn.
      const auto first = static_cast<std::size_t>(std::min<std::int64_t>(t.concurrency, std::ssize(out)));
      std::vector<double> starts(first);
      for (std::size_t i = 0; i < first; ++i)
        starts[i] = out[i].think_s;
      std::sort(starts.begin(), starts.end());
      for (std::size_t i = 0; i < first; ++i)
        out[i].arrival_s = starts[i];
    }
    return out;
  }
  double now = 0.0;
  for (;;) {
    now += gamma ? random_draw::gamma(arrivals, shape) / (shape * t.rate_rps)
                 : random_draw::exponential(arrivals, t.rate_rps);
    if (t.requests > 0 ? std::ssize(out) >= t.requests : now >= t.duration_s) break;
    out.push_back({now, prompt.draw(prompts), output.draw(outputs)});
    if (t.prefix_groups > 0) {
      out.back().prefix_group = group.draw(groups) - 1;
      out.back().prompt_tokens += static_cast<std::int32_t>(t.prefix_tokens);
    }
  }
  return out;
}

}  // namespace clustersim
