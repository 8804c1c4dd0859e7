"""vigor.run and friends over the native module: jobs in, columns out (docs/python.md)."""
import json
import os
import sys
import time

import numpy as np

from . import _formula
from . import _vigor

_HERE = os.path.dirname(os.path.abspath(__file__))
# An installed package carries the headers a formula model's plugin is compiled against.
if os.path.isdir(os.path.join(_HERE, "include", "kernels")):
    os.environ.setdefault("VIGOR_INCLUDE_DIR", os.path.join(_HERE, "include"))


class JobError(ValueError):
    """Bad input: `key` is the job's key path that is wrong ("integrator.dt"), and the message is
    the command line's ("integrator.dt: must be > 0, got -0.1")."""

    def __init__(self, message, key=""):
        super().__init__(message)
        self.key = key


class RunError(RuntimeError):
    """The run failed for a reason other than its input (no device, a device error, I/O)."""


_vigor._set_errors(JobError, RunError)
_STATUS_NAMES = np.array([_vigor.status_name(code) for code in range(4)])


class Result:
    """What vigor.run returns. Tables are dicts of column name -> 1-D NumPy array, the columns of
    the results directory's CSV files in the same order and with the same values (float32 for
    the computed values of a precision "float" run, as the CSVs print them).

    sections        sections.csv: trajectory, crossing, t, the state at each recorded crossing
    final           final.csv: one row per trajectory (status as strings: ok, non-finite, ...)
    summary         summary.json, as a dict
    energy_series   energy_series.csv (per segment: the ensemble's max, median, p99 of |dH|)
    tangent_series  tangent_series.csv, or None without diagnostics.tangent
    invariants      invariants.csv, or None without a loop or parallelepiped ensemble
    """

    def __init__(self, tables):
        self.sections = _columns(tables["sections"])
        self.final = _columns(tables["final"])
        self.summary = tables["summary"]
        self.energy_series = _columns(tables["energy_series"])
        self.tangent_series = _columns(tables["tangent_series"]) or None
        self.invariants = _columns(tables["invariants"]) or None

    @property
    def state_names(self):
        """The model's state names, in column order."""
        names = list(self.final)
        return names[2:names.index("energy_error_max")]

    def __repr__(self):
        s = self.summary
        return (f"<vigor.Result {s.get('model')} / {s.get('integrator')}: "
                f"{s.get('trajectories')} trajectories x {s.get('steps')} steps, "
                f"{len(self.sections['trajectory'])} section points, "
                f"{s.get('wall_seconds', 0):.3g} s on {s.get('backend')}>")


def _columns(table):
    out = {}
    for name, values, kind in table:
        out[name] = _status_strings(values) if kind == "status" else values
    return out


def _status_strings(codes):
    """Status codes as final.csv's words, in a string dtype as wide as the longest word present
    ("ok" alone: 8 bytes a row, not the 80 of "newton-not-converged")."""
    if codes.size == 0:
        return codes.astype("<U2")
    present = np.nonzero(np.bincount(codes, minlength=len(_STATUS_NAMES)))[0]
    width = max(len(_STATUS_NAMES[k]) for k in present)
    return _STATUS_NAMES.astype(f"<U{width}")[codes]


def _job_argument(job):
    """(text or path, is_path) for the native module."""
    if isinstance(job, (str, os.PathLike)):
        return os.fspath(job), True
    if isinstance(job, dict):
        return json.dumps(_formula.jsonable(job), allow_nan=False), False
    raise TypeError(f"job must be a dict or the path of a JSON job file, got {type(job).__name__}")


def _states_argument(states):
    if states is None:
        return None
    try:
        a = np.asarray(states)
    except ValueError as e:  # ragged rows
        raise JobError(f"states: must be an (n, dim) array of numbers ({e})", "states") from None
    if a.ndim != 2:
        raise JobError(f"states: must be an (n, dim) array, got shape {a.shape}", "states")
    if a.dtype not in (np.float64, np.float32):
        if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
            raise JobError(f"states: must hold numbers, got dtype {a.dtype}", "states")
        a = a.astype(np.float64)
    return a  # float64 and float32 in any layout go to the engine's layout in one copy


