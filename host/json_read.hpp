/// @file json_read.hpp
/// @brief Key-path-aware JSON readers shared by the job parser and the ensemble generator.
///
/// Every reader throws JobError naming the full key path and showing the offending value; defined
/// in host/job.cpp. Host-internal: not part of the engine or kernel interfaces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vigor::host {

using Json = nlohmann::ordered_json;

struct Ensemble;
struct ModelInfo;

namespace job_detail {
std::string join(const std::string& path, const std::string& key);
std::string at(const std::string& path, std::size_t i);
std::string list(const std::vector<std::string>& names);
std::string format_number(double x);
std::string show(const Json& v);
[[noreturn]] void fail(const std::string& path, const std::string& what);
void check_keys(const Json& obj, const std::string& path, const std::vector<std::string>& known,
                const std::string& what);
const Json* find(const Json& obj, const std::string& key);
const Json& require(const Json& obj, const std::string& path, const std::string& key,
                    const std::string& hint);
const Json& object(const Json& v, const std::string& path);
const Json& array(const Json& v, const std::string& path);
double number(const Json& v, const std::string& path);
std::int64_t integer(const Json& v, const std::string& path, std::int64_t lo, std::int64_t hi);
std::uint64_t unsigned_integer(const Json& v, const std::string& path);

/// Fails on the first trajectory (smallest index) whose energy, in double, is not finite; with
/// `float_range`, also on one whose state components or energy lie beyond the range of a float.
/// The path is ensemble.states[i] for explicit rows, else ensemble.<kind> and the trajectory
/// index. One parallel O(n) pass. Defined in host/ensemble.cpp.
void check_initial_states(const Ensemble& e, const ModelInfo& model,
                          const std::vector<double>& params, bool float_range);
}  // namespace job_detail

}  // namespace vigor::host
