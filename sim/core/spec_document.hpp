#pragma once
// Loading a spec document: a JSON file path or a preset name, parsed with clear errors, and
// `--set key.path=value` overrides applied before validation.
//
// Internal header (uses nlohmann::json).
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "sim/core/resources.hpp"

namespace clustersim {

struct SpecDocument {
  nlohmann::json json;
  std::string file;  // the path or "<preset path>" used in error messages
};

// `source` is a path to a JSON file (it contains '/' or ends in ".json", or exists) or the name of
// one of `presets`. `kind` ("cluster", "workload") appears in messages. Throws SpecError: a missing
// file, malformed JSON (with line and column), an unknown preset (listing the known ones).
SpecDocument load_spec_document(std::string_view source, std::span<const Resource> presets, std::string_view kind);

// The whole content of a file. Throws SpecError(path, "", "cannot read the <what>") when it cannot.
std::string read_text_file(const std::string& path, std::string_view what);

// load_spec_document, then every ("dotted.path", "value") override applied in order (--set).
SpecDocument load_spec_document(std::string_view source, std::span<const Resource> presets, std::string_view kind,
                                std::span<const std::pair<std::string, std::string>> overrides);

// Parses JSON text; `file` names it in errors.
SpecDocument parse_spec_text(std::string_view text, std::string file);

// A spec reader's two entry points, the same for every spec with presets (cluster, workload, serving):
// from JSON text (`file` names it in errors), and from a source (a file or one of `presets`) with its
// --set overrides; `parse(json, file)` turns the document into the spec.
template <typename Parse>
auto parse_spec_with(std::string_view text, const std::string& file, Parse&& parse) {
  const SpecDocument doc = parse_spec_text(text, file);
  return parse(doc.json, doc.file);
}
template <typename Parse>
auto load_spec_with(std::string_view source, std::span<const Resource> presets, std::string_view kind,
                    std::span<const std::pair<std::string, std::string>> overrides, Parse&& parse) {
  const SpecDocument doc = load_spec_document(source, presets, kind, overrides);
  return parse(doc.json, doc.file);
}

// Sets the value at a dotted path ("fabric.oversubscription") in `doc`, creating objects on the way.
// `value` is parsed as JSON when it is valid JSON (numbers, true, {"a":1}), otherwise kept as a
// string. Array elements are addressed by index ("groups.0.size").
void apply_override(SpecDocument& doc, std::string_view dotted_path, std::string_view value);

}  // namespace clustersim
