#include "workloads/trace_files.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <system_error>

#include "sim/core/error.hpp"

namespace clustersim {
namespace {

constexpr std::string_view kRankPlaceholder = "{rank}";

std::optional<int> last_number(const std::string& file_name) {
  std::optional<long long> found;
  for (std::size_t i = 0; i < file_name.size();) {
    if (std::isdigit(static_cast<unsigned char>(file_name[i]))) {
      std::size_t j = i;
      long long v = 0;
      while (j < file_name.size() && std::isdigit(static_cast<unsigned char>(file_name[j]))) {
        if (v < std::numeric_limits<int>::max()) v = v * 10 + (file_name[j] - '0');
        ++j;
      }
      found = v;
      i = j;
    } else {
      ++i;
    }
  }
  if (!found || *found > std::numeric_limits<int>::max()) return std::nullopt;
  return static_cast<int>(*found);
}

}  // namespace

std::vector<RankFile> list_rank_files(const std::string& path, std::string_view extension) {
  namespace fs = std::filesystem;
  std::vector<RankFile> files;
  std::error_code ec;
  if (const auto at = path.find(kRankPlaceholder); at != std::string::npos) {
    for (int r = 0;; ++r) {
      std::string p = path;
      p.replace(at, kRankPlaceholder.size(), std::to_string(r));
      if (!fs::is_regular_file(p, ec)) break;
      files.push_back({p, r});
    }
    if (files.empty()) throw SpecError(path, "", "no trace file for rank 0 (the path's {rank} replaced by 0)");
    return files;
  }
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      const std::string name = entry.path().filename().string();
      if (!entry.is_regular_file(ec) || name.size() < extension.size() ||
          name.compare(name.size() - extension.size(), extension.size(), extension) != 0)
        continue;
      files.push_back({entry.path().string(), last_number(entry.path().stem().string())});
    }
    std::sort(files.begin(), files.end(), [](const RankFile& a, const RankFile& b) {
      const int ra = a.rank_from_name.value_or(std::numeric_limits<int>::max());
      const int rb = b.rank_from_name.value_or(std::numeric_limits<int>::max());
      return ra != rb ? ra < rb : a.path < b.path;
    });
    if (files.empty()) throw SpecError(path, "", "the directory has no " + std::string(extension) + " trace files");
    return files;
  }
  if (fs::is_regular_file(path, ec)) {
    files.push_back({path, std::nullopt});
    return files;
  }
  throw SpecError(path, "", "no such trace file or directory");
}

std::vector<int> assign_ranks(const std::vector<RankFile>& files, const std::vector<std::optional<int>>& declared) {
  const int n = static_cast<int>(files.size());
  std::vector<int> ranks(files.size());
  std::vector<int> owner(files.size(), -1);
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::optional<int> r = i < declared.size() ? declared[i] : std::nullopt;
    if (!r && files.size() > 1) r = files[i].rank_from_name;
    if (!r) r = static_cast<int>(i);
    if (*r < 0 || *r >= n)
      throw SpecError(files[i].path, "",
                      "rank " + std::to_string(*r) + " is outside 0.." + std::to_string(n - 1) + " (the trace has " +
                          std::to_string(n) + " rank files)");
    auto& o = owner[static_cast<std::size_t>(*r)];
    if (o != -1)
      throw SpecError(files[i].path, "",
                      "rank " + std::to_string(*r) + " is also the rank of " + files[static_cast<std::size_t>(o)].path);
    o = static_cast<int>(i);
    ranks[i] = *r;
  }
  return ranks;
}

}  // namespace clustersim
