"""ctest for the peer benchmark's driver (bench/peers/run_peers.py) at a tiny size: every C++ peer
and vigor run, agree with vigor's reference runs and land in the JSON and Markdown; the check flags a
wrong peer. Python peers that are not installed are reported missing, which is no failure.
Usage: test_run_peers.py VIGOR_BIN PEER_CPU_BIN. Exit 77 (skipped) without numpy."""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("numpy missing: skipped")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_peers  # noqa: E402


def main():
    vigor, peer_cpu = sys.argv[1], sys.argv[2]
    # The check: agreement to the tolerance passes, a perturbation of 1e-6 in FP64 does not.
    ref = np.array([[0.0, 0.1, 0.35, -0.2]])
    assert run_peers.check_final(ref + 1e-13, ref, "fp64")[1]
    assert not run_peers.check_final(ref + 1e-6, ref, "fp64")[1]
    assert run_peers.check_final(ref + 1e-6, ref, "fp32")[1]
    assert not run_peers.check_final(ref[:, :3], ref, "fp64")[1]
    assert not run_peers.check_final(ref, None, "fp64")[1]
    assert not run_peers.check_final(ref * np.nan, ref, "fp64")[1]

    with tempfile.TemporaryDirectory(prefix="vigor-peers-test-") as tmp:
        stem = os.path.join(tmp, "peers")
        peers = "vigor-cpu,vigor-cpu-se,vigor-cpu-bare,simd-ref,odeint,jax-vmap,jax-diffrax"
        r = subprocess.run([sys.executable, os.path.join(HERE, "run_peers.py"), "--vigor", vigor,
                            "--peer-cpu", peer_cpu, "--peers", peers, "--sizes", "300,1000",
                            "--steps", "200", "--repeats", "1", "--out", stem],
                           capture_output=True, text=True)
        print(r.stderr)
        assert r.returncode == 0, f"driver exited {r.returncode}"
        res = json.load(open(stem + ".json"))
        ran = {(x["peer"], x["precision"], x["n"]) for x in res["rows"] if "check" in x}
        for peer in ("vigor-cpu", "vigor-cpu-se", "vigor-cpu-bare", "simd-ref"):
            for prec in ("fp64", "fp32"):
                for n in (300, 1000):
                    assert (peer, prec, n) in ran, (peer, prec, n)
        for x in res["rows"]:
            assert "error" not in x, x
            assert x["check"]["ok"], x
            assert x["traj_steps_per_s"] > 0
        # Same algorithm, same precision: the SIMD reference is vigor's arithmetic, bit for bit, and
        # checking H only after the last step (bare) leaves the trajectory's bits alone.
        for x in res["rows"]:
            if x["peer"] == "simd-ref" and x["precision"] == "fp64":
                assert x["check"]["max_rel_diff"] == 0.0, x
            if x["peer"] == "vigor-cpu-bare":
                assert x["check"]["max_rel_diff"] == 0.0, x
        assert "| vigor-cpu-bare / simd-ref |" in open(stem + ".md").read()
        md = open(stem + ".md").read()
        assert "| vigor-cpu |" in md and "| simd-ref |" in md
        assert res["workload"]["flops_per_step"] == {"verlet": 21, "symplectic_euler_b": 17}
    print("ok")


if __name__ == "__main__":
    main()
