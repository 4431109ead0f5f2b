#include "sim/core/bounded_json.hpp"

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/core/json_reader.hpp"

namespace clustersim {
namespace {

using json = nlohmann::json;

// The offset of the first bracket opened more than kMaxJsonDepth deep (strings skipped).
std::size_t deepest_bracket(std::string_view text) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    }
  }
  return 0;
}

// nlohmann's DOM builder, with the JSON pointer of the current value and a depth limit.
class BoundedSax {
 public:
  BoundedSax(json& result, std::string_view text) : dom_(result, false), text_(text) {}

  bool null() { return scalar(dom_.null()); }
  bool boolean(bool v) { return scalar(dom_.boolean(v)); }
  bool number_integer(json::number_integer_t v) { return scalar(dom_.number_integer(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar(dom_.number_unsigned(v)); }
  bool number_float(json::number_float_t v, const json::string_t& s) { return scalar(dom_.number_float(v, s)); }
  bool string(json::string_t& v) { return scalar(dom_.string(v)); }
  bool binary(json::binary_t& v) { return scalar(dom_.binary(v)); }

  bool start_object(std::size_t n) { return open(false) && dom_.start_object(n); }
  bool key(json::string_t& k) {
    frames_.back().key = k;
    return dom_.key(k);
  }
  bool end_object() { return close(dom_.end_object()); }
  bool start_array(std::size_t n) { return open(true) && dom_.start_array(n); }
  bool end_array() { return close(dom_.end_array()); }

  bool parse_error(std::size_t position, const std::string& last_token, const nlohmann::detail::exception& e) {
    // `position` counts the characters read, one past the offending one; a number that overflows
    // is located at its first digit.
    std::size_t byte = position == 0 ? 0 : position - 1;
    if (e.id == 406 && !last_token.empty()) {
      const auto at = text_.rfind(last_token, byte);
      if (at != std::string_view::npos) byte = at;
    }
    // A syntax error is the document's (no value was read); an overflowing number is a value's.
    error_ = BoundedJsonError{byte, e.id == 406 ? path() : std::string(), reason_of(e)};
    return false;
  }

  std::optional<BoundedJsonError>& error() { return error_; }

 private:
  struct Frame {
    bool array = false;
    std::size_t index = 0;  // arrays: the element being read
    std::string key;        // objects: the key being read
  };

  std::string path() const {
    std::string p;
    for (const Frame& f : frames_) {
      if (f.array)
        p += "/" + std::to_string(f.index);
      else if (!f.key.empty())
        p += "/" + json_pointer_escape(f.key);
    }
    return p;
  }

  // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ...": the reason is
  // everything after the position (the caller states the position itself).
  static std::string reason_of(const nlohmann::detail::exception& e) {
    const std::string what = e.what();
    if (e.id == 406) {  // out_of_range: "number overflow parsing '1e400'"
      const auto open = what.find('\'');
      const auto close = what.rfind('\'');
      const std::string literal =
          open != std::string::npos && close > open ? what.substr(open + 1, close - open - 1) : "";
      return "the number " + literal + " is beyond the range of a double (about 1.8e308)";
    }
    const auto bracket = what.find("] ");
    const auto start = bracket == std::string::npos ? 0 : bracket + 2;
    const auto column = what.find("column ", start);
    const auto colon = what.find(": ", column == std::string::npos ? start : column);
    return colon == std::string::npos ? what.substr(start) : what.substr(colon + 2);
  }

  bool scalar(bool ok) {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return ok;
  }
  bool open(bool array) {
    if (frames_.size() >= kMaxJsonDepth) {
      error_ = BoundedJsonError{deepest_bracket(text_), path(),
                                "objects and arrays nested more than " + std::to_string(kMaxJsonDepth) +
                                    " deep (a spec or trace needs fewer than 10)"};
      return false;
    }
    frames_.push_back(Frame{array, 0, ""});
    return true;
  }
  bool close(bool ok) {
    frames_.pop_back();
    return scalar(ok);
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::string_view text_;
  std::vector<Frame> frames_;
  std::optional<BoundedJsonError> error_;
};

}  // namespace

BoundedJsonResult parse_bounded_json(std::string_view text) {
  BoundedJsonResult result;
  BoundedSax sax(result.value, text);
  const bool ok = json::sax_parse(text.begin(), text.end(), &sax);
  if (!ok || sax.error()) {
    result.error = sax.error() ? std::move(*sax.error()) : BoundedJsonError{0, "", "malformed JSON"};
    result.value = json();
  }
  return result;
}

}  // namespace clustersim
