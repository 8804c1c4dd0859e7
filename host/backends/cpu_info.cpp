#include "host/backends/cpu_info.hpp"

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

}  // namespace vigor::host
