"""The practical ceiling on a GPU: a minimal hand-written CUDA kernel (CuPy RawKernel), one thread
per trajectory, the state in registers for the whole run, the force reused between steps (as
vigor's Verlet does), SoA arrays so loads and stores coalesce. No energy monitor, no section.

  --variant rawkernel
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import workload  # noqa: E402

SOURCE = r"""
extern "C" __global__ void leapfrog(REAL* s, long long n, int steps, REAL h) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  REAL x = s[i], y = s[n + i], px = s[2 * n + i], py = s[3 * n + i];
  const REAL half = REAL(0.5) * h;
  REAL ax = -(x + REAL(2) * x * y), ay = -(y + x * x - y * y);
  for (int k = 0; k < steps; ++k) {
    px += half * ax;
    py += half * ay;
    x += h * px;
    y += h * py;
    ax = -(x + REAL(2) * x * y);
    ay = -(y + x * x - y * y);
    px += half * ax;
    py += half * ay;
  }
  s[i] = x; s[n + i] = y; s[2 * n + i] = px; s[3 * n + i] = py;
}
"""


def main():
    a = workload.peer_args()
    if a.variant != "rawkernel":
        raise SystemExit(f"unknown variant {a.variant}")
    import cupy as cp
    real = "double" if a.precision == "fp64" else "float"
    dtype = np.float64 if a.precision == "fp64" else np.float32
    kern = cp.RawKernel(SOURCE.replace("REAL", real), "leapfrog")
    x0 = np.load(a.init)
    n = len(x0)
    soa = np.ascontiguousarray(x0.T, dtype=dtype)  # (4, N): component-major
    threads = 256
    blocks = (n + threads - 1) // threads
    args = lambda d: (d, np.int64(n), np.int32(a.steps), dtype(a.dt))  # noqa: E731

    d = cp.asarray(soa)
    kern((blocks,), (threads,), args(d))  # warm-up: module load
    cp.cuda.Device().synchronize()
    kernel, e2e = [], []
    out = None
    for _ in range(a.repeats):
        d = cp.asarray(soa)
        cp.cuda.Device().synchronize()
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        kern((blocks,), (threads,), args(d))
        stop.record()
        stop.synchronize()
        kernel.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)

        def whole():
            dd = cp.asarray(soa)
            kern((blocks,), (threads,), args(dd))
            return cp.asnumpy(dd)

        out, t = workload.timed(whole)
        e2e.append(t)
    np.save(a.out, out.T.astype(np.float64))
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    workload.report(kernel, e2e, f"gpu: {name}", f"cupy {cp.__version__}")


if __name__ == "__main__":
    main()
