"""vigor from Python: ensembles of mechanical systems integrated with structure-preserving schemes
on the CPU's SIMD lanes or a GPU, with NumPy arrays in and out.

    import vigor
    res = vigor.run("examples/henon_heiles.json")
    res.sections["q1"], res.sections["p1"]        # the Poincare section, as NumPy arrays

The job is the command line's (docs/job.md), as a dict or a file; docs/python.md is this API.
"""
from ._api import (JobError, Result, RunError, backends, integrators, models, run,  # noqa: F401
                   validate)
from ._vigor import __version__  # noqa: F401

__all__ = ["run", "validate", "models", "integrators", "backends", "Result", "JobError",
           "RunError", "plot", "__version__"]


def __getattr__(name):
    # vigor.plot imports matplotlib only when used.
    if name == "plot":
        import importlib
        return importlib.import_module(".plot", __name__)
    raise AttributeError(f"module 'vigor' has no attribute {name!r}")
