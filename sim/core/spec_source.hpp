#pragma once
// Where a spec comes from: a file path, or the name of something compiled in (a preset, a dataset, a
// catalogue entry). One rule for every reader that takes either.
#include <string_view>

namespace clustersim {

// True when `source` names a file: it has a '/', ends in ".json", or exists on disk. Never throws: a
// name the OS refuses (too long, invalid) is not a file.
bool looks_like_path(std::string_view source);

// True when `path` exists on disk; false for a name the OS refuses (too long, a NUL byte), never throws.
bool path_exists(std::string_view path);

}  // namespace clustersim
