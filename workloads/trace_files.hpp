#pragma once
// The per-rank files of a multi-rank trace (Chakra, PyTorch profiler): which files a trace path names
// and which rank each file's name suggests. Internal to the trace readers.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim {

struct RankFile {
  std::string path;
  std::optional<int> rank_from_name;  // the last number in the file name, when the path named several files
};

// `path` is one of:
//  - a pattern containing "{rank}": the files for rank 0, 1, 2, ... up to the first one missing;
//  - a directory: its regular files whose names end with `extension` (".et", ".json"), ordered by the
//    last number in their name, then by name;
//  - a file: that file alone.
// Throws SpecError(path, "", ...) when nothing matches.
std::vector<RankFile> list_rank_files(const std::string& path, std::string_view extension);
// The same with several accepted extensions (".json", ".json.gz"): a directory's files ending with any.
std::vector<RankFile> list_rank_files(const std::string& path, std::span<const std::string_view> extensions);

// The bytes of a trace file, inflated when it is gzip-compressed (it starts with the gzip magic bytes
// 1f 8b; a plain file is returned as it is). Throws SpecError(path, "", ...) when the file cannot be
// read or its compressed stream is truncated or corrupt.
std::string read_trace_bytes(const std::string& path, std::string_view what);

// Assigns ranks 0..n-1 to n files: each file's `declared` rank where it has one (the trace's own
// metadata), else its rank_from_name, else its position. Throws SpecError when two files claim a rank
// or the ranks are not 0..n-1.
std::vector<int> assign_ranks(const std::vector<RankFile>& files, const std::vector<std::optional<int>>& declared);

}  // namespace clustersim
