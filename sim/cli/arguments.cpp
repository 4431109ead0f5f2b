#include "sim/cli/arguments.hpp"

namespace clustersim::cli {

Arguments::Arguments(const std::vector<std::string>& args, const std::set<std::string>& valued,
                     const std::set<std::string>& flags) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0 || a == "--") {
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::optional<std::string> inline_value;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (flags.count(name) != 0) {
      if (inline_value) throw UsageError("option --" + name + " takes no value");
      flags_.insert(name);
    } else if (valued.count(name) != 0) {
      std::string v;
      if (inline_value) {
        v = *inline_value;
      } else {
        if (i + 1 >= args.size()) throw UsageError("option --" + name + " needs a value");
        v = args[++i];
      }
      values_.emplace(name, v);
      ordered_.emplace_back(name, v);
    } else {
      throw UsageError("unknown option --" + name);
    }
  }
}

std::optional<std::string> Arguments::value(const std::string& name) const {
  auto range = values_.equal_range(name);
  if (range.first == range.second) return std::nullopt;
  return std::prev(range.second)->second;  // the last one wins
}

std::string Arguments::required(const std::string& name) const {
  auto v = value(name);
  if (!v) throw UsageError("missing required option --" + name);
  return *v;
}

std::vector<std::string> Arguments::values(const std::string& name) const {
  std::vector<std::string> out;
  for (const auto& [n, v] : ordered_)
    if (n == name) out.push_back(v);
  return out;
}

}  // namespace clustersim::cli
