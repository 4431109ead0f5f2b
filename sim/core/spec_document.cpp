#include "sim/core/spec_document.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"

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

bool looks_like_path(std::string_view s) {
  return s.find('/') != std::string_view::npos || s.ends_with(".json") || std::filesystem::exists(std::string(s));
}

}  // namespace

std::string read_text_file(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError(path, "", "cannot read the " + std::string(what));
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

SpecDocument parse_spec_text(std::string_view text, std::string file) {
  try {
    return SpecDocument{nlohmann::json::parse(text.begin(), text.end()), std::move(file)};
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's message embeds its own position text; keep only the reason after the last ':'.
    std::string what = e.what();
    const auto colon = what.rfind(": ");
    const std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
    const std::size_t offset = e.byte == 0 ? 0 : e.byte - 1;
    throw SpecError(std::move(file), "", "malformed JSON at " + line_column(text, offset) + ": " + reason);
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond a double (1e400): nlohmann names the literal but not where it is.
    std::string what = e.what();
    const auto open = what.find('\'');
    const auto close = what.rfind('\'');
    const std::string literal =
        open != std::string::npos && close > open ? what.substr(open + 1, close - open - 1) : "";
    const std::size_t at = literal.empty() ? std::string_view::npos : text.find(literal);
    throw SpecError(std::move(file), "",
                    "malformed JSON" + (at == std::string_view::npos ? std::string() : " at " + line_column(text, at)) +
                        ": the number " + (literal.empty() ? std::string("there") : literal) +
                        " is beyond the range of a double (about 1.8e308)");
  }
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
  const std::string where = "--set " + std::string(dotted_path) + "=" + std::string(value);
  if (dotted_path.empty()) throw SpecError(where, "", "empty key path");
  nlohmann::json parsed = nlohmann::json::parse(value.begin(), value.end(), nullptr, false);
  if (parsed.is_discarded()) parsed = std::string(value);

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
