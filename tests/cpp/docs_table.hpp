#pragma once
// The table rows ("| ..." lines) of a docs/specs.md section, for the tests that keep a generated table
// (`clustersim schema <spec> --markdown`) equal to the docs.
#include <fstream>
#include <string>

namespace clustersim::testing {

// The first run of table lines after the line `heading` ("## Serving spec"); "" when none.
inline std::string specs_md_table(const std::string& heading) {
  std::ifstream in(std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/specs.md");
  std::string line;
  bool in_section = false;
  std::string table;
  while (std::getline(in, line)) {
    if (line == heading)
      in_section = true;
    else if (in_section && line.rfind("| ", 0) == 0)
      table += line + "\n";
    else if (in_section && !table.empty())
      break;
  }
  return table;
}

}  // namespace clustersim::testing
