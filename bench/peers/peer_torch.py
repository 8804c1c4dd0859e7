"""PyTorch peers: the ensemble as batched tensors (one row per trajectory), leapfrog in a Python
loop over steps — what a PyTorch user writes.

  --variant eager    plain tensor operations, one kernel launch per operation.
  --variant compile  the step function under torch.compile (its default inductor backend fuses the
                     step's element-wise operations); the Python loop over steps stays.

Kernel time: the step loop on tensors already on the device (after a warm-up run, which for
`compile` includes compilation), synchronised. End-to-end: numpy in, to the device, the loop,
numpy out.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import workload  # noqa: E402


def main():
    a = workload.peer_args()
    import torch
    if a.device == "auto":
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        dev = torch.device("cuda" if a.device == "gpu" else "cpu")
    dtype = torch.float64 if a.precision == "fp64" else torch.float32
    h = a.dt
    half = 0.5 * h

    def step(q, p):
        x, y = q[:, 0], q[:, 1]
        p = p + half * torch.stack([-(x + 2.0 * x * y), -(y + x * x - y * y)], dim=1)
        q = q + h * p
        x, y = q[:, 0], q[:, 1]
        p = p + half * torch.stack([-(x + 2.0 * x * y), -(y + x * x - y * y)], dim=1)
        return q, p

    if a.variant == "compile":
        step = torch.compile(step)
    elif a.variant != "eager":
        raise SystemExit(f"unknown variant {a.variant}")

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    def run(x):
        q, p = x[:, :2].contiguous(), x[:, 2:].contiguous()
        for _ in range(a.steps):
            q, p = step(q, p)
        return torch.cat([q, p], dim=1)

    x0 = np.load(a.init)
    with torch.no_grad():
        xd = torch.as_tensor(x0, dtype=dtype, device=dev)
        run(xd[: min(len(xd), 1024)])  # warm-up (and compilation) on a slice
        run(xd)
        sync()
        kernel, e2e = [], []
        out = None
        for _ in range(a.repeats):
            xd = torch.as_tensor(x0, dtype=dtype, device=dev)
            sync()
            _, t = workload.timed(lambda: (run(xd), sync()))
            kernel.append(t)

            def whole():
                return run(torch.as_tensor(x0, dtype=dtype, device=dev)).cpu().numpy()

            out, t = workload.timed(whole)
            e2e.append(t)
    np.save(a.out, out.astype(np.float64))
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    workload.report(kernel, e2e, f"{dev.type}: {name}", f"torch {torch.__version__}")


if __name__ == "__main__":
    main()
