/// @file json_fields.cpp
/// @brief The key-path-aware JSON readers of host/job/json_fields.hpp.
#include "host/job/json_fields.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "host/errors.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::host {

namespace json {

std::string join(const std::string& path, const std::string& key) {
  // An empty key ({"": 1}) is written "" so that the path still shows it.
  const std::string shown = key.empty() ? std::string("\"\"") : key;
  return path.empty() ? shown : path + "." + shown;
}

std::string at(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string list(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string format_number(double x) {
  // The shortest %g form that reads back as the same double, with a C-style exponent tidied to
  // what people write in job files (1e12, not 1e+12).
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  std::string s = buf;
  const auto e = s.find('e');
  if (e == std::string::npos) return s;
  std::string mantissa = s.substr(0, e);
  std::string exponent = s.substr(e + 1);
  std::string sign;
  if (!exponent.empty() && (exponent[0] == '+' || exponent[0] == '-')) {
    if (exponent[0] == '-') sign = "-";
    exponent.erase(0, 1);
  }
  exponent.erase(0, std::min(exponent.find_first_not_of('0'), exponent.size() - 1));
  return mantissa + "e" + sign + exponent;
}

std::string show(const Json& v) {
  // JSON has no infinity, but a literal beyond the double range (1e999) parses to one, and
  // nlohmann would print it as null: say what happened instead.
  if (v.is_number_float() && !std::isfinite(v.get<double>()))
    return "a number beyond the range of a double";
  if (v.is_number_float()) return format_number(v.get<double>());
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  constexpr std::size_t kMaxShown = 80;
  if (s.size() > kMaxShown) s = s.substr(0, kMaxShown - 3) + "...";
  return s;
}

namespace {

/// `s` with every byte that is not part of well-formed UTF-8 written as \xNN: messages quote job
/// text and file contents (the parser's "last read", a CSV field), and stderr must stay text.
std::string printable(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = byte(i);
    const std::size_t len = c < 0x80   ? 1
                            : c < 0xC2 ? 0
                            : c < 0xE0 ? 2
                            : c < 0xF0 ? 3
                            : c < 0xF5 ? 4
                                       : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (std::size_t k = 1; ok && k < len; ++k) ok = (byte(i + k) & 0xC0) == 0x80;
    // No overlong forms, no UTF-16 surrogates, nothing above U+10FFFF.
    if (ok && len > 2) {
      const unsigned char d = byte(i + 1);
      ok = !(c == 0xE0 && d < 0xA0) && !(c == 0xED && d >= 0xA0) && !(c == 0xF0 && d < 0x90) &&
           !(c == 0xF4 && d >= 0x90);
    }
    if (ok) {
      out.append(s, i, len);
      i += len;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", unsigned(c));
      out += buf;
      ++i;
    }
  }
  return out;
}

}  // namespace

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw JobError(path, printable(what));
}

void check_keys(const Json& obj, const std::string& path, const std::vector<std::string>& known,
                const std::string& what) {
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (std::find(known.begin(), known.end(), it.key()) == known.end())
      fail(join(path, it.key()), "unknown " + what + " (known: " + list(known) + ")");
}

const Json* find(const Json& obj, const std::string& key) {
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

const Json& require(const Json& obj, const std::string& path, const std::string& key,
                    const std::string& hint) {
  const Json* v = find(obj, key);
  if (!v) fail(join(path, key), "is required (" + hint + ")");
  return *v;
}

const Json& object(const Json& v, const std::string& path) {
  if (!v.is_object()) fail(path, "must be an object, got " + show(v));
  return v;
}

const Json& array(const Json& v, const std::string& path) {
  if (!v.is_array()) fail(path, "must be an array, got " + show(v));
  return v;
}

std::string string_value(const Json& v, const std::string& path) {
  if (!v.is_string()) fail(path, "must be a string, got " + show(v));
  return v.get<std::string>();
}

double number(const Json& v, const std::string& path) {
  if (!v.is_number()) fail(path, "must be a finite number, got " + show(v));
  const double x = v.get<double>();
  if (!std::isfinite(x)) fail(path, "must be a finite number, got " + show(v));
  return x;
}

std::int64_t integer(const Json& v, const std::string& path, std::int64_t lo, std::int64_t hi) {
  double x = 0.0;
  if (v.is_number_unsigned()) {
    // Compare in the unsigned domain: values above INT64_MAX do not fit the signed result.
    if (v.get<std::uint64_t>() > std::uint64_t(hi))
      fail(path, "must be <= " + format_number(double(hi)) + ", got " + show(v));
    x = double(v.get<std::uint64_t>());
  } else if (v.is_number_integer()) {
    x = double(v.get<std::int64_t>());
  } else if (v.is_number_float()) {
    // An integral float (2e5) is accepted: people write large counts in exponent notation.
    x = v.get<double>();
    if (!std::isfinite(x) || x != std::floor(x)) fail(path, "must be an integer, got " + show(v));
  } else {
    fail(path, "must be an integer, got " + show(v));
  }
  if (x < double(lo)) fail(path, "must be >= " + format_number(double(lo)) + ", got " + show(v));
  if (x > double(hi)) fail(path, "must be <= " + format_number(double(hi)) + ", got " + show(v));
  return v.is_number_integer() ? v.get<std::int64_t>() : std::int64_t(x);
}

std::uint64_t unsigned_integer(const Json& v, const std::string& path) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) fail(path, "must be >= 0, got " + show(v));
  if (v.is_number_float()) {
    const double x = v.get<double>();
    if (!std::isfinite(x) || x != std::floor(x)) fail(path, "must be an integer, got " + show(v));
    if (x < 0) fail(path, "must be >= 0, got " + show(v));
    if (x >= 18446744073709551616.0) fail(path, "must be < 2^64, got " + show(v));
    return std::uint64_t(x);
  }
  fail(path, "must be an integer, got " + show(v));
}

double rule_value(const Json& v, const std::string& path, kernels::Rule rule) {
  const double x = number(v, path);
  switch (rule) {
    case kernels::Rule::kFinite:
      break;
    case kernels::Rule::kPositive:
      if (!(x > 0)) fail(path, "must be > 0, got " + show(v));
      break;
    case kernels::Rule::kNonNegative:
      if (!(x >= 0)) fail(path, "must be >= 0, got " + show(v));
      break;
    case kernels::Rule::kCount:
      if (x != std::floor(x)) fail(path, "must be an integer, got " + show(v));
      if (x < 1) fail(path, "must be >= 1, got " + show(v));
      break;
    case kernels::Rule::kStageCount:
      if (x != std::floor(x) || x < 1 || x > 8)
        fail(path, "must be an integer from 1 to 8, got " + show(v));
      break;
  }
  return x;
}

}  // namespace json

}  // namespace vigor::host
