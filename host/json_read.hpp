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
}  // namespace job_detail

}  // namespace vigor::host
