// A vigor program with one more model: the periodic Toda lattice of toda_lattice.hpp.
//
// register_model compiles the model's engines for the integrators listed (here Störmer–Verlet and
// Yoshida's 4th-order composition, in double and float) and adds it to vigor's registry; cli_main
// is the whole `vigor` command line (run, validate, list), so `toda run job.json` works like
// `vigor run` does for a built-in model.
#include <cstdio>
#include <exception>

#include "host/custom_model.hpp"
#include "toda_lattice.hpp"

#if defined(TODA_WITH_CUDA)
// toda_cuda.cu: the same model and integrators, compiled by nvcc (CMake option TODA_WITH_CUDA).
std::unique_ptr<vigor::host::Engine> toda_cuda_engines(const vigor::host::Integration& s,
                                                       const vigor::host::EngineResources& r);
#endif

int main(int argc, char** argv) {
  try {
#if defined(TODA_WITH_CUDA)
    vigor::host::register_model<toda::TodaLattice, vigor::kernels::StormerVerlet,
                                vigor::kernels::Yoshida4>(&toda_cuda_engines);
#else
    vigor::host::register_model<toda::TodaLattice, vigor::kernels::StormerVerlet,
                                vigor::kernels::Yoshida4>();
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return vigor::host::kExitBadInput;
  }
  return vigor::host::cli_main(argc, argv);
}
