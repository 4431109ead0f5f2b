#include "sim/validation/row_source.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "sim/core/csv_table.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/spec_document.hpp"

namespace clustersim {
namespace {

class CsvRows final : public RowSource {
 public:
  explicit CsvRows(CsvTable table) : table_(std::move(table)) {}

  const std::string& file() const override { return table_.file(); }
  std::size_t size() const override { return table_.rows(); }
  std::string id(std::size_t row) const override {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04zu", row);
    return buf;
  }
  std::string where(std::size_t row, std::string_view field) const override { return table_.where(row, field); }
  std::optional<double> number(std::size_t row, std::string_view field) const override {
    const std::string& cell = table_.cell(row, field);
    if (cell.find_first_not_of(' ') == std::string::npos) return std::nullopt;
    return table_.number(row, field);
  }
  void check_field(std::string_view field, const std::string& description_file,
                   const std::string& description_path) const override {
    if (table_.find_column(field)) return;
    std::string known;
    for (const auto& c : table_.header())
      known += (known.empty() ? "" : ", ") + c;
    throw SpecError(description_file, description_path,
                    "no column \"" + std::string(field) + "\" in " + table_.file() + " (columns: " + known + ")");
  }

 private:
  CsvTable table_;
};

class JsonRecords final : public RowSource {
 public:
  JsonRecords(nlohmann::json records, std::string file, std::string base)
      : records_(std::move(records)), file_(std::move(file)), base_(std::move(base)) {}

  const std::string& file() const override { return file_; }
  std::size_t size() const override { return records_.size(); }
  std::string id(std::size_t row) const override {
    const auto& r = records_[row];
    if (r.contains("id") && r["id"].is_string()) return r["id"].get<std::string>();
    throw SpecError(file_, base_ + "/" + std::to_string(row) + "/id", "expected a string id for every record");
  }
  std::string where(std::size_t row, std::string_view field) const override {
    return base_ + "/" + std::to_string(row) + std::string(field);
  }
  std::optional<double> number(std::size_t row, std::string_view field) const override {
    const nlohmann::json::json_pointer pointer{std::string(field)};
    const auto& r = records_[row];
    if (!r.contains(pointer) || r.at(pointer).is_null()) return std::nullopt;
    const auto& v = r.at(pointer);
    if (!v.is_number()) throw SpecError(file_, where(row, field), "expected a number, got " + describe_json(v));
    return v.get<double>();
  }
  void check_field(std::string_view field, const std::string& description_file,
                   const std::string& description_path) const override {
    try {
      const nlohmann::json::json_pointer pointer{std::string(field)};
      (void)pointer;
    } catch (const nlohmann::json::exception&) {
      throw SpecError(description_file, description_path,
                      "expected a JSON pointer into a record (\"/model/layers\"), got \"" + std::string(field) + "\"");
    }
  }

 private:
  nlohmann::json records_;
  std::string file_;
  std::string base_;  // JSON pointer of the records array
};

std::unique_ptr<RowSource> read_csv(const std::string& text, const std::string& file) {
  return std::make_unique<CsvRows>(CsvTable::parse(text, file));
}

std::unique_ptr<RowSource> read_json_records(const std::string& text, const std::string& file) {
  SpecDocument doc = parse_spec_text(text, file);
  if (doc.json.is_array()) return std::make_unique<JsonRecords>(std::move(doc.json), file, "");
  if (doc.json.is_object() && doc.json.contains("records") && doc.json["records"].is_array())
    return std::make_unique<JsonRecords>(std::move(doc.json["records"]), file, "/records");
  throw SpecError(file, "", "expected an array of records or an object with a \"records\" array");
}

constexpr RowFormat kFormats[] = {
    {"csv", "a header row, one run per line; fields are column names; ids are 0-based row indices", &read_csv},
    {"json_records", "an array of objects (or {\"records\": [...]}); fields are JSON pointers; ids are \"id\"",
     &read_json_records},
};

}  // namespace

std::span<const RowFormat> row_formats() {
  return kFormats;
}

}  // namespace clustersim
