#include "host/backends/cpu_info.hpp"

#include <cstdio>
#include <fstream>
#include <string>

namespace vigor::host {

std::string cpu_model_name() {
  std::string model = "unknown CPU";
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(colon + 2);
      break;
    }
  }
  return model;
}

std::string cpu_device_name(int threads) {
  return cpu_model_name() + " (" + std::to_string(threads) + " threads)";
}

std::size_t host_available_memory() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::size_t kib = 0;
      if (std::sscanf(line.c_str() + 13, "%zu", &kib) == 1) return kib * 1024;
      return 0;
    }
  return 0;
}

}  // namespace vigor::host
