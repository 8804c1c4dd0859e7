#include "host/tangent_report.hpp"

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

/// The q-quantile of sorted-in-place data by the nearest-rank rule (nth_element: O(n)).
double quantile(std::vector<double>& v, double q) {
  const auto k = std::size_t(std::ceil(q * double(v.size()))) - (v.empty() ? 0 : 1);
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(k), v.end());
  return v[k];
}

}  // namespace

Stats tangent_stats(const std::vector<double>& out, std::int64_t n, int slot) {
  Stats s;
  std::vector<double> v;
  v.reserve(std::size_t(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = out[std::size_t(slot) * std::size_t(n) + std::size_t(i)];
    if (std::isnan(x)) {
      ++s.nan;
      continue;
    }
    v.push_back(by_magnitude(slot) ? std::abs(x) : x);
  }
  s.finite = std::int64_t(v.size());
  if (v.empty()) {
    s.max = s.median = s.p99 = std::nan("");
    return s;
  }
  s.max = *std::max_element(v.begin(), v.end());
  s.median = quantile(v, 0.5);
  s.p99 = quantile(v, 0.99);
  return s;
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

void TangentSeries::add(double t, const std::vector<double>& out, std::int64_t n) {
  std::array<Stats, kTangentColumns.size()> row;
  for (std::size_t c = 0; c < row.size(); ++c) row[c] = tangent_stats(out, n, int(c));
  t_.push_back(t);
  rows_.push_back(row);
}

void TangentSeries::write_csv(const std::filesystem::path& file) const {
  std::FILE* f = std::fopen(file.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + file.string());
  std::fprintf(f, "segment,t");
  for (const char* c : kTangentColumns) std::fprintf(f, ",%s_max,%s_median,%s_p99", c, c, c);
  std::fprintf(f, "\n");
  for (std::size_t r = 0; r < t_.size(); ++r) {
    std::fprintf(f, "%zu,%.17g", r + 1, t_[r]);
    for (const Stats& s : rows_[r]) std::fprintf(f, ",%.17g,%.17g,%.17g", s.max, s.median, s.p99);
    std::fprintf(f, "\n");
  }
  if (std::fclose(f) != 0)
    throw std::runtime_error("cannot write " + file.string() + " (disk full?)");
}

}  // namespace vigor::host