def _choice(value, name, allowed):
    if value is None:
        return ""
    if value not in allowed:
        raise JobError(f"{name}: must be one of {', '.join(allowed)}, got {value!r}", name)
    return value


def run(job, *, states=None, backend=None, precision=None, threads=None, out=None,
        progress=None, force=False):
    """Run a job and return its results as NumPy columns (a Result).

    job        a dict with the JSON job schema, or the path of a JSON job file
    states     an (n, dim) array of initial states that replaces job["ensemble"]
    backend    None (the job's; "auto" when it names none: the GPU when there is one), "auto",
               "cpu" or "cuda" (overrides the job's, as --backend)
    precision  None (the job's), "double" or "float"
    threads    CPU threads (None: all)
    out        None: nothing is written; else the results directory, written exactly as by
               `vigor run --out` (then `force` allows replacing an existing one)
    progress   None: a bar (tqdm when installed) for runs longer than 2 s; False: none; True: a
               bar from the start
    The GIL is released while vigor integrates; Ctrl-C stops the run at the next segment end and
    raises KeyboardInterrupt. Raises JobError (bad input) or RunError.
    """
    text, is_path = _job_argument(job)
    backend = _choice(backend, "backend", ("auto", "cpu", "cuda"))
    precision = _choice(precision, "precision", ("double", "float"))
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise JobError(f"threads: must be an integer >= 1, got {threads!r}", "threads")
    out = "" if out is None else os.fspath(out)
    bar = _Progress(progress)
    try:
        tables = _vigor.run(text, is_path, _states_argument(states), backend, precision,
                            threads or 0, out, bool(force), bar)
    except JobError as e:
        if "--force" not in str(e):
            raise
        # The command line's advice, in this API's words.
        raise JobError(str(e).replace("--force", "force=True"), e.key) from None
    finally:
        bar.close()
    return Result(tables)


def validate(job, *, backend=None, precision=None):
    """Check a job as `vigor validate` does (raises JobError); returns what it would run."""
    text, is_path = _job_argument(job)
    return _vigor.validate(text, is_path, _choice(backend, "backend", ("auto", "cpu", "cuda")),
                           _choice(precision, "precision", ("double", "float")))


def models():
    """The models `vigor list` prints, as dicts (name, kind, dof, state_names, params, ...)."""
    return _vigor.models()


def integrators():
    """The integrators `vigor list` prints, as dicts (name, order, symplectic, explicit, ...)."""
    return _vigor.integrators()


def backends():
    """{"cpu": True, "cuda": bool[, "cuda_unavailable": why]}."""
    return _vigor.backends()


class _Progress:
    """Called by the run after every segment: a tqdm bar when tqdm is installed, else the
    command line's bar on stderr. The call itself is where Ctrl-C is noticed."""

    def __init__(self, mode):
        self.mode = mode
        self.t0 = time.monotonic()
        self.bar = None
        self.shown = False

    def __call__(self, done, total, crossings, elapsed, bar_text):
        if self.mode is False:
            return
        if self.mode is None and elapsed < 2.0:
            return
        if self.bar is None and not self.shown:
            try:
                from tqdm.auto import tqdm
                self.bar = tqdm(total=total, unit="step", unit_scale=True, desc="vigor")
            except ImportError:
                self.bar = False
        if self.bar:
            self.bar.update(done - self.bar.n)
            self.bar.set_postfix(crossings=crossings, refresh=False)
        else:
            sys.stderr.write("\r" + bar_text)  # the command line's bar, drawn by vigor itself
            sys.stderr.flush()
        self.shown = True

    def close(self):
        if self.bar:
            self.bar.close()
        elif self.shown:
            sys.stderr.write("\n")
