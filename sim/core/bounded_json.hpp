#pragma once
// Parsing JSON a user typed, bounded: nesting deeper than kMaxJsonDepth is refused while parsing (a
// spec of 100,000 nested arrays crashed the recursive dump of an inline GPU), and a failure says
// where it is: the byte offset, the JSON pointer of the value being read, and the parser's whole
// reason ("syntax error while parsing value - invalid literal; last read: '#'", never just "'#'").
//
// Internal header (uses nlohmann::json).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace clustersim {

// Objects and arrays nested deeper than this are refused: specs and traces use fewer than 10.
inline constexpr std::size_t kMaxJsonDepth = 64;

struct BoundedJsonError {
  std::size_t byte = 0;  // offset into the text where parsing stopped
  std::string path;      // JSON pointer of the value too deep or beyond a double ("" for a syntax error)
  std::string reason;    // what is wrong, whole
};

struct BoundedJsonResult {
  nlohmann::json value;  // valid when !error
  std::optional<BoundedJsonError> error;
};

BoundedJsonResult parse_bounded_json(std::string_view text);

}  // namespace clustersim
