/// @file fuzz_array_file.cpp
/// @brief libFuzzer target: arbitrary bytes as an initial-state file (ensemble.file) for
/// vigor::host::read_array_file.
///
/// The bytes are written to a scratch file named .npy when they start with NumPy's magic string,
/// else .csv, and read back. The file lies in $VIGOR_FUZZ_TMPDIR (run_fuzz.sh points it to a
/// tmpfs when there is one: thirty times more inputs per second than on a disk), else in the
/// working directory. Every input must give a table or an ArrayFileError; anything else
/// (another exception, a crash, a hang, a sanitizer report, a table whose size does not match its
/// shape) is a finding. Built and run by fuzz/run_fuzz.sh.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "host/job/array_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string stem = [] {
    const char* dir = std::getenv("VIGOR_FUZZ_TMPDIR");
    return std::string(dir && *dir ? dir : ".") + "/vigor-fuzz-input-" + std::to_string(getpid());
  }();
  const bool npy = size >= 6 && std::memcmp(data, "\x93NUMPY", 6) == 0;
  const std::string file = stem + (npy ? ".npy" : ".csv");
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
    if (!out) {
      std::perror(file.c_str());
      std::abort();
    }
  }
  try {
    const vigor::host::ArrayFile t = vigor::host::read_array_file(file);
    if (t.rows < 0 || t.cols < 0 ||
        (t.rows > 0 && t.data.size() != std::size_t(t.rows) * std::size_t(t.cols)) ||
        (!t.line.empty() && t.line.size() != std::size_t(t.rows)) ||
        (!t.names.empty() && t.names.size() != std::size_t(t.cols))) {
      std::fprintf(stderr, "fuzz_array_file: table of %lld x %d with %zu numbers\n",
                   static_cast<long long>(t.rows), t.cols, t.data.size());
      std::abort();
    }
  } catch (const vigor::host::ArrayFileError&) {
    // Refused with a reason: the expected outcome for a bad file.
  }
  return 0;
}
