"""SymPy expressions as formulas (converted node by node), and vigor.plot on a Result."""
import numpy as np
import pytest

import vigor
from vigor import _formula
from conftest import henon_heiles_job


def test_sympy_expression_becomes_formula_text():
    sympy = pytest.importorskip("sympy")
    q0, q1, a = sympy.symbols("q0 q1 a")
    text = _formula.formula_text((q0**2 + q1**2) / 2 + a * q0**2 * q1 - q1**3 / 3)
    # Fully parenthesised, rationals as divisions, powers with ^ (the formula language's).
    assert "^" in text and "**" not in text and "(1/2)" in text and "(-1/3)" in text
    assert _formula.formula_text(sympy.sqrt(q0) + sympy.cos(q1)) in (
        "(sqrt(q0) + cos(q1))", "(cos(q1) + sqrt(q0))")
    with pytest.raises(vigor.JobError) as e:
        _formula.jsonable({"model": {"formula": {"potential": sympy.gamma(q0)}}})
    assert e.value.key == "model.formula.potential"


def test_sympy_formula_job_validates_like_its_text():
    sympy = pytest.importorskip("sympy")
    q0, q1, a, b = sympy.symbols("q0 q1 a b")
    potential = (q0**2 + q1**2) / 2 + a * q0**2 * q1 + b * q1**3
    job = henon_heiles_job()
    job["model"] = {"formula": {"dof": 2, "potential": potential},
                    "params": {"a": 1.0, "b": -1.0 / 3.0}}
    v = vigor.validate(job)
    assert v["model"] and v["trajectories"] >= 1


def test_numpy_values_and_paths_in_a_job_dict(tmp_path):
    job = henon_heiles_job(steps=np.int64(1000), output={"dir": tmp_path / "out"})
    job["integrator"]["dt"] = np.float64(0.01)
    v = vigor.validate(job)
    assert v["steps"] == 1000 and v["dt"] == 0.01 and v["output_dir"] == str(tmp_path / "out")


@pytest.mark.parametrize("where, key", [
    (lambda j: j["integrator"].update(dt=float("nan")), "integrator.dt"),
    (lambda j: j["model"].update(params={"a": np.inf}), "model.params.a"),
    (lambda j: j.update(ensemble={"states": [[0.0, 0.1, np.nan, 0.0]]}),
     "ensemble.states[0][2]"),
])
def test_numbers_json_cannot_hold_are_job_errors(where, key):
    job = henon_heiles_job()
    where(job)
    with pytest.raises(vigor.JobError) as e:
        vigor.run(job, progress=False)
    assert e.value.key == key


def test_negative_numbers_keep_their_sign_under_a_power():
    sympy = pytest.importorskip("sympy")
    q0, a = sympy.symbols("q0 a")
    # The formula language reads -2^x as -(2^x): a negative base must be parenthesised.
    assert _formula.formula_text(sympy.Integer(-2) ** q0) == "((-2)^q0)"
    assert "((-1)^a)" in _formula.formula_text(sympy.Pow(-1, a, evaluate=False) * q0**2 / 2)
    assert _formula.formula_text(sympy.Float(-0.5) ** q0) == "((-0.5)^q0)"


def test_plot_section_and_energy_on_axes():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import vigor.plot
    res = vigor.run(henon_heiles_job(), progress=False)
    fig, (ax1, ax2) = plt.subplots(1, 2)
    assert vigor.plot.section(res, ax=ax1) is ax1
    offsets = np.concatenate([c.get_offsets() for c in ax1.collections])
    assert len(offsets) == len(res.sections["q1"])  # every crossing drawn, none invented
    np.testing.assert_array_equal(np.sort(offsets[:, 0]), np.sort(res.sections["q1"]))
    assert vigor.plot.energy(res, ax=ax2) is ax2 and ax2.get_yscale() == "log"
    with pytest.raises(ValueError):
        vigor.plot.section(res, color_by="no_such_column")
    plt.close(fig)


def test_plot_figures_of_a_result_are_vigor_plots():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import vigor.plot
    res = vigor.run(henon_heiles_job(diagnostics={"tangent": True}), progress=False)
    figs = vigor.plot.figures(res)
    assert list(figs) == ["section", "chaos_map", "energy", "symplectic", "throughput"]
    loop = vigor.run({"model": {"name": "pendulum"}, "integrator": {"name": "verlet", "dt": 0.02},
                      "steps": 1000, "ensemble": {"loop": {
                          "center": [0.2, 0.0], "plane": ["q0", "p0"], "shape": "circle",
                          "radius": 0.05, "points": 32, "every": 250}}}, progress=False)
    assert "invariants" in vigor.plot.figures(loop)
    for f in list(figs.values()):
        plt.close(f)
    plt.close("all")


def test_sympy_formula_model_runs():
    sympy = pytest.importorskip("sympy")
    q0, q1, a, b = sympy.symbols("q0 q1 a b")
    job = henon_heiles_job(steps=2000)
    job["model"] = {"formula": {"name": "sympy_henon_heiles", "dof": 2,
                                "potential": (q0**2 + q1**2) / 2 + a * q0**2 * q1 + b * q1**3},
                    "params": {"a": 1.0, "b": -1.0 / 3.0}}
    res = vigor.run(job, backend="cpu", progress=False)
    builtin = vigor.run(henon_heiles_job(steps=2000), backend="cpu", progress=False)
    # The same system and scheme: the same orbits to round-off, hence the same crossings (the
    # formula's force is its own gradient, summed in another order than the built-in's).
    np.testing.assert_array_equal(res.final["crossings"], builtin.final["crossings"])
    np.testing.assert_allclose(res.final["q1"], builtin.final["q1"], atol=1e-9)
