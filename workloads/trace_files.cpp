#include "workloads/trace_files.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <system_error>

#include <zlib.h>

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
  const std::string_view one[] = {extension};
  return list_rank_files(path, one);
}

std::vector<RankFile> list_rank_files(const std::string& path, std::span<const std::string_view> extensions) {
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
      const auto ends_with = [&](std::string_view ext) {
        return name.size() >= ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0;
      };
      if (!entry.is_regular_file(ec) || std::none_of(extensions.begin(), extensions.end(), ends_with)) continue;
      files.push_back({entry.path().string(), last_number(entry.path().stem().string())});
    }
    std::sort(files.begin(), files.end(), [](const RankFile& a, const RankFile& b) {
      const int ra = a.rank_from_name.value_or(std::numeric_limits<int>::max());
      const int rb = b.rank_from_name.value_or(std::numeric_limits<int>::max());
      return ra != rb ? ra < rb : a.path < b.path;
    });
    std::string names;
    for (const auto ext : extensions)
      names += (names.empty() ? "" : " or ") + std::string(ext);
    if (files.empty()) throw SpecError(path, "", "the directory has no " + names + " trace files");
    return files;
  }
  if (fs::is_regular_file(path, ec)) {
    files.push_back({path, std::nullopt});
    return files;
  }
  throw SpecError(path, "", "no such trace file or directory");
}

std::string read_trace_bytes(const std::string& path, std::string_view what) {
  // gzopen reads plain files unchanged and inflates gzip streams (also several concatenated members).
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw SpecError(path, "", "cannot read the " + std::string(what));
  std::string bytes;
  constexpr unsigned kChunk = 1u << 20;
  for (;;) {
    const std::size_t at = bytes.size();
    bytes.resize(at + kChunk);
    const int n = gzread(f, bytes.data() + at, kChunk);
    if (n < 0) {
      int code = 0;
      const std::string why = gzerror(f, &code);
      gzclose(f);
      throw SpecError(path, "", "the " + std::string(what) + " is not a readable gzip stream: " + why);
    }
    bytes.resize(at + static_cast<std::size_t>(n));
    if (n == 0) break;
  }
  // A gzip stream cut short reads as end of data; gzclose_r then reports Z_BUF_ERROR.
  if (const int rc = gzclose(f); rc != Z_OK)
    throw SpecError(path, "", "the " + std::string(what) + " is a truncated or corrupt gzip file");
  return bytes;
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
