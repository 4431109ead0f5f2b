#pragma once
// A small command-line parser: "--name value", "--name=value", repeatable options and flags.
// Unknown options and missing values are usage errors (UsageError, exit status 2).
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace clustersim::cli {

class UsageError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

class Arguments {
public:
  // `valued`: options that take a value; `flags`: options that do not. Positional arguments are kept.
  Arguments(const std::vector<std::string>& args, const std::set<std::string>& valued,
            const std::set<std::string>& flags);

  bool flag(const std::string& name) const { return flags_.count(name) != 0; }
  std::optional<std::string> value(const std::string& name) const;
  std::string required(const std::string& name) const;
  std::vector<std::string> values(const std::string& name) const;  // a repeatable option, in order
  const std::vector<std::string>& positional() const { return positional_; }

private:
  std::multimap<std::string, std::string> values_;
  std::vector<std::pair<std::string, std::string>> ordered_;
  std::set<std::string> flags_;
  std::vector<std::string> positional_;
};

}  // namespace clustersim::cli
