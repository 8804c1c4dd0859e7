/// @file json_fields.hpp
/// @brief Key-path-aware readers of JSON values, shared by every parser of host/job/ (the job,
/// its ensemble block, checkpoints): each checks a value's type and range and throws JobError
/// naming the full key path and showing the offending value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/core/specs.hpp"

namespace vigor::host {

using Json = nlohmann::ordered_json;

namespace json {

/// "path.key" ("key" at the top level; an empty key is shown as "").
std::string join(const std::string& path, const std::string& key);
/// "path[i]".
std::string at(const std::string& path, std::size_t i);
/// "a, b, c" ("none" for an empty list).
std::string list(const std::vector<std::string>& names);
/// The shortest %g text that reads back as the same double (1e12, not 1e+12).
std::string format_number(double x);
/// A value as a message shows it (numbers as format_number, long values cut at 80 characters).
std::string show(const Json& v);
/// Throws JobError(path, what), with any byte that is not well-formed UTF-8 written as \xNN.
[[noreturn]] void fail(const std::string& path, const std::string& what);
/// Fails on the first key of `obj` not in `known` ("unknown <what> (known: ...)").
void check_keys(const Json& obj, const std::string& path, const std::vector<std::string>& known,
                const std::string& what);
/// The value of `key`, or nullptr.
const Json* find(const Json& obj, const std::string& key);
/// The value of `key`; fails with "is required (<hint>)" without one.
const Json& require(const Json& obj, const std::string& path, const std::string& key,
                    const std::string& hint);
const Json& object(const Json& v, const std::string& path);
const Json& array(const Json& v, const std::string& path);
std::string string_value(const Json& v, const std::string& path);
/// A finite number.
double number(const Json& v, const std::string& path);
/// An integer in [lo, hi] (an integral float such as 2e5 is accepted).
std::int64_t integer(const Json& v, const std::string& path, std::int64_t lo, std::int64_t hi);
std::uint64_t unsigned_integer(const Json& v, const std::string& path);
/// A number obeying a parameter's or option's rule (finite, > 0, >= 0, an integer >= 1).
double rule_value(const Json& v, const std::string& path, kernels::Rule rule);

}  // namespace json

}  // namespace vigor::host
