#pragma once
// JSON files compiled into the library (presets, catalogue entries): see cmake/EmbedResources.cmake.
// Each layer that owns such files exposes them through a function returning a span of Resource.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim {

struct Resource {
  const char* name;  // file stem, the name users type ("dgx-h100-superpod")
  const char* path;  // path in the source tree, used in error messages
  const char* text;  // the file's JSON text
};

// The entry called `name`, or nullptr.
const Resource* find_resource(std::span<const Resource> table, std::string_view name);
// All names, sorted, for "unknown preset X; known: a, b, c" messages and listings.
std::vector<std::string> resource_names(std::span<const Resource> table);

}  // namespace clustersim
