#pragma once
// The purchase report: a design comparison as one self-contained HTML page (`clustersim compare
// --html FILE`, Python `compare(..., html=FILE)`). Inline CSS and SVG only, no script and no external
// resource, so it opens offline and prints. Sections: the designs side by side (the comparison's
// table with each step time's error bar), step time with its interval, where the step goes, time and
// cost to train with the Pareto front, cost per hour by part, power, the hottest links of each
// design, and the assumptions with their sources (calibration, software stack, network model, error
// bars, prices, power). Deterministic: the same comparison, the same bytes.
#include <string>

#include "sim/cost/design_comparison.hpp"

namespace clustersim {

std::string comparison_to_html(const DesignComparison& c);

}  // namespace clustersim
