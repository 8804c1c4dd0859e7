/// @file fuzz_checkpoint.cpp
/// @brief libFuzzer target: arbitrary bytes as a checkpoint file for vigor::host::read_checkpoint
/// (`vigor run --resume` reads whatever a kill, a full disk or a user left in the directory).
///
/// The bytes are written as checkpoint.bin into a scratch directory ($VIGOR_FUZZ_TMPDIR, a tmpfs
/// when run_fuzz.sh finds one) and read back. Every input must give a Checkpoint whose arrays hold
/// whole values per trajectory, or a std::runtime_error naming the file; anything else (another
/// exception, a crash, a hang, a sanitizer report, an allocation beyond the file's size) is a
/// finding. Seeds: fuzz/seeds/checkpoints/ (real checkpoints of small runs). The checksum is
/// checked last, so mutated lengths, headers and arrays all reach the code that reads them.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "host/run/checkpoint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path dir = [] {
    const char* base = std::getenv("VIGOR_FUZZ_TMPDIR");
    std::filesystem::path d = std::string(base && *base ? base : ".");
    d /= "vigor-fuzz-checkpoint-" + std::to_string(getpid());
    std::filesystem::create_directories(d);
    return d;
  }();
  {
    std::ofstream out(dir / vigor::host::kCheckpointFile, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
    if (!out) {
      std::perror("fuzz_checkpoint: cannot write the input");
      std::abort();
    }
  }
  try {
    const vigor::host::Checkpoint c = vigor::host::read_checkpoint(dir);
    for (const auto& a : c.arrays)
      if (a.elem_bytes <= 0 || a.bytes.size() % std::size_t(a.elem_bytes) != 0 ||
          a.bytes.size() > size) {
        std::fprintf(stderr, "fuzz_checkpoint: array %s of %zu bytes in %d-byte values\n",
                     a.name.c_str(), a.bytes.size(), a.elem_bytes);
        std::abort();
      }
  } catch (const std::runtime_error&) {
    // Refused with a reason: the expected outcome for a damaged file.
  }
  return 0;
}
