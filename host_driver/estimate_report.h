// How `n3 estimate` writes an Estimate (estimate_sim.h): the terminal table,
// the --json document, and the flat named figures a sweep's CSV row holds
// (one function, so a CSV row and a single run of the point compare).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "host_driver/estimate_sim.h"

namespace n3::cli {

std::string estimate_text(const Estimate& e, const HwConfig& hw);
std::string estimate_json(const Estimate& e, const HwConfig& hw);
// (column, value) in a fixed order; numbers in a fixed format, so the same
// inputs give byte-identical rows.
std::vector<std::pair<std::string, std::string>> estimate_figures(const Estimate& e);

}  // namespace n3::cli
