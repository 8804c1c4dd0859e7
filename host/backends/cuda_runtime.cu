/// @file cuda_runtime.cu
/// @brief How many CUDA devices this process can use, why none when none, and which one it uses.
///
/// Asked once and cached: the answer does not change during a run, and on machines without a
/// driver each probe is slow. A CUDA build on a machine without a driver
/// (cudaErrorInsufficientDriver) or without a GPU (cudaErrorNoDevice), or any other failure of the
/// probe, counts as zero devices with a readable reason; `--backend auto` then picks the CPU and
/// GPU tests skip (DESIGN.md §3).
#include <cuda_runtime.h>

#include <string>

#include "host/backends/engine.hpp"

namespace vigor::host {

namespace {

struct DeviceProbe {
  int count = 0;
  std::string why;  ///< empty when count > 0
};

std::string describe(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

DeviceProbe probe_devices() {
  DeviceProbe p;
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaSuccess && n > 0) {
    p.count = n;
    return p;
  }
  if (e == cudaSuccess) {
    p.why = "the CUDA runtime reports 0 devices (check CUDA_VISIBLE_DEVICES)";
  } else if (e == cudaErrorNoDevice) {
    p.why = "no CUDA-capable GPU was found (" + describe(e) + ")";
  } else if (e == cudaErrorInsufficientDriver) {
    p.why = "no NVIDIA driver, or one too old for this CUDA runtime (" + describe(e) + ")";
  } else {
    p.why = "cudaGetDeviceCount failed (" + describe(e) + ")";
  }
  (void)cudaGetLastError();  // clear the runtime's last-error state after the failed probe
  return p;
}

const DeviceProbe& cached_probe() {
  static const DeviceProbe probe = probe_devices();  // thread-safe one-time initialisation
  return probe;
}

}  // namespace

int cuda_runtime_device_count(std::string* why) {
  const DeviceProbe& p = cached_probe();
  if (why != nullptr) *why = p.why;
  return p.count;
}

int cuda_device_for_process(int node_rank) {
  // Ranks of a node take the GPUs it exposes in turn (local rank k: GPU k mod count). With fewer
  // GPUs than ranks, ranks share a GPU rather than fall back to the CPU: every trajectory then
  // runs on the backend a one-process run uses, so the results stay identical to it. A launcher
  // that binds one GPU per task (Slurm's --gpus-per-task) exposes one: device 0.
  const int count = cached_probe().count;
  return count > 0 && node_rank > 0 ? node_rank % count : 0;
}

}  // namespace vigor::host
