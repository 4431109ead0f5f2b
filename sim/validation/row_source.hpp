#pragma once
// RowSource: the records of a validation data file, read field by field, whatever the file's format.
//
// Formats (registry, by the name a dataset description gives in "data.format"):
//   csv           a header row, one run per line (vTrain's ground_truth_*.csv). A field is a column
//                 name; a row's id is its 0-based index among the data rows, 4 digits (vTrain numbers
//                 its validation configs the same way: config_val_single_0818.json is row 0818).
//   json_records  a JSON array of objects, or an object whose "records" is one (the shared
//                 published/end_to_end.json). A field is a JSON pointer into the record ("/model/layers");
//                 a record's id is its "id".
// Errors name the file and the cell: "row 12/column hidden size" or "/records/3/model/layers".
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace clustersim {

class RowSource {
 public:
  virtual ~RowSource() = default;
  virtual const std::string& file() const = 0;
  virtual std::size_t size() const = 0;
  virtual std::string id(std::size_t row) const = 0;
  // Where a field of a row is, for messages ("row 12/column micro batch", "/records/3/measured").
  virtual std::string where(std::size_t row, std::string_view field) const = 0;
  // The field as a number; nullopt when the source leaves it empty (an empty cell, a JSON null or a
  // missing key). Throws SpecError(file, where) when it is something else than a number.
  virtual std::optional<double> number(std::size_t row, std::string_view field) const = 0;
  // Checks that `field` names a column (csv) or is a JSON pointer (json_records); SpecError otherwise.
  virtual void check_field(std::string_view field, const std::string& description_file,
                           const std::string& description_path) const = 0;
};

struct RowFormat {
  const char* name;
  const char* summary;
  std::unique_ptr<RowSource> (*read)(const std::string& text, const std::string& file);
};

std::span<const RowFormat> row_formats();

}  // namespace clustersim
