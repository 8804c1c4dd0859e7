/// @file fuzz_job.cpp
/// @brief libFuzzer target: arbitrary bytes as job-file text into vigor::host::parse_job.
///
/// Every input must either give a valid Job or be refused with a JobError that names a key (the
/// contract of DESIGN.md §4). Anything else is a finding: another exception type (it escapes and
/// aborts), a crash, a hang, a leak, an AddressSanitizer or UndefinedBehaviorSanitizer report, or a
/// Job that breaks the invariants checked below. A job that parses is parsed a second time with
/// --precision float, so the float-range checks see every valid job the fuzzer finds.
///
/// Half of the mutations are libFuzzer's own (bytes); the other half are structural
/// (LLVMFuzzerCustomMutator below): the input is parsed as JSON and one value is replaced by an
/// edge-case number, a known name or another subtree, a member is renamed, added or removed, or an
/// array grows; so the fuzzer keeps producing well-formed jobs and gets deep into the ensemble and
/// section validation instead of stopping at the JSON syntax.
///
/// Built and run by fuzz/run_fuzz.sh (ctest fuzz.job_parser), starting from the example jobs.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "host/backends/registry.hpp"
#include "host/job/job.hpp"

namespace {

using vigor::host::Job;
using vigor::host::JobError;

[[noreturn]] void broken(const std::string& what, const std::string& text) {
  std::fprintf(stderr, "fuzz_job: %s\njob: %s\n", what.c_str(), text.substr(0, 2000).c_str());
  std::abort();
}

/// What every Job that parse_job returns guarantees to the run loop.
void check_job(const Job& job, const std::string& text) {
  const vigor::host::ModelInfo* model = vigor::host::find_model(job.integration.model);
  if (!model) broken("unknown model " + job.integration.model + " accepted", text);
  if (!vigor::host::find_integrator(job.integration.integrator))
    broken("unknown integrator " + job.integration.integrator + " accepted", text);
  if (job.integration.params.size() != model->params.size())
    broken("wrong number of parameters", text);
  if (!(std::isfinite(job.integration.dt) && job.integration.dt > 0))
    broken("dt not finite and > 0", text);
  if (job.steps < 1 || job.segment_steps < 1 || job.segment_steps > job.steps)
    broken("steps / segment_steps out of range", text);
  const vigor::host::Ensemble& e = job.ensemble;
  if (e.count < 1 || e.skipped < 0) broken("empty ensemble or negative skipped count", text);
  if (e.state.size() != std::size_t(e.count) * std::size_t(model->dim))
    broken("state array of the wrong size", text);
  for (double x : e.state)
    if (!std::isfinite(x)) broken("non-finite initial state accepted", text);
  if (job.has_section()) {
    const auto& s = job.integration.section;
    if (s.every < 1 || s.max_crossings < 0) broken("section counts out of range", text);
    if (s.coordinate < 0 || s.coordinate >= model->dim)
      broken("section coordinate out of range", text);
  }
  if (job.output_dir.empty()) broken("empty output directory", text);
}

// --- Structural mutations --------------------------------------------------------------------

using Json = nlohmann::ordered_json;
using Rng = std::minstd_rand;

/// Keys and names of job files (the dictionary's words, for the structural mutator).
const std::vector<std::string>& words() {
  static const std::vector<std::string> w = [] {
    std::vector<std::string> v{"model",
                               "name",
                               "params",
                               "integrator",
                               "dt",
                               "newton_iterations",
                               "gamma",
                               "beta",
                               "steps",
                               "segment_steps",
                               "ensemble",
                               "states",
                               "file",
                               "path",
                               "box",
                               "lo",
                               "hi",
                               "counts",
                               "random_box",
                               "count",
                               "seed",
                               "section_grid",
                               "energy",
                               "axes",
                               "fixed",
                               "loop",
                               "center",
                               "plane",
                               "shape",
                               "circle",
                               "ellipse",
                               "polygon",
                               "radius",
                               "radii",
                               "vertices",
                               "points",
                               "every",
                               "parallelepiped",
                               "edge",
                               "section",
                               "coordinate",
                               "value",
                               "direction",
                               "up",
                               "down",
                               "both",
                               "max_crossings",
                               "stroboscopic",
                               "escape_radius",
                               "newton_tolerance",
                               "diagnostics",
                               "tangent",
                               "backend",
                               "auto",
                               "cpu",
                               "cuda",
                               "precision",
                               "double",
                               "float",
                               "output",
                               "dir",
                               "hdf5",
                               "csv",
                               "states.csv",
                               "plain.csv",
                               "states.npy",
                               "",
                               "Pi0",
                               "R11"};
    for (const auto& m : vigor::host::model_infos()) {
      v.push_back(m.name);
      for (const auto& p : m.params) v.push_back(p.name);
    }
    for (const auto& i : vigor::host::integrator_infos()) v.push_back(i.name);
    for (int i = 0; i < 18; ++i) {
      v.push_back("q" + std::to_string(i));
      v.push_back("p" + std::to_string(i));
    }
    return v;
  }();
  return w;
}

/// Numbers at the edges of what the parser checks: signs, zero, tiny, huge, the caps (1e5 in the
/// fuzz build, 1e9, 2^20 loop points, 8192 DFT points), integer limits, float limits.
Json edge_number(Rng& rng) {
  static const double doubles[] = {0.0,
                                   -0.0,
                                   0.5,
                                   -1.0,
                                   1e-300,
                                   5e-324,
                                   1e-45,
                                   1e-38,
                                   3.5e38,
                                   1e300,
                                   1.7976931348623157e308,
                                   -1e308,
                                   0.125,
                                   6.283185307179586,
                                   1e-9,
                                   1e15};
  static const std::int64_t ints[] = {0,         1,        2,      3,          -1,
                                      16,        8192,     8193,   1 << 20,    (1 << 20) + 1,
                                      99999,     100000,   100001, 1000000000, 1000000000000000000,
                                      INT64_MAX, INT64_MIN};
  switch (rng() % 3) {
    case 0:
      return doubles[rng() % std::size(doubles)];
    case 1:
      return ints[rng() % std::size(ints)];
    default:
      return std::uint64_t(-1) - std::uint64_t(rng() % 3);
  }
}

Json random_value(Rng& rng, const Json& root) {
  switch (rng() % 8) {
    case 0:
      return nullptr;
    case 1:
      return rng() % 2 == 0;
    case 2:
      return words()[rng() % words().size()];
    case 3:
      return Json::array();
    case 4:
      return Json::object();
    case 5: {
      Json a = Json::array();
      for (unsigned n = rng() % 13; n > 0; --n) a.push_back(edge_number(rng));
      return a;
    }
    case 6: {  // a copy of some subtree of the job
      std::vector<const Json*> all{&root};
      for (std::size_t k = 0; k < all.size() && all.size() < 4096; ++k)
        if (all[k]->is_structured())
          for (const auto& child : *all[k]) all.push_back(&child);
      return *all[rng() % all.size()];
    }
    default:
      return edge_number(rng);
  }
}

/// Applies one structural mutation to `job`; false when nothing applied.
bool mutate_json(Json& job, Rng& rng) {
  std::vector<Json*> nodes{&job};
  for (std::size_t k = 0; k < nodes.size() && nodes.size() < 4096; ++k)
    if (nodes[k]->is_structured())
      for (auto& child : *nodes[k]) nodes.push_back(&child);
  Json& node = *nodes[rng() % nodes.size()];
  const Json copy_of_job = job;
  switch (rng() % 6) {
    case 0:  // replace the value
    case 1:
      node = node.is_number() && rng() % 2 ? edge_number(rng) : random_value(rng, copy_of_job);
      return true;
    case 2:  // remove a member or an element
      if (node.is_object() && !node.empty()) {
        auto it = node.begin();
        std::advance(it, rng() % node.size());
        node.erase(it);
        return true;
      }
      if (node.is_array() && !node.empty()) {
        node.erase(node.begin() + long(rng() % node.size()));
        return true;
      }
      return false;
    case 3:  // add a member (a known key) or an element
      if (node.is_object()) {
        node[words()[rng() % words().size()]] = random_value(rng, copy_of_job);
        return true;
      }
      if (node.is_array()) {
        node.push_back(node.empty() ? edge_number(rng) : node[rng() % node.size()]);
        return true;
      }
      return false;
    case 4:  // rename a member
      if (node.is_object() && !node.empty()) {
        Json renamed = Json::object();
        const std::size_t victim = rng() % node.size();
        std::size_t k = 0;
        for (auto it = node.begin(); it != node.end(); ++it, ++k)
          renamed[k == victim ? words()[rng() % words().size()] : it.key()] = it.value();
        node = std::move(renamed);
        return true;
      }
      return false;
    default:  // grow an array by copies of its elements (larger ensembles, more vertices)
      if (node.is_array() && !node.empty()) {
        for (unsigned n = 1 + rng() % 64; n > 0; --n) node.push_back(node[rng() % node.size()]);
        return true;
      }
      return false;
  }
}

}  // namespace

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                               std::size_t max_size, unsigned int seed) {
  Rng rng(seed);
  if (rng() % 2 == 0 || size > (std::size_t(1) << 16))
    return LLVMFuzzerMutate(data, size, max_size);
  Json job = Json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (job.is_discarded()) return LLVMFuzzerMutate(data, size, max_size);
  for (unsigned n = 1 + rng() % 3; n > 0; --n) mutate_json(job, rng);
  const std::string text = job.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const Job job = vigor::host::parse_job(text);
    check_job(job, text);
    if (job.integration.precision == vigor::host::Precision::kDouble) {
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
