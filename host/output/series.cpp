#include "host/output/series.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace vigor::host {

namespace {

/// The q-quantile by the nearest-rank rule (nth_element: O(n)); v must not be empty.
double quantile(std::vector<double>& v, double q) {
  const auto k = std::size_t(std::ceil(q * double(v.size()))) - 1;
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(k), v.end());
  return v[k];
}

}  // namespace

Stats summarize(std::vector<double> values, bool magnitude) {
  Stats s;
  std::size_t kept = 0;
  for (const double x : values) {
    if (std::isnan(x)) {
      ++s.nan;
      continue;
    }
    values[kept++] = magnitude ? std::abs(x) : x;
  }
  values.resize(kept);
  s.finite = std::int64_t(kept);
  if (values.empty()) {
    s.max = s.median = s.p99 = std::nan("");
    return s;
  }
  s.max = *std::max_element(values.begin(), values.end());
  s.median = quantile(values, 0.5);
  s.p99 = quantile(values, 0.99);
  return s;
}

void StatSeries::add(double t, std::vector<Stats> row) {
  if (row.size() != names_.size())
    throw std::logic_error("StatSeries::add: expected one Stats per quantity");
  t_.push_back(t);
  rows_.push_back(std::move(row));
}

std::vector<std::string> StatSeries::column_names() const {
  std::vector<std::string> c;
  for (const auto& n : names_)
    for (const char* s : {"_max", "_median", "_p99"}) c.push_back(n + s);
  return c;
}

std::vector<double> StatSeries::column(std::size_t index) const {
  std::vector<double> v;
  v.reserve(rows_.size());
  for (const auto& row : rows_) {
    const Stats& s = row.at(index / 3);
    v.push_back(index % 3 == 0 ? s.max : index % 3 == 1 ? s.median : s.p99);
  }
  return v;
}

void StatSeries::write_csv(const std::filesystem::path& file) const {
  std::FILE* f = std::fopen(file.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + file.string());
  std::fprintf(f, "segment,t");
  for (const auto& c : column_names()) std::fprintf(f, ",%s", c.c_str());
  std::fprintf(f, "\n");
  for (std::size_t r = 0; r < t_.size(); ++r) {
    std::fprintf(f, "%zu,%.17g", r, t_[r]);
    for (const Stats& s : rows_[r]) std::fprintf(f, ",%.17g,%.17g,%.17g", s.max, s.median, s.p99);
    std::fprintf(f, "\n");
  }
  if (std::fclose(f) != 0)
    throw std::runtime_error("cannot write " + file.string() + " (disk full?)");
}

}  // namespace vigor::host
