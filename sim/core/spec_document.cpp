#include "sim/core/spec_document.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/core/bounded_json.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/spec_source.hpp"

namespace clustersim {
namespace {

// The offset of the first byte of `text` that is not part of well-formed UTF-8 (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or npos when it all is.
std::size_t invalid_utf8_at(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto b = static_cast<unsigned char>(text[i]);
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (b < 0x80) {
      ++i;
      continue;
    } else if (b >= 0xC2 && b <= 0xDF) {
      n = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      n = 2;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      n = 3;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (i + n >= text.size()) return i;  // cut short
    for (std::size_t k = 1; k <= n; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      if (k == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF)) return i;
    }
    i += n + 1;
  }
  return std::string_view::npos;
}

// Line and column (1-based) of a byte offset, for parse errors.
std::string line_column(std::string_view text, std::size_t offset) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

constexpr std::uintmax_t kMaxInputFileBytes = std::uintmax_t{1} << 32;  // 4 GiB

}  // namespace

std::string read_text_file(const std::string& path, std::string_view what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  // A directory read as an empty stream ("malformed JSON"), a device like /dev/zero never ends.
  if (fs::is_directory(status))
    throw SpecError(path, "", "cannot read the " + std::string(what) + ": it is a directory, expected a file");
  if (fs::exists(status) && !fs::is_regular_file(status) && !fs::is_fifo(status))
    throw SpecError(path, "",
                    "cannot read the " + std::string(what) + ": it is not a regular file (a device or a socket)");
  if (fs::is_regular_file(status)) {
    const auto size = fs::file_size(path, ec);
    if (!ec && size > kMaxInputFileBytes)
      throw SpecError(path, "",
                      "cannot read the " + std::string(what) + ": it has " + std::to_string(size) +
                          " bytes, expected at most 4 GiB");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError(path, "", "cannot read the " + std::string(what));
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

SpecDocument parse_spec_text(std::string_view text, std::string file) {
  BoundedJsonResult parsed = parse_bounded_json(text);
  if (parsed.error) {
    // A syntax error is the document's; a value nested too deep or a number beyond a double is
    // named by its JSON pointer too.
    const BoundedJsonError& e = *parsed.error;
    throw SpecError(std::move(file), e.path, "malformed JSON at " + line_column(text, e.byte) + ": " + e.reason);
  }
  return SpecDocument{std::move(parsed.value), std::move(file)};
}

SpecDocument load_spec_document(std::string_view source, std::span<const Resource> presets, std::string_view kind) {
  if (looks_like_path(source)) {
    const std::string path(source);
    return parse_spec_text(read_text_file(path, std::string(kind) + " spec file"), path);
  }
  if (const Resource* r = find_resource(presets, source)) return parse_spec_text(r->text, r->path);
  std::string known;
  for (const auto& n : resource_names(presets))
    known += (known.empty() ? "" : ", ") + n;
  throw SpecError(std::string(source), "",
                  "no such file, and no " + std::string(kind) + " preset of that name (presets: " + known + ")");
}

SpecDocument load_spec_document(std::string_view source, std::span<const Resource> presets, std::string_view kind,
                                std::span<const std::pair<std::string, std::string>> overrides) {
  SpecDocument doc = load_spec_document(source, presets, kind);
  for (const auto& [path, value] : overrides)
    apply_override(doc, path, value);
  return doc;
}

void apply_override(SpecDocument& doc, std::string_view dotted_path, std::string_view value) {
  // Refused here, not when the spec is written out after the simulation (found by fuzz_spec_document).
  const std::pair<std::string_view, const char*> parts[] = {{dotted_path, "key path"}, {value, "value"}};
  for (const auto& [part, what] : parts)
    if (const std::size_t at = invalid_utf8_at(part); at != std::string_view::npos)
      throw SpecError("--set", "",
                      std::string("the ") + what + " is not valid UTF-8 (byte " + std::to_string(at) + " of " +
                          std::to_string(part.size()) + ")");
  // The override as typed, cut after 200 characters (a value can be 100,000 brackets long).
  std::string where = "--set " + std::string(dotted_path) + "=" + std::string(value);
  if (where.size() > 200) where = where.substr(0, 200) + "...";
  if (dotted_path.empty()) throw SpecError(where, "", "empty key path");
  BoundedJsonResult bounded = parse_bounded_json(value);
  nlohmann::json parsed = std::move(bounded.value);
  if (bounded.error) {
    // Not JSON: the value is the string as typed, unless it was JSON nested too deep.
    if (bounded.error->reason.starts_with("objects and arrays nested"))
      throw SpecError(where, bounded.error->path, bounded.error->reason);
    parsed = std::string(value);
  }

  nlohmann::json* node = &doc.json;
  std::string pointer;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = dotted_path.find('.', start);
    const std::string key(
        dotted_path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (key.empty()) throw SpecError(where, pointer, "empty key in path");
    const bool last = dot == std::string_view::npos;
    if (node->is_array()) {
      std::size_t index = 0;
      try {
        index = std::stoul(key);
      } catch (...) {
        throw SpecError(where, pointer, "expected an array index, got '" + key + "'");
      }
      if (index >= node->size())
        throw SpecError(where, pointer,
                        "index " + key + " is out of range (size " + std::to_string(node->size()) + ")");
      node = &(*node)[index];
    } else {
      if (node->is_null()) *node = nlohmann::json::object();
      if (!node->is_object()) throw SpecError(where, pointer, "cannot set a key inside " + describe_json(*node));
      node = &(*node)[key];
    }
    pointer += "/" + json_pointer_escape(key);
    if (last) break;
    start = dot + 1;
  }
  *node = std::move(parsed);
}

}  // namespace clustersim
