"""JAX peers: what a competent JAX user writes for an ensemble of leapfrog trajectories.

  --variant vmap     jit(vmap(one trajectory's lax.fori_loop leapfrog)) — vigor's verlet.
  --variant diffrax  diffrax.diffeqsolve with SemiImplicitEuler (y = (q, p): drift q += h p, then
                     kick p += h a(q_new)) under jit(vmap(...)), fixed step, only the final state
                     saved — vigor's symplectic_euler_b.

Kernel time: the jitted call on arrays already on the device, after a warm-up call (compilation),
with block_until_ready. End-to-end: host numpy in, device_put, the call, numpy out.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import workload  # noqa: E402


def main():
    a = workload.peer_args()
    if a.precision == "fp64":
        os.environ.setdefault("JAX_ENABLE_X64", "1")
    import jax
    import jax.numpy as jnp
    if a.precision == "fp64":
        jax.config.update("jax_enable_x64", True)
    platform = {"auto": None, "cpu": "cpu", "gpu": "gpu"}[a.device]
    dev = jax.devices(platform)[0] if platform else jax.devices()[0]
    dtype = jnp.float64 if a.precision == "fp64" else jnp.float32
    h = a.dt
    steps = a.steps

    def accel(q):
        x, y = q[0], q[1]
        return jnp.stack([-(x + 2.0 * x * y), -(y + x * x - y * y)])

    if a.variant == "vmap":
        def one(s):
            q, p = s[:2], s[2:]

            def body(_, qp):
                q, p = qp
                p = p + (0.5 * h) * accel(q)
                q = q + h * p
                p = p + (0.5 * h) * accel(q)
                return (q, p)

            q, p = jax.lax.fori_loop(0, steps, body, (q, p))
            return jnp.concatenate([q, p])

        fn = jax.jit(jax.vmap(one))
    elif a.variant == "diffrax":
        import diffrax

        def one(s):
            terms = (diffrax.ODETerm(lambda t, p, args: p),
                     diffrax.ODETerm(lambda t, q, args: accel(q)))
            sol = diffrax.diffeqsolve(terms, diffrax.SemiImplicitEuler(), t0=0.0, t1=steps * h,
                                      dt0=h, y0=(s[:2], s[2:]),
                                      saveat=diffrax.SaveAt(t1=True),
                                      stepsize_controller=diffrax.ConstantStepSize(),
                                      max_steps=steps + 1)
            q, p = sol.ys
            return jnp.concatenate([q[-1], p[-1]])

        fn = jax.jit(jax.vmap(one))
    else:
        raise SystemExit(f"unknown variant {a.variant}")

    x0 = np.load(a.init).astype(np.float64 if a.precision == "fp64" else np.float32)
    xd = jax.device_put(x0, dev)
    fn(xd).block_until_ready()  # warm-up: compilation
    kernel, e2e = [], []
    out = None
    for _ in range(a.repeats):
        xd = jax.device_put(x0, dev)
        xd.block_until_ready()
        r, t = workload.timed(lambda: fn(xd).block_until_ready())
        kernel.append(t)
        out, t = workload.timed(lambda: np.asarray(fn(jax.device_put(x0, dev))))
        e2e.append(t)
    np.save(a.out, np.asarray(out, dtype=np.float64))
    workload.report(kernel, e2e, f"{dev.platform}: {dev.device_kind}", f"jax {jax.__version__}")


if __name__ == "__main__":
    main()
