/// @file fuzz_job.cpp
/// @brief libFuzzer target: arbitrary bytes as job-file text into vigor::host::parse_job.
///
/// Every input must either give a valid Job or be refused with a JobError that names a key (the
/// contract of DESIGN.md §4). Anything else is a finding: another exception type (it escapes and
/// aborts), a crash, a hang, a leak, an AddressSanitizer or UndefinedBehaviorSanitizer report, or a
/// Job that breaks the invariants checked below. A job that parses is parsed a second time with
/// --precision float, so the float-range checks see every valid job the fuzzer finds.
///
/// Built and run by fuzz/run_fuzz.sh (ctest fuzz.job_parser), starting from the example jobs.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "host/job.hpp"
#include "host/registry.hpp"

namespace {

using vigor::host::Job;
using vigor::host::JobError;

[[noreturn]] void broken(const std::string& what, const std::string& text) {
  std::fprintf(stderr, "fuzz_job: %s\njob: %s\n", what.c_str(), text.substr(0, 2000).c_str());
  std::abort();
}

/// What every Job that parse_job returns guarantees to the run loop.
void check_job(const Job& job, const std::string& text) {
  const vigor::host::ModelInfo* model = vigor::host::find_model(job.model);
  if (!model) broken("unknown model " + job.model + " accepted", text);
  if (!vigor::host::find_integrator(job.integrator))
    broken("unknown integrator " + job.integrator + " accepted", text);
  if (job.params.size() != model->params.size()) broken("wrong number of parameters", text);
  if (!(std::isfinite(job.dt) && job.dt > 0)) broken("dt not finite and > 0", text);
  if (job.steps < 1 || job.segment_steps < 1 || job.segment_steps > job.steps)
    broken("steps / segment_steps out of range", text);
  const vigor::host::Ensemble& e = job.ensemble;
  if (e.count < 1 || e.skipped < 0) broken("empty ensemble or negative skipped count", text);
  if (e.state.size() != std::size_t(e.count) * std::size_t(model->dim))
    broken("state array of the wrong size", text);
  for (double x : e.state)
    if (!std::isfinite(x)) broken("non-finite initial state accepted", text);
  if (job.has_section) {
    const auto& s = job.section;
    if (s.every < 1 || s.max_crossings < 0) broken("section counts out of range", text);
    if (s.coordinate < 0 || s.coordinate >= model->dim) broken("section coordinate out of range", text);
  }
  if (job.output_dir.empty()) broken("empty output directory", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const Job job = vigor::host::parse_job(text);
    check_job(job, text);
    if (job.precision == vigor::host::Precision::kDouble) {
      vigor::host::Overrides as_float;
      as_float.precision = "float";
      check_job(vigor::host::parse_job(text, as_float), text);
    }
  } catch (const JobError& err) {
    // Refused as bad input: the expected outcome, provided the message names a key.
    if (err.path().empty()) broken(std::string("JobError without a key path: ") + err.what(), text);
  }
  return 0;
}
