#pragma once
// CsvTable: a comma-separated table with a header row, read with the same error conventions as the
// JSON specs: a bad cell is a SpecError naming the file and "row N/column NAME" (N counts the file's
// lines, the header being row 1), so a user can open the file at the offending line.
//
// Plain CSV as the measurement tables we read write it: no quoting, '\r' line ends tolerated, blank
// lines skipped. A '#' starts no comment: vTrain's headers begin with "# GPUs".
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim {

// Splits one line at commas (a trailing comma gives a last empty cell; a trailing '\r' is dropped).
std::vector<std::string> split_csv_line(std::string_view line);

class CsvTable {
 public:
  // Parses `text`; `file` names it in errors. Throws SpecError when the header is missing or a row
  // has fewer cells than the header.
  static CsvTable parse(std::string_view text, std::string file);

  const std::string& file() const { return file_; }
  const std::vector<std::string>& header() const { return header_; }
  std::size_t rows() const { return rows_.size(); }
  // The file line of data row `row` (0-based), for messages.
  int line_of(std::size_t row) const { return lines_[row]; }
  // "row N/column NAME" of a cell, the location SpecErrors carry.
  std::string where(std::size_t row, std::string_view column) const;

  // The index of a column, or nullopt. column() throws SpecError(file, "column NAME") when absent.
  std::optional<std::size_t> find_column(std::string_view name) const;
  std::size_t column(std::string_view name) const;

  const std::string& cell(std::size_t row, std::string_view column) const;
  // The cell as a number (a SpecError names the cell when it is not one).
  double number(std::size_t row, std::string_view column) const;
  // The cell as an integer (a number with no fractional part).
  long long integer(std::size_t row, std::string_view column) const;

 private:
  std::string file_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<int> lines_;
};

}  // namespace clustersim
