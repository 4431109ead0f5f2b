#pragma once
// Text as XML / HTML character data or an attribute value: & < > " ' escaped (the topology's GraphML
// and SimGrid exports, the purchase report's HTML page).
#include <string>
#include <string_view>

namespace clustersim {

std::string xml_escape(std::string_view text);

}  // namespace clustersim
