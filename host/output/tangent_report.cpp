#include "host/output/tangent_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "kernels/tangent.hpp"

namespace vigor::host {

namespace {

/// Defects and det_error are sizes; the indicators are read with their sign.
bool by_magnitude(int slot) {
  return slot == kernels::kOutDefect || slot == kernels::kOutDefectRel ||
         slot == kernels::kOutDetError;
}

}  // namespace

Stats tangent_stats(const std::vector<double>& out, std::int64_t n, int slot) {
  const auto first = out.begin() + std::ptrdiff_t(slot) * std::ptrdiff_t(n);
  return summarize(std::vector<double>(first, first + std::ptrdiff_t(n)), by_magnitude(slot));
}

nlohmann::ordered_json tangent_summary(const std::vector<double>& out, std::int64_t n) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  // JSON has no NaN: a quantity with no finite entry is null.
  auto num = [](double x) { return std::isfinite(x) ? nlohmann::ordered_json(x) : nullptr; };
  for (std::size_t c = 0; c < kTangentColumns.size(); ++c) {
    const Stats s = tangent_stats(out, n, int(c));
    j[kTangentColumns[c]] = {
        {"max", num(s.max)}, {"median", num(s.median)}, {"p99", num(s.p99)}, {"nan", s.nan}};
  }
  return j;
}

TangentSeries::TangentSeries()
    : StatSeries(std::vector<std::string>(kTangentColumns.begin(), kTangentColumns.end())) {}

void TangentSeries::add(double t, const std::vector<double>& out, std::int64_t n) {
  std::vector<Stats> row;
  for (std::size_t c = 0; c < kTangentColumns.size(); ++c)
    row.push_back(tangent_stats(out, n, int(c)));
  StatSeries::add(t, std::move(row));
}

}  // namespace vigor::host
