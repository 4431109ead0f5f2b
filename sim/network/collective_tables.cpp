#include "sim/network/collective_tables.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/core/csv_table.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/spec_document.hpp"
#include "sim/network/nccl_tests.hpp"

namespace clustersim {
namespace {

double to_number(const std::string& text, const std::string& file, const std::string& where) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() || text.substr(used).find_first_not_of(" \r") == std::string::npos) return v;
  } catch (const std::logic_error&) {
  }
  throw SpecError(file, where, "expected a number, got \"" + text + "\"");
}

// nccl-tests output as vTrain stores it: a header, then size,count,type,time(ns),busbw,...
void read_nccl_tests_lut(const std::string& path, CollectiveTable& t) {
  std::istringstream in(read_text_file(path, "measurement file"));
  std::string line;
  std::getline(in, line);
  int row = 1;
  while (std::getline(in, line)) {
    ++row;
    if (line.empty() || line[0] == '#') continue;
    const auto cols = split_csv_line(line);
    if (cols.size() < 4) throw SpecError(path, "row " + std::to_string(row), "expected size,count,type,time(ns),...");
    t.bytes.push_back(to_number(cols[0], path, "row " + std::to_string(row) + " column 1"));
    t.time_s.push_back(to_number(cols[3], path, "row " + std::to_string(row) + " column 4") * 1e-9);
  }
}

// The rows of a record (`rec` at JSON path `at` of `path`): size_bytes with time_us, or with bus
// bandwidth only (busbw_GBps or inplace_busbw_GBps, converted with the record's n_ranks).
void read_record_rows(const nlohmann::json& rec, const std::string& path, const std::string& at, CollectiveTable& t) {
  {
    const int n = rec.value("n_ranks", 0);
    const auto& rows = rec.at("rows");
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const auto& r = rows[k];
      const std::string where = at + "/rows/" + std::to_string(k);
      if (!r.contains("size_bytes") || r["size_bytes"].is_null()) continue;
      if (!r["size_bytes"].is_number()) throw SpecError(path, where + "/size_bytes", "expected a number");
      const double bytes = r["size_bytes"].get<double>();
      double time_s = 0;
      if (r.contains("time_us") && r["time_us"].is_number()) {
        time_s = r["time_us"].get<double>() * 1e-6;
      } else {
        const char* key = r.contains("busbw_GBps") ? "busbw_GBps" : "inplace_busbw_GBps";
        if (!r.contains(key) || !r[key].is_number()) throw SpecError(path, where, "expected time_us or busbw_GBps");
        const double busbw = r[key].get<double>() * 1e9;
        if (busbw <= 0) continue;
        time_s = bus_factor(t.kind, n) * bytes / busbw;
      }
      t.bytes.push_back(bytes);
      t.time_s.push_back(time_s);
    }
  }
}

// A record of published/collectives.json.
void read_published(const std::string& path, const std::string& record, CollectiveTable& t) {
  const SpecDocument doc = parse_spec_text(read_text_file(path, "measurement file"), path);
  for (std::size_t i = 0; i < doc.json.size(); ++i) {
    if (doc.json[i].value("id", "") != record) continue;
    read_record_rows(doc.json[i], path, "/" + std::to_string(i), t);
    return;
  }
  throw SpecError(path, "", "no record with id \"" + record + "\"");
}

// Vidur's network CSV: one row per (size, num_workers) with time statistics in ms.
void read_vidur(const std::string& path, int workers, CollectiveTable& t) {
  std::istringstream in(read_text_file(path, "measurement file"));
  std::string line;
  std::getline(in, line);
  const auto header = split_csv_line(line);
  auto col = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw SpecError(path, "row 1", "missing column " + name);
    return static_cast<std::size_t>(it - header.begin());
  };
  const std::size_t c_median = col("time_stats.all_reduce.median"), c_workers = col("num_workers"),
                    c_size = col("size");
  int row = 1;
  std::map<double, std::vector<double>> by_size;
  while (std::getline(in, line)) {
    ++row;
    const auto cols = split_csv_line(line);
    if (cols.size() < header.size()) continue;
    const std::string where = "row " + std::to_string(row);
    if (static_cast<int>(to_number(cols[c_workers], path, where)) != workers) continue;
    by_size[to_number(cols[c_size], path, where)].push_back(to_number(cols[c_median], path, where) * 1e-3);
  }
  for (auto& [bytes, times] : by_size) {
    std::sort(times.begin(), times.end());
    t.bytes.push_back(bytes);
    t.time_s.push_back(times[times.size() / 2]);
  }
}

}  // namespace

NetworkDatasets load_network_datasets(const std::string& datasets_path, const std::string& data_dir) {
  const SpecDocument doc = parse_spec_text(read_text_file(datasets_path, "dataset file"), datasets_path);
  JsonReader r(doc.json, datasets_path);
  r.optional_string("description");
  NetworkDatasets out;
  JsonReader profiles = r.object("profiles");
  for (auto it = doc.json.at("profiles").begin(); it != doc.json.at("profiles").end(); ++it) {
    JsonReader pr = profiles.object(it.key());
    NetworkProfile p = ideal_network_profile();
    p.name = it.key();
    p.nccl_protocols = true;  // the tables measured NCCL: its protocols are part of what is fitted
    p.description = pr.optional_string("description").value_or("");
    const auto& gpus = pr.array("gpus");
    for (const auto& g : gpus)
      p.gpus.push_back(g.get<std::string>());
    pr.finish();
    out.profiles.push_back(std::move(p));
  }
  profiles.finish();
  const auto& arr = r.array("tables");
  std::vector<CollectiveTable>& tables = out.tables;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    JsonReader e = r.element("tables", i);
    CollectiveTable t;
    t.id = e.string("id");
    std::vector<std::string> names;
    for (const auto& p : out.profiles)
      names.push_back(p.name);
    t.profile = e.choice("profile", names);
    t.role = e.choice("role", {"fit", "validate"});
    t.source = e.string("source");
    t.cluster = e.string("cluster");
    if (e.has("set")) {
      const auto& set = e.array("set");
      for (const auto& kv : set)
        t.overrides.push_back(kv.get<std::string>());
    }
    t.ranks = e.string("ranks");
    t.kind = parse_collective_kind(e.string("op"));
    t.algorithm = e.optional_string("algorithm").value_or("auto");
    t.system = e.optional_string("system").value_or(t.id);
    const std::string format = e.choice("format", {"nccl_tests_lut", "published_collectives", "vidur_csv", "inline"});
    if (format == "inline") {
      // The rows are in the dataset file itself (copied from the source named by `source`).
      if (!e.has("rows")) e.fail("rows", "required key is missing (the measured rows of an inline table)");
      e.array("rows");
      e.integer("n_ranks", 1);
      read_record_rows(doc.json.at("tables").at(i), datasets_path, "/tables/" + std::to_string(i), t);
      e.finish();
      if (t.bytes.empty()) e.fail_here("the table has no rows");
      tables.push_back(std::move(t));
      continue;
    }
    const std::string path = data_dir + "/" + e.string("path");
    if (format == "nccl_tests_lut") {
      read_nccl_tests_lut(path, t);
    } else if (format == "published_collectives") {
      read_published(path, e.string("record"), t);
    } else {
      read_vidur(path, static_cast<int>(e.integer("num_workers", 2)), t);
    }
    e.finish();
    if (t.bytes.empty()) e.fail_here("the table has no rows");
    tables.push_back(std::move(t));
  }
  r.finish();
  return out;
}

}  // namespace clustersim
