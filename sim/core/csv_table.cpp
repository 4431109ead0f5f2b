#include "sim/core/csv_table.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/core/error.hpp"

namespace clustersim {

std::vector<std::string> split_csv_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<std::string> cells;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      cells.emplace_back(line.substr(start));
      return cells;
    }
    cells.emplace_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

CsvTable CsvTable::parse(std::string_view text, std::string file) {
  CsvTable t;
  t.file_ = std::move(file);
  int line_number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    std::vector<std::string> cells = split_csv_line(line);
    if (t.header_.empty()) {
      t.header_ = std::move(cells);
      continue;
    }
    if (cells.size() < t.header_.size())
      throw SpecError(t.file_, "row " + std::to_string(line_number),
                      "expected " + std::to_string(t.header_.size()) + " cells (as the header), got " +
                          std::to_string(cells.size()));
    t.rows_.push_back(std::move(cells));
    t.lines_.push_back(line_number);
  }
  if (t.header_.empty()) throw SpecError(t.file_, "row 1", "expected a header row of column names");
  return t;
}

std::string CsvTable::where(std::size_t row, std::string_view column) const {
  return "row " + std::to_string(lines_[row]) + "/column " + std::string(column);
}

std::optional<std::size_t> CsvTable::find_column(std::string_view name) const {
  const auto it = std::find(header_.begin(), header_.end(), name);
  if (it == header_.end()) return std::nullopt;
  return static_cast<std::size_t>(it - header_.begin());
}

std::size_t CsvTable::column(std::string_view name) const {
  if (const auto index = find_column(name)) return *index;
  throw SpecError(file_, "column " + std::string(name), "required column is missing from the header");
}

const std::string& CsvTable::cell(std::size_t row, std::string_view name) const {
  return rows_.at(row)[column(name)];
}

double CsvTable::number(std::size_t row, std::string_view name) const {
  const std::string& text = cell(row, name);
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (std::isfinite(v) && text.find_first_not_of(' ', used) == std::string::npos) return v;
  } catch (const std::logic_error&) {
  }
  throw SpecError(file_, where(row, name), "expected a number, got \"" + text + "\"");
}

long long CsvTable::integer(std::size_t row, std::string_view name) const {
  const double v = number(row, name);
  if (v != std::floor(v) || std::fabs(v) > 9.0e15)
    throw SpecError(file_, where(row, name), "expected an integer, got \"" + cell(row, name) + "\"");
  return static_cast<long long>(v);
}

}  // namespace clustersim
