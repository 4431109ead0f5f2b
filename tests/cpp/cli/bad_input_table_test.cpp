// The bad-input catalogue (issue 19): every row of tests/cpp/cli/bad_inputs.json runs the clustersim
// command with a bad value, topology, trace, flag, dataset, calibration file or output, and must end
// with the stated exit status (2: bad input), every expected fragment of its message (the file, the
// JSON path or option, what was expected), nothing on stdout, no internal error, and the files it must
// not touch left as they were. One test per case, named after its row (and value).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_support.hpp"

namespace clustersim {
namespace {

namespace fs = std::filesystem;
using testing::read_file;

struct TableCase {
  std::string name;                  // the row's name, "/<index>" per value
  nlohmann::json row;                // the row of the table
  std::optional<std::string> value;  // {v}
};

const nlohmann::json& table() {
  static const nlohmann::json t = [] {
    std::ifstream in(std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/cpp/cli/bad_inputs.json");
    return nlohmann::json::parse(in);
  }();
  return t;
}

std::vector<TableCase> cases() {
  std::vector<TableCase> out;
  for (const auto& row : table().at("cases")) {
    const std::string name = row.at("name");
    if (!row.contains("values")) {
      out.push_back({name, row, std::nullopt});
      continue;
    }
    for (std::size_t i = 0; i < row.at("values").size(); ++i)
      out.push_back({name + "/" + std::to_string(i), row, row.at("values")[i].get<std::string>()});
  }
  return out;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

class BadInputTable : public ::testing::TestWithParam<TableCase> {};

TEST_P(BadInputTable, IsRefusedWithItsMessage) {
  const TableCase& c = GetParam();
  const nlohmann::json& row = c.row;
  std::string dir_template = ::testing::TempDir() + "clustersim_bad_XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template.data()), nullptr);
  const std::string tmp = dir_template;
  std::map<std::string, std::string> subst = {{"{tmp}", tmp},
                                              {"{cluster}", tmp + "/cluster.json"},
                                              {"{workload}", tmp + "/workload.json"},
                                              {"{src}", CLUSTERSIM_SOURCE_DIR},
                                              {"{data}", CLUSTERSIM_DATA_DIR},
                                              {"{cli}", CLUSTERSIM_CLI}};
  if (c.value) subst["{v}"] = *c.value;
  const auto sub = [&](std::string text) {
    for (const auto& [from, to] : subst)
      text = replace_all(std::move(text), from, to);
    return text;
  };
  for (const auto* files : {&table().at("fixtures"), row.contains("files") ? &row.at("files") : nullptr}) {
    if (files == nullptr) continue;
    for (auto it = files->begin(); it != files->end(); ++it)
      std::ofstream(tmp + "/" + it.key(), std::ios::binary) << sub(it.value().get<std::string>());
  }
  const std::string unchanged = row.contains("unchanged") ? sub(row.at("unchanged")) : "";
  const std::string before = unchanged.empty() ? "" : read_file(unchanged);

  std::string command =
      row.value("raw_command", false) ? sub(row.at("args")) : std::string(CLUSTERSIM_CLI) + " " + sub(row.at("args"));
  if (row.contains("setup")) command = sub(row.at("setup")) + " && " + command;
  const std::string out_path = row.value("stdout", tmp + "/stdout");
  command += " >" + out_path + " 2>" + tmp + "/stderr";
  SCOPED_TRACE(command);
  const int raw = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(raw)) << "killed by a signal";
  const int status = WEXITSTATUS(raw);
  const std::string err = read_file(tmp + "/stderr");
  const std::string out = row.contains("stdout") ? "" : read_file(out_path);

  const int expected_status = row.value("status", 2);
  EXPECT_EQ(status, expected_status) << err;
  const std::string& stream = row.value("stream", std::string("stderr")) == "stdout" ? out : err;
  for (const auto& fragment : row.at("expect"))
    EXPECT_NE(stream.find(sub(fragment)), std::string::npos) << "expected: " << sub(fragment) << "\nin: " << stream;
  EXPECT_EQ(err.find("internal error"), std::string::npos) << err;
  if (expected_status == 2 && row.value("stream", "") != "stdout" && !row.value("usage_on_stdout", false)) {
    EXPECT_TRUE(out.empty()) << out;
  }
  if (!unchanged.empty()) {
    EXPECT_EQ(read_file(unchanged), before) << unchanged << " was changed";
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);
}

// The catalogue covers what issue 19 asks: at least 200 cases.
TEST(BadInputTableSize, HasAtLeast200Cases) {
  EXPECT_GE(cases().size(), 200u);
}

std::string test_name(const ::testing::TestParamInfo<TableCase>& info) {
  std::string s;
  for (char ch : info.param.name)
    s += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return s;
}

void PrintTo(const TableCase& c, std::ostream* os) {
  *os << c.name;
}

INSTANTIATE_TEST_SUITE_P(Cli, BadInputTable, ::testing::ValuesIn(cases()), test_name);

}  // namespace
}  // namespace clustersim
