#!/usr/bin/env python3
"""vigor.plot: the figures of `vigor plot`, from a results directory or from Python.

From Python (docs/python.md), on a Matplotlib axes of your own or a new one:

    vigor.plot.section(res, ax=None, color_by=None, axes=None)   the section of a vigor.Result
    vigor.plot.energy(res, ax=None)                             its energy-error series
    vigor.plot.figures(res)                      every figure below, as {name: Figure}

As a program (what `vigor plot` runs; one copy of the figures for both):

    python3 python/vigor/plot.py OUT_DIR [--out PLOT_DIR] [--svg] [--axes X,Y]
                                  [--color-by NAME] [--max-points N] [--dpi N] [--no-wrap]

Reads what `vigor run` wrote into OUT_DIR (summary.json and the CSVs; results.h5 through h5py when
the CSVs are absent) and writes into PLOT_DIR (default OUT_DIR/plots), each figure only when its
data exists:

  section.png     Poincare section (or stroboscopic / loop samples): every recorded crossing in the
                  (q, p) plane of the first degree of freedom other than the section coordinate
                  (--axes X,Y for any two state names), coloured by trajectory, or by the chaos
                  indicator of its trajectory (MEGNO, else Lyapunov) when final.csv has one, or
                  by time for loop / parallelepiped samples (--color-by overrides: trajectory,
                  t, or any numeric final.csv column).
  chaos_map.png   chaos indicator of each trajectory placed at its first crossing; at its initial
                  point when the run is read from results.h5 (its /initial) and the ensemble is a
                  section_grid over the plotted axes; a histogram when no crossing was recorded.
  energy.png      histogram over trajectories of max |H - H0|, beside the per-segment series of its
                  max / median / 99th percentile (energy_series.csv) when present.
  symplectic.png  tangent-map diagnostics: histograms of symplectic_defect_rel and |det_error|, and
                  the defect's max / median against time (tangent_series.csv).
  invariants.png  loop / parallelepiped ensembles: relative change of area, Poincare integral
                  invariant or phase volume against time (invariants.csv).
  throughput.png  the run's facts from summary.json: backend, device, precision, sizes, timings.

PNG always (--dpi, default 200), SVG too with --svg (scatter points are rasterised so SVGs stay
small). More than --max-points crossings (default 2e6) are thinned to every k-th row,
deterministically, and the title says so. Angle coordinates of the pendulum models are wrapped to
[-pi, pi) on the section axes unless --no-wrap.

One line per file written on stdout. Exit status: 0 success, 2 bad input (message `error: ...`),
3 the plots could not be written. Needs numpy and matplotlib (any version from Debian 12's
numpy 1.24 / matplotlib 3.6 on).
"""

import argparse
import collections
import json
import math
import os
import re
import sys
import warnings

try:
    import numpy as np
    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib import colors as mcolors
    from matplotlib.lines import Line2D

    _IMPORT_ERROR = None
except ImportError as _e:  # reported by main(); the pure-Python helpers stay importable
    _IMPORT_ERROR = _e

MISSING_MATPLOTLIB = ("error: vigor plot needs Python 3 with matplotlib "
                      "(Debian: apt-get install python3-matplotlib)")

INDICATORS = ("megno", "lyapunov", "sali", "gali2")
DISPLAY_NAMES = {"megno": "MEGNO", "lyapunov": "Lyapunov exponent", "sali": "SALI",
                 "gali2": "GALI2"}
TANGENT_COLUMNS = ("symplectic_defect", "symplectic_defect_rel", "det_error") + INDICATORS
NON_STATE_COLUMNS = {"trajectory", "crossing", "t", "energy_error_max", "crossings", "status",
                     "momentum_error_max", "newton_residual_max"} | set(TANGENT_COLUMNS)
STATUS_CODES = {0: "ok", 1: "non-finite", 2: "escaped", 3: "newton-not-converged"}
# Coordinates that are angles: wrapped to [-pi, pi) on section axes (vigor writes them unwrapped).
ANGLE_COORDINATES = {"pendulum": ("q0",), "driven_pendulum": ("q0",),
                     "double_pendulum": ("q0", "q1")}
MEGNO_RANGE = (0.0, 8.0)
CSV_BLOCK_BYTES = 16 << 20
H5_CHUNK_ROWS = 1 << 20


class UsageError(Exception):
    """Bad input: exit 2."""


class OutputError(Exception):
    """The plots cannot be written: exit 3."""


# ----------------------------------------------------------------------------------- readers


class CsvTable:
    """A vigor CSV: header names, numeric columns read with numpy's C loader in large blocks."""

    def __init__(self, path):
        self.path = path
        try:
            with open(path, "r", encoding="ascii", errors="replace") as f:
                header = f.readline()
        except OSError as e:
            raise UsageError(f"{path}: cannot read: {e.strerror}") from None
        self.columns = [c.strip() for c in header.strip().split(",")] if header.strip() else []
        if not self.columns:
            raise UsageError(f"{path}: empty file (no header)")

    def index(self, name):
        try:
            return self.columns.index(name)
        except ValueError:
            raise UsageError(f"{self.path}: no column '{name}' "
                             f"(columns: {', '.join(self.columns)})") from None

    def count_rows(self):
        """Data rows (lines after the header), counted without parsing."""
        lines, last = 0, b"\n"
        with self._open_binary() as f:
            while True:
                block = f.read(CSV_BLOCK_BYTES)
                if not block:
                    break
                lines += block.count(b"\n")
                last = block[-1:]
        if last != b"\n":
            lines += 1
        return max(lines - 1, 0)

    def iter_chunks(self, names):
        """Yield {name: float array} for successive blocks of rows."""
        cols = [self.index(n) for n in names]
        with self._open_binary() as f:
            f.readline()
            rest, row = b"", 0
            while True:
                block = f.read(CSV_BLOCK_BYTES)
                data = rest + block
                if block:
                    cut = data.rfind(b"\n") + 1
                    data, rest = data[:cut], data[cut:]
                if data.strip():
                    arr = self._parse(data, cols, row)
                    row += arr.shape[0]
                    yield {n: arr[:, i] for i, n in enumerate(names)}
                if not block:
                    break

    def read(self, names):
        """Whole numeric columns as {name: float array}."""
        parts = list(self.iter_chunks(names))
        if not parts:
            return {n: np.zeros(0) for n in names}
        return {n: np.concatenate([p[n] for p in parts]) for n in names}

    def read_text(self, name):
        col = self.index(name)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return np.loadtxt(self.path, delimiter=",", skiprows=1, usecols=[col], dtype=str,
                                  ndmin=1, comments=None)
        except (OSError, ValueError) as e:
            raise UsageError(f"{self.path}: cannot read column '{name}': {e}") from None

    def _open_binary(self):
        try:
            return open(self.path, "rb")
        except OSError as e:
            raise UsageError(f"{self.path}: cannot read: {e.strerror}") from None

    def _parse(self, data, cols, first_row):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # A list of lines parses about twice as fast as a StringIO of the same text.
                return np.loadtxt(data.decode("ascii", errors="replace").splitlines(),
                                  delimiter=",", usecols=cols, ndmin=2, dtype=float,
                                  comments=None)
        except ValueError as e:
            where = f" (rows counted from data row {first_row + 1})" if first_row else ""
            raise UsageError(f"{self.path}: cannot parse: {e}{where}") from None


class H5Table:
    """A group of results.h5 (one 1-D dataset per CSV column), read like a CsvTable."""

    def __init__(self, group, label):
        self.group, self.path = group, label
        keys = list(group.keys())
        order = group.attrs.get("columns") if hasattr(group, "attrs") else None
        if order is not None:
            order = [o.decode() if isinstance(o, bytes) else str(o) for o in order]
            self.columns = [c for c in order if c in keys] + [c for c in keys if c not in order]
        else:
            self.columns = _canonical_column_order(keys)

    def index(self, name):
        if name not in self.columns:
            raise UsageError(f"{self.path}: no dataset '{name}' "
                             f"(datasets: {', '.join(self.columns)})")
        return self.columns.index(name)

    def count_rows(self):
        return int(self.group[self.columns[0]].shape[0]) if self.columns else 0

    def iter_chunks(self, names):
        for n in names:
            self.index(n)
        total = self.count_rows()
        for lo in range(0, total, H5_CHUNK_ROWS):
            hi = min(lo + H5_CHUNK_ROWS, total)
            yield {n: np.asarray(self.group[n][lo:hi], dtype=float) for n in names}

    def read(self, names):
        for n in names:
            self.index(n)
        return {n: np.asarray(self.group[n][...], dtype=float) for n in names}

    def read_text(self, name):
        self.index(name)
        codes = np.asarray(self.group[name][...]).astype(int)
        return np.array([STATUS_CODES.get(int(c), f"code {int(c)}") for c in codes])


def _natural_key(name):
    m = re.match(r"([A-Za-z_]+?)(\d*)$", name)
    prefix, digits = (m.group(1), m.group(2)) if m else (name, "")
    rank = {"q": 0, "p": 1}.get(prefix, 2)
    return (rank, prefix, int(digits) if digits else -1, name)


def _canonical_column_order(keys):
    """CSV column order for HDF5 groups listed alphabetically: leading, state names, the rest."""
    lead = [k for k in ("trajectory", "crossing", "t") if k in keys]
    state = sorted((k for k in keys if k not in NON_STATE_COLUMNS), key=_natural_key)
    trail = [k for k in ("energy_error_max", "crossings", "status", "momentum_error_max",
                         "newton_residual_max") + TANGENT_COLUMNS if k in keys]
    return lead + state + trail


def read_summary(path):
    try:
        with open(path, "r", encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {e.strerror}") from None
    return parse_summary(text, path)


def parse_summary(text, label):
    try:
        summary = json.loads(text)
    except ValueError as e:
        raise UsageError(f"{label}: not valid JSON: {e}") from None
    if not isinstance(summary, dict) or "model" not in summary or "integrator" not in summary:
        raise UsageError(f"{label}: not a vigor summary (no 'model' and 'integrator')")
    return summary


def open_h5(path):
    try:
        import h5py  # only needed for output directories without CSVs
    except ImportError:
        raise UsageError(f"{path}: reading results.h5 needs h5py (Debian: apt-get install "
                         "python3-h5py), or the CSV outputs") from None
    try:
        return h5py.File(path, "r")
    except OSError as e:
        raise UsageError(f"{path}: cannot open: {e}") from None


class Run:
    """What one output directory holds: summary, tables (CSV or HDF5), optional series."""

    def __init__(self, out_dir):
        if not os.path.exists(out_dir):
            raise UsageError(f"{out_dir}: no such directory")
        if not os.path.isdir(out_dir):
            raise UsageError(f"{out_dir}: not a directory (expected the output directory of "
                             "`vigor run`)")
        self.dir = out_dir
        self._h5 = None
        if os.path.exists(self._path("summary.json")):
            self.summary = read_summary(self._path("summary.json"))
        elif self.h5() is not None and "summary" in self.h5().attrs:
            text = self.h5().attrs["summary"]
            self.summary = parse_summary(text.decode() if isinstance(text, bytes) else str(text),
                                         self._path("results.h5") + ":summary")
        else:
            raise UsageError(f"{out_dir}: not a vigor output directory (no summary.json)")
        self.job = self.summary.get("job") or {}
        self.final = self._table("final.csv", "final")
        if self.final is None:
            raise UsageError(f"{out_dir}: no final.csv (and no results.h5 holding /final)")
        self.sections = self._table("sections.csv", "sections")
        self.tangent_series = self._series("tangent_series.csv")
        self.energy_series = self._series("energy_series.csv")
        self.invariants = self._optional_csv("invariants.csv")
        self.state_names = state_names(self.final.columns)
        self._columns = {}

    def column(self, name):
        """A numeric column of the final table (cached)."""
        if name not in self._columns:
            self._columns[name] = self.final.read([name])[name]
        return self._columns[name]

    def initial_grid(self, x, y):
        """Initial (x, y) of every trajectory, from results.h5's /initial, when the ensemble is a
        section_grid over exactly these axes and the run is being read from results.h5 anyway;
        else None."""
        grid = (self.job.get("ensemble") or {}).get("section_grid") or {}
        if set((grid.get("axes") or {})) != {x, y}:
            return None
        try:
            h5 = self.h5()
        except UsageError:  # no h5py: the CSVs are read and the map falls back to crossings
            return None
        if h5 is None or "initial" not in h5:
            return None
        initial = h5["initial"]
        if x not in initial or y not in initial:
            return None
        return np.asarray(initial[x][...], dtype=float), np.asarray(initial[y][...], dtype=float)

    def grid_axes(self):
        """The two axes of a section_grid ensemble, in the job's order, or None."""
        grid = (self.job.get("ensemble") or {}).get("section_grid") or {}
        axes = list((grid.get("axes") or {}).keys())
        return tuple(axes) if len(axes) == 2 else None

    def h5(self):
        """results.h5 opened on first use, or None when there is none."""
        if self._h5 is None and os.path.exists(self._path("results.h5")):
            self._h5 = open_h5(self._path("results.h5"))
        return self._h5

    def _path(self, name):
        return os.path.join(self.dir, name)

    def _table(self, csv_name, group):
        if os.path.exists(self._path(csv_name)):
            return CsvTable(self._path(csv_name))
        if self.h5() is not None and group in self.h5():
            return H5Table(self.h5()[group], f"results.h5:/{group}")
        return None

    def _optional_csv(self, name):
        return CsvTable(self._path(name)) if os.path.exists(self._path(name)) else None

    def _series(self, name):
        """A per-segment series as {column: array} without 'segment'; None when absent/empty."""
        table = self._optional_csv(name)
        if table is None:
            return None
        data = table.read([c for c in table.columns if c != "segment"])
        if "t" not in data or not len(data["t"]):
            return None
        return data

    def title(self):
        """Model, integrator and step for figure titles."""
        s = self.summary
        text = f"{s.get('model', '?')}, {s.get('integrator', '?')}"
        if isinstance(s.get("dt"), (int, float)):
            text += f", dt = {s['dt']:g}"
        if s.get("precision") == "float":
            text += ", float"
        if "trajectories" in s and "steps" in s:
            text += f"  ({_count(s['trajectories'])} trajectories x {_count(s['steps'])} steps)"
        return text


def state_names(final_columns):
    """State names of a final table: the columns between 't' and 'energy_error_max'."""
    cols = list(final_columns)
    if "t" in cols and "energy_error_max" in cols and cols.index("t") < cols.index(
            "energy_error_max"):
        return cols[cols.index("t") + 1:cols.index("energy_error_max")]
    return [c for c in cols if c not in NON_STATE_COLUMNS]


# ------------------------------------------------------------------------- choices and data


def dof_pairs(names):
    """(q_i, p_i) pairs present among the state names, in the order of i."""
    pairs = []
    for n in names:
        m = re.fullmatch(r"q(\d+)", n)
        if m and f"p{m.group(1)}" in names:
            pairs.append((n, f"p{m.group(1)}"))
    return pairs


def default_axes(names, job):
    """The section plot's axes for state names `names` and the job echo `job`.

    A section on coordinate q_k or p_k: the (q, p) pair of the first other degree of freedom
    (Henon-Heiles on q0: q1, p1). Stroboscopic sections: q0, p0. Loop ensembles: the loop's plane.
    """
    names = list(names)
    section = job.get("section") or {}
    ensemble = job.get("ensemble") or {}
    pairs = dof_pairs(names)
    loop_plane = (ensemble.get("loop") or {}).get("plane")
    if not section and loop_plane and all(n in names for n in loop_plane):
        return tuple(loop_plane[:2])
    coord = section.get("coordinate")
    if coord is None:  # stroboscopic, parallelepiped clouds, no section
        if pairs:
            return pairs[0]
        return tuple(names[:2])
    m = re.fullmatch(r"[qp](\d+)", coord)
    for q, p in pairs:
        if m and q == f"q{m.group(1)}":
            continue
        if coord not in (q, p):
            return (q, p)
    others = [n for n in names if n != coord]
    return tuple(others[:2]) if len(others) >= 2 else tuple(names[:2])


def parse_axes(text, names):
    parts = [p.strip() for p in text.split(",")]
    valid = list(names) + ["t"]
    if len(parts) != 2 or not all(parts):
        raise UsageError(f"--axes: expected two names X,Y, got '{text}' "
                         f"(valid: {', '.join(valid)})")
    for p in parts:
        if p not in valid:
            raise UsageError(f"--axes: unknown name '{p}' (valid: {', '.join(valid)})")
    return tuple(parts)


def chosen_indicator(run, color_by):
    """The chaos indicator for the chaos map: --color-by when it is one, else MEGNO, else ..."""
    if color_by in INDICATORS and color_by in run.final.columns:
        return color_by
    for name in INDICATORS:
        if name in run.final.columns:
            return name
    return None


def default_color_by(run):
    loop = "loop" in (run.job.get("ensemble") or {}) or "parallelepiped" in (
        run.job.get("ensemble") or {})
    if loop and not run.job.get("section"):
        return "t"
    return chosen_indicator(run, None) or "trajectory"


def color_choices(run):
    numeric = [c for c in run.final.columns if c not in ("trajectory", "t", "status")]
    return ["trajectory", "t"] + numeric


class SectionData:
    """Crossings thinned to every k-th row (at most max_points), and each trajectory's first
    crossing (smallest crossing index, whatever the row order: results.h5 stores its rows by
    segment, then trajectory)."""

    def __init__(self, table, x, y, max_points):
        self.total = table.count_rows()
        self.stride = max(1, math.ceil(self.total / max_points)) if self.total else 1
        names = ["trajectory", "crossing", "t"] + [n for n in dict.fromkeys((x, y)) if n != "t"]
        kept = {n: [] for n in names}
        firsts, pending_rows, row = [], 0, 0
        for chunk in table.iter_chunks(names):
            n = len(chunk["trajectory"])
            take = (np.arange(row, row + n) % self.stride) == 0
            for name in names:
                kept[name].append(chunk[name][take])
            firsts.append(_first_rows(chunk))
            pending_rows += len(firsts[-1]["trajectory"])
            if len(firsts) > 1 and pending_rows > 2 * len(firsts[0]["trajectory"]) + (1 << 20):
                firsts = [_first_rows(_cat_columns(firsts, names))]
                pending_rows = len(firsts[0]["trajectory"])
            row += n
        self.points = _cat_columns(kept, names)
        self.first = _first_rows(_cat_columns(firsts, names))
        self.x, self.y = x, y


def _cat_columns(parts, names):
    """{name: array} from a {name: [arrays]} or a list of {name: array}."""
    if isinstance(parts, dict):
        return {n: np.concatenate(parts[n]) if parts[n] else np.zeros(0) for n in names}
    return {n: np.concatenate([p[n] for p in parts]) if parts else np.zeros(0) for n in names}


def _first_rows(rows):
    """Each trajectory's row with the smallest crossing index, in trajectory order."""
    order = np.lexsort((rows["crossing"], rows["trajectory"]))
    traj = rows["trajectory"][order]
    keep = np.ones(len(traj), dtype=bool)
    keep[1:] = traj[1:] != traj[:-1]
    return {k: v[order[keep]] for k, v in rows.items()}


def per_trajectory(final_traj, values, traj):
    """values (one per final row) looked up for trajectory ids traj; NaN where unknown."""
    if len(traj) == 0:
        return np.zeros(0)
    ids = final_traj.astype(np.int64)
    top = int(max(ids.max(initial=-1), traj.max(initial=-1))) + 1
    lookup = np.full(top, np.nan)
    lookup[ids] = values
    return lookup[traj.astype(np.int64)]


def wrap_angle(v):
    return (v + np.pi) % (2 * np.pi) - np.pi


# ---------------------------------------------------------------------------------- styling


def apply_style(dpi):
    plt.rcParams.update({
        "figure.dpi": 100, "savefig.dpi": dpi, "savefig.bbox": "tight",
        "savefig.pad_inches": 0.05, "font.size": 9, "axes.titlesize": 9.5,
        "axes.labelsize": 9, "xtick.labelsize": 8, "ytick.labelsize": 8,
        "legend.fontsize": 7.5, "legend.frameon": True, "legend.framealpha": 0.85,
        "figure.titlesize": 10.5, "axes.grid": True, "grid.alpha": 0.25, "grid.linewidth": 0.5,
        "axes.spines.top": False, "axes.spines.right": False, "lines.linewidth": 1.3,
        "image.cmap": "viridis",
    })


def new_figure(run, width, height, ncols=1):
    fig, axes = plt.subplots(1, ncols, figsize=(width, height), layout="constrained")
    fig.suptitle(run.title())
    return fig, axes


def _count(n):
    try:
        return f"{int(n):,}"
    except (TypeError, ValueError):
        return str(n)


def _ordinal(k):
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


ColorSpec = collections.namedtuple("ColorSpec", "values norm cmap label extend")


def color_spec(name, values):
    """How to colour by `name`: values (clipped where needed), norm, colormap, label, extend."""
    finite = values[np.isfinite(values)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if name == "megno":
        extend = _extend(lo, hi, *MEGNO_RANGE)
        return ColorSpec(values, mcolors.Normalize(*MEGNO_RANGE), "plasma",
                         r"MEGNO $\langle Y\rangle$  (2 regular, > 2 chaotic, 0 periodic; "
                         "clipped to [0, 8])", extend)
    if name == "lyapunov":
        top = float(np.percentile(finite, 99)) if finite.size else 1.0
        top = top if top > 0 else 1.0
        return ColorSpec(values, mcolors.Normalize(0.0, top), "plasma",
                         "maximal Lyapunov exponent estimate (1/time; clipped at the 99th "
                         "percentile)", _extend(lo, hi, 0.0, top))
    if name in ("sali", "gali2"):
        label = {"sali": "SALI", "gali2": "GALI2"}[name]
        positive = finite[finite > 0]
        floor = 1e-16  # the indicators' own floor: round-off
        if positive.size:  # to the decade below the smallest value reached
            floor = max(floor, 10.0 ** math.floor(math.log10(positive.min())))
        v = np.where(np.isfinite(values), np.maximum(values, floor), np.nan)
        return ColorSpec(v, mcolors.LogNorm(floor, max(hi, 1.0)), "plasma_r",
                         f"{label}  (O(1) regular, $\\to$ 0 chaotic; log scale)", "neither")
    if name == "t":
        return ColorSpec(values, mcolors.Normalize(lo, hi if hi > lo else lo + 1), "viridis",
                         "t at the crossing", "neither")
    positive = finite[finite > 0]
    if positive.size == finite.size and positive.size and hi / max(lo, 1e-300) > 1e3:
        return ColorSpec(values, mcolors.LogNorm(lo, hi), "viridis", f"{name} (log scale)",
                         "neither")
    if finite.size:
        lo, hi = np.percentile(finite, [1, 99])
    extend = _extend(float(finite.min()), float(finite.max()), lo, hi) if finite.size else \
        "neither"
    return ColorSpec(values, mcolors.Normalize(lo, hi if hi > lo else lo + 1), "viridis", name,
                     extend)


def _extend(lo, hi, vmin, vmax):
    below, above = lo < vmin, hi > vmax
    return {(True, True): "both", (True, False): "min", (False, True): "max"}.get(
        (below, above), "neither")


def marker_size(n):
    """Scatter marker area in pt^2: large for a few points, about a pixel for millions."""
    return float(np.clip(120.0 / math.sqrt(max(n, 1)), 0.05, 6.0))


def axis_label(name, run, wrapped):
    text = name
    if name in run.state_names:
        m = re.fullmatch(r"([qp])(\d+)", name)
        if m:
            text = f"{name}  ({'coordinate' if m.group(1) == 'q' else 'momentum'} {m.group(2)})"
    elif name == "t":
        text = "t  (time of the crossing)"
    if wrapped:
        text += r", wrapped to $[-\pi, \pi)$"
    return text


def section_description(run):
    section = run.job.get("section") or {}
    if "stroboscopic" in section:
        every = (section.get("stroboscopic") or {}).get("every", "?")
        return f"Stroboscopic section (every {every} steps)"
    if "coordinate" in section:
        direction = section.get("direction", "up")
        return (f"Poincare section {section['coordinate']} = {section.get('value', 0):g} "
                f"({direction})")
    ensemble = run.job.get("ensemble") or {}
    for kind in ("loop", "parallelepiped"):
        if kind in ensemble:
            every = (ensemble[kind] or {}).get("every", "?")
            return f"{kind.capitalize()} samples every {every} steps"
    return "Samples"


# ----------------------------------------------------------------------------------- figures


def plot_section(run, data, color_by, wrap):
    pts = data.points
    n = len(pts["trajectory"])
    if n == 0:
        return None
    x, y, wrapped = _section_xy(run, pts, data.x, data.y, wrap)
    fig, ax = new_figure(run, 6.2, 5.4)
    traj = pts["trajectory"]
    if color_by == "trajectory":
        _trajectory_scatter(ax, x, y, traj)
        colour_note = "colour: trajectory"
    else:
        if color_by == "t":
            values = pts["t"]
        else:
            values = per_trajectory(run.column("trajectory"),
                                    run.column(color_by), traj)
        _indicator_scatter(fig, ax, x, y, values, color_by)
        colour_note = f"colour: {DISPLAY_NAMES.get(color_by, color_by)}" + (
            " of the trajectory" if color_by != "t" else "")
    ax.set_xlabel(axis_label(data.x, run, wrapped[0]))
    ax.set_ylabel(axis_label(data.y, run, wrapped[1]))
    title = f"{section_description(run)}: {_count(data.total)} points, {colour_note}"
    if data.stride > 1:
        title += (f"\nthinned to every {_ordinal(data.stride)} row: {_count(n)} shown "
                  f"(--max-points)")
    ax.set_title(title)
    return fig


def _trajectory_scatter(ax, x, y, traj, legend_max=10):
    """Qualitative colours; neighbouring ids (grid neighbours) get well separated ones."""
    ids = np.unique(traj)
    if len(ids) <= legend_max:
        for i, k in enumerate(ids):
            sel = traj == k
            ax.scatter(x[sel], y[sel], s=marker_size(len(x)), color=f"C{i % 10}", linewidths=0,
                       rasterized=True, label=f"trajectory {int(k)}")
        ax.legend(loc="best", markerscale=max(1.0, 3.0 / math.sqrt(marker_size(len(x)))))
        return
    code = (traj.astype(np.int64) * 7) % 20
    ax.scatter(x, y, s=marker_size(len(x)), c=code, cmap="tab20", vmin=-0.5, vmax=19.5,
               linewidths=0, rasterized=True)


def _section_xy(run, pts, xname, yname, wrap):
    angles = ANGLE_COORDINATES.get(run.summary.get("model"), ()) if wrap else ()
    out, wrapped = [], []
    for name in (xname, yname):
        v = pts[name]
        w = name in angles and v.size and (np.nanmax(np.abs(v)) > np.pi)
        out.append(wrap_angle(v) if w else v)
        wrapped.append(bool(w))
    return out[0], out[1], wrapped


def _indicator_scatter(fig, ax, x, y, values, name):
    """Points coloured by a per-point value with a colorbar; NaN values in light grey."""
    spec = color_spec(name, values)
    size = marker_size(len(x))
    good = np.isfinite(spec.values)
    if (~good).any():
        ax.scatter(x[~good], y[~good], s=size, c="0.75", linewidths=0, rasterized=True,
                   label=f"no value (NaN): {_count((~good).sum())}")
        ax.legend(loc="upper right", markerscale=max(1.0, 3.0 / math.sqrt(size)))
    mappable = ax.scatter(x[good], y[good], s=size, c=spec.values[good], cmap=spec.cmap,
                          norm=spec.norm, linewidths=0, rasterized=True)
    fig.colorbar(mappable, ax=ax, label=spec.label, extend=spec.extend, shrink=0.92)


def plot_chaos_map(run, data, indicator, wrap):
    values_all = run.column(indicator)
    # The map's plane: the section plot's axes, or the grid's own when nothing crossed.
    axes = (data.x, data.y) if data is not None else run.grid_axes()
    grid = run.initial_grid(*axes) if axes is not None else None
    if grid is not None and len(grid[0]) == len(values_all):
        fig, ax = new_figure(run, 6.2, 5.4)
        _grid_image(fig, ax, grid[0], grid[1], values_all, indicator)
        ax.set_xlabel(axis_label(axes[0], run, False))
        ax.set_ylabel(axis_label(axes[1], run, False))
        ax.set_title(f"{DISPLAY_NAMES[indicator]} of each trajectory at its initial point "
                     f"({_count(len(values_all))} trajectories)\n{section_description(run)}")
        return fig
    if data is not None and len(data.first["trajectory"]):
        first = data.first
        x, y, wrapped = _section_xy(run, first, data.x, data.y, wrap)
        values = per_trajectory(run.column("trajectory"), values_all,
                                first["trajectory"])
        fig, ax = new_figure(run, 6.2, 5.4)
        _indicator_scatter(fig, ax, x, y, values, indicator)
        ax.set_xlabel(axis_label(data.x, run, wrapped[0]))
        ax.set_ylabel(axis_label(data.y, run, wrapped[1]))
        ax.set_title(f"{DISPLAY_NAMES[indicator]} of each trajectory at its first crossing "
                     f"({_count(len(x))} of {_count(len(values_all))} trajectories)\n"
                     f"{section_description(run)}")
        return fig
    fig, ax = new_figure(run, 6.2, 4.2)
    _indicator_histogram(ax, values_all, indicator)
    why = "no crossings recorded" if run.job.get("section") else "no section"
    ax.set_title(f"{DISPLAY_NAMES[indicator]} over the ensemble ({why}, so no map)")
    return fig


def _grid_image(fig, ax, x, y, values, name):
    """Values on the grid of initial points as cells (grid points left out are blank)."""
    ux, uy = np.unique(x), np.unique(y)
    image = np.full((len(uy), len(ux)), np.nan)
    image[np.searchsorted(uy, y), np.searchsorted(ux, x)] = values
    spec = color_spec(name, image.ravel())
    ax.grid(False)
    mesh = ax.pcolormesh(_cell_edges(ux), _cell_edges(uy), spec.values.reshape(image.shape),
                         cmap=spec.cmap, norm=spec.norm, rasterized=True)
    fig.colorbar(mesh, ax=ax, label=spec.label, extend=spec.extend, shrink=0.92)


def _cell_edges(centres):
    if len(centres) == 1:
        return np.array([centres[0] - 0.5, centres[0] + 0.5])
    mid = 0.5 * (centres[1:] + centres[:-1])
    return np.concatenate([[2 * centres[0] - mid[0]], mid, [2 * centres[-1] - mid[-1]]])


def _indicator_histogram(ax, values, name):
    finite = values[np.isfinite(values)]
    nan = int((~np.isfinite(values)).sum())
    extra = [Line2D([], [], ls="none", label=f"NaN / inf: {_count(nan)}")] if nan else []
    if name == "megno":
        bins = np.linspace(*MEGNO_RANGE, 65)
        ax.hist(np.clip(finite, *MEGNO_RANGE), bins=bins, color="C0",
                label=f"{_count(finite.size)} trajectories (clipped to [0, 8])")
        ax.axvline(2.0, color="k", lw=0.8, ls="--", label="2: regular")
        ax.set_xlabel(r"MEGNO $\langle Y\rangle$  (2 = regular, > 2 chaotic)")
    elif name in ("sali", "gali2"):
        _log_hist(ax, finite, name, "C0")
        ax.set_xlabel(f"{name.upper()}  (O(1) regular, $\\to$ 0 chaotic)")
    else:
        ax.hist(finite, bins=64, color="C0", label=f"{_count(finite.size)} trajectories")
        ax.set_xlabel(name if name != "lyapunov" else "maximal Lyapunov exponent estimate "
                      "(1/time)")
    ax.set_ylabel("trajectories")
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles + extra, labels + [h.get_label() for h in extra], loc="upper right")


def _log_hist(ax, values, label, color):
    """Histogram of non-negative values on log-spaced bins; returns (zeros, non-finite) counts."""
    values = np.abs(np.asarray(values, dtype=float))
    finite = values[np.isfinite(values)]
    positive = finite[finite > 0]
    zeros = int((finite == 0).sum())
    nonfinite = int(values.size - finite.size)
    if positive.size:
        lo, hi = math.log10(positive.min()), math.log10(positive.max())
        pad = max(0.02 * (hi - lo), 0.01)
        bins = np.logspace(lo - pad, hi + pad, int(np.clip(12 * (hi - lo), 30, 80)) + 1)
        ax.hist(positive, bins=bins, color=color, label=f"{label} > 0: {_count(positive.size)}")
        ax.set_xscale("log")
        if hi - lo < 1.0:  # show at least a decade so the log axis has labelled ticks
            mid = 0.5 * (lo + hi)
            ax.set_xlim(10 ** (mid - 0.55), 10 ** (mid + 0.55))
    else:
        ax.text(0.5, 0.5, "no positive values", transform=ax.transAxes, ha="center")
    return zeros, nonfinite


def _legend_with_counts(ax, zeros, nonfinite, nan_meaning="NaN"):
    handles, labels = ax.get_legend_handles_labels()
    for text in ([f"exactly 0: {_count(zeros)}"] if zeros else []) + (
            [f"{nan_meaning}: {_count(nonfinite)}"] if nonfinite else []):
        handles.append(Line2D([], [], ls="none"))
        labels.append(text)
    if handles:
        ax.legend(handles, labels, loc="best", handlelength=0.8)


def plot_energy(run):
    err = run.column("energy_error_max")
    series = run.energy_series
    fig, axes = new_figure(run, 11 if series else 6.2, 4.2, 2 if series else 1)
    ax = axes[0] if series else axes
    zeros, nonfinite = _log_hist(ax, err, r"$\max|H - H_0|$", "C0")
    _legend_with_counts(ax, zeros, nonfinite, "non-finite")
    ax.set_xlabel(r"max over the run of $|H - H_0|$, per trajectory  (energy_error_max)")
    ax.set_ylabel("trajectories")
    finite = err[np.isfinite(err)]
    title = f"Energy error over {_count(err.size)} trajectories"
    if finite.size:
        title += f" (max {finite.max():.3g}" + (" of the finite ones)" if nonfinite else ")")
    bad = {k: v for k, v in (run.summary.get("status_counts") or {}).items() if k != "ok" and v}
    if bad:
        title += "\nstatus: " + ", ".join(f"{k} {_count(v)}" for k, v in bad.items())
    ax.set_title(title)
    if series:
        ax2 = axes[1]
        _series_lines(ax2, series, [("energy_error_max", "max", "-"),
                                    ("energy_error_p99", "99th percentile", "--"),
                                    ("energy_error_median", "median", ":")])
        ax2.set_xlabel("t")
        ax2.set_ylabel(r"$\max |H - H_0|$ so far, over the ensemble")
        ax2.set_title("Ensemble statistics at segment ends")
    return fig


def _series_lines(ax, series, lines, color=None):
    """Lines of series columns against t on a log y axis (non-positive values left out)."""
    t = series["t"]
    drawn = False
    for col, label, style in lines:
        if col not in series:
            continue
        v = np.where(series[col] > 0, series[col], np.nan)
        if np.isfinite(v).any():
            ax.plot(t, v, style, color=color, marker="o" if len(t) <= 30 else None, ms=2.5,
                    label=label)
            drawn = True
    if drawn:
        ax.set_yscale("log")
        ax.legend(loc="best")
    else:
        ax.text(0.5, 0.5, "all values zero", transform=ax.transAxes, ha="center")


def plot_symplectic(run):
    cols = run.final.columns
    if "symplectic_defect_rel" not in cols and "det_error" not in cols:
        return None
    has_series = run.tangent_series is not None
    fig, axes = new_figure(run, 15 if has_series else 10.5, 4.2, 3 if has_series else 2)
    ax1, ax2 = axes[0], axes[1]
    if "symplectic_defect_rel" in cols:
        zeros, nonfinite = _log_hist(ax1, run.column("symplectic_defect_rel"),
                                     "defect", "C0")
        _legend_with_counts(ax1, zeros, nonfinite)
    ax1.set_xlabel(r"$\max|M^{T} J M - J| \,/\, \max|M|^2$  (symplectic_defect_rel)")
    ax1.set_ylabel("trajectories")
    ax1.set_title("Relative symplecticity defect of the tangent map")
    if "det_error" in cols:
        zeros, nonfinite = _log_hist(ax2, run.column("det_error"), r"$|\det M - 1|$",
                                     "C1")
        _legend_with_counts(ax2, zeros, nonfinite, "NaN (past its round-off bound)")
    ax2.set_xlabel(r"$|\det M - 1|$  (phase-volume error, det_error)")
    ax2.set_ylabel("trajectories")
    ax2.set_title("Liouville: phase-volume factor of the tangent map")
    if has_series:
        ax3 = axes[2]
        _series_lines(ax3, run.tangent_series, [("symplectic_defect_max", "defect, max", "-"),
                                    ("symplectic_defect_median", "defect, median", ":"),
                                    ("symplectic_defect_rel_max", "relative defect, max", "-"),
                                    ("symplectic_defect_rel_median", "relative defect, median",
                                     ":")])
        for line in ax3.get_lines():
            line.set_color("C3" if "relative" in line.get_label() else "C0")
        ax3.legend(loc="best")
        ax3.set_xlabel("t")
        ax3.set_ylabel("symplecticity defect over the ensemble")
        ax3.set_title(r"Defect at segment ends (the absolute one grows with $|M|^2$)")
    return fig


def plot_invariants(run):
    inv = run.invariants
    cols = [c for c in inv.columns if c.endswith("relative_change")]
    if "t" not in inv.columns or not cols:
        return None
    data = inv.read(["t"] + cols)
    fig, ax = new_figure(run, 6.6, 4.2)
    names = {"area_relative_change": "enclosed area",
             "poincare_relative_change": r"Poincaré invariant $\oint p\,dq$",
             "volume_relative_change": "phase volume"}
    styles = ["-", "--", ":"]
    any_positive = any((np.abs(data[c]) > 0).any() for c in cols)
    zeros_left_out = False
    for i, c in enumerate(cols):
        v = np.abs(data[c])
        worst = np.nanmax(v) if np.isfinite(v).any() else float("nan")
        if any_positive:
            zeros_left_out |= bool((v[1:] == 0).any())
            v = np.where(v > 0, v, np.nan)
        ax.plot(data["t"], v, styles[i % 3], marker="o" if len(v) <= 40 else None, ms=3,
                label=f"{names.get(c, c)}  (max {worst:.2g})")
    if any_positive:
        ax.set_yscale("log")
        _epsilon_line(ax, run, max(np.nanmax(np.abs(data[c])) for c in cols))
    ax.legend(loc="best")
    ax.set_xlabel("t")
    ax.set_ylabel(r"$|I(t) - I(0)| \,/\, |I(0)|$")
    info = run.summary.get("invariants") or {}
    kind = info.get("kind", "loop" if "area_relative_change" in cols else "parallelepiped")
    what = (f"loop of {info.get('points', '?')} points ({info.get('shape', '?')}) in the "
            f"{'-'.join(info.get('plane', ['?', '?']))} plane") if kind == "loop" else \
        "parallelepiped cloud" + (f" (edge {_edge_text(info['edge'])})" if "edge" in info else "")
    note = "" if any_positive else "\n(no change at all: exactly zero)"
    if zeros_left_out:
        note = "\n(samples with exactly zero change are gaps on the log axis)"
    ax.set_title(f"Integral invariants of a {what}{note}")
    return fig


def si(value, unit=""):
    """3 significant digits with an SI prefix: 6.27e8 -> '627 M'."""
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""),
                           (1e-3, "m"), (1e-6, "u")):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix}{unit}".rstrip()
    return f"{value:.3g} {unit}".rstrip()


def _edge_text(edge):
    edges = edge if isinstance(edge, list) else [edge]
    return ", ".join(dict.fromkeys(f"{e:g}" for e in edges if isinstance(e, (int, float))))


def _epsilon_line(ax, run, largest):
    """Machine epsilon of the run's precision, when the data lie within a few decades of it."""
    eps = float(np.finfo(np.float32 if run.summary.get("precision") == "float" else
                         np.float64).eps)
    if largest < 1e4 * eps:
        ax.axhline(eps, color="0.4", lw=0.8, ls="--", label=f"machine epsilon ({eps:.2g})")


def throughput_rows(s):
    def sec(key):
        return si(s.get(key), "s")

    def rate(key):
        return si(s.get(key))

    lanes = f", {s['cpu_simd_lanes']} SIMD lanes" if s.get("cpu_simd_lanes") else ""
    n = s.get("threads")
    threads = f", {n} thread{'s' if n != 1 else ''}" if n else ""
    statuses = s.get("status_counts") or {}
    status_text = ", ".join(f"{k} {_count(v)}" for k, v in statuses.items() if v) or None
    rows = [
        ("model", s.get("model")),
        ("integrator", f"{s.get('integrator')}, dt = {s['dt']:g}"
         if isinstance(s.get("dt"), (int, float)) else s.get("integrator")),
        ("backend", f"{s.get('backend')}{threads}{lanes}"),
        ("device", s.get("device")),
        ("precision", s.get("precision")),
        ("trajectories", _count(s["trajectories"]) if "trajectories" in s else None),
        ("steps", (_count(s["steps"]) + (f" in {s['segments']} segments" if "segments" in s
                                         else "")) if "steps" in s else None),
        ("wall time", sec("wall_seconds")),
        ("kernel time", sec("kernel_seconds")),
        ("trajectory-steps / s", rate("trajectory_steps_per_second")
         and f"{rate('trajectory_steps_per_second')}  (kernel time)"),
        ("trajectory-steps / s, wall", rate("trajectory_steps_per_second_wall")
         and f"{rate('trajectory_steps_per_second_wall')}  (end to end)"),
        ("crossings", _count(s["crossings_total"]) + (
            f" ({_count(s['crossings_dropped'])} dropped)" if s.get("crossings_dropped") else "")
         if "crossings_total" in s else None),
        (r"max $|H - H_0|$", f"{s['energy_error_max']:.3g}"
         if isinstance(s.get("energy_error_max"), (int, float)) else None),
        ("status", status_text),
        ("vigor", s.get("vigor_version")),
    ]
    return [(k, str(v)) for k, v in rows if v not in (None, "None")]


def plot_throughput(run):
    rows = throughput_rows(run.summary)
    fig, ax = plt.subplots(figsize=(6.4, 0.3 + 0.24 * len(rows)), layout="constrained")
    ax.axis("off")
    ax.set_title(f"vigor run: {run.title()}", loc="left")
    step = 1.0 / len(rows)
    for i, (key, value) in enumerate(rows):
        y = 1.0 - (i + 0.5) * step
        if i % 2 == 0:
            ax.axhspan(y - step / 2, y + step / 2, color="0.94", lw=0)
        ax.text(0.01, y, key, ha="left", va="center", weight="bold", transform=ax.transAxes)
        ax.text(0.36, y, value, ha="left", va="center", transform=ax.transAxes)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    return fig


# ------------------------------------------------------------------------------------- main


def save(fig, plot_dir, name, svg):
    if fig is None:
        return []
    written = []
    try:
        for ext in ("png", "svg") if svg else ("png",):
            path = os.path.join(plot_dir, f"{name}.{ext}")
            try:
                fig.savefig(path)
            except OSError as e:
                raise OutputError(f"{path}: cannot write: {e.strerror or e}") from None
            print(path, flush=True)
            written.append(path)
    finally:
        plt.close(fig)
    return written


def parse_args(argv):
    class Parser(argparse.ArgumentParser):
        def error(self, message):
            self.print_usage(sys.stderr)
            raise UsageError(message)

    p = Parser(prog="vigor plot", description="Figures from a vigor output directory.")
    p.add_argument("out_dir", metavar="OUT_DIR", help="directory written by `vigor run`")
    p.add_argument("--out", metavar="PLOT_DIR", help="where to write (default OUT_DIR/plots)")
    p.add_argument("--svg", action="store_true", help="write SVG as well as PNG")
    p.add_argument("--axes", metavar="X,Y", help="section axes: two state names (or t)")
    p.add_argument("--color-by", metavar="NAME",
                   help="trajectory, t, or a final.csv column (megno, lyapunov, sali, ...)")
    p.add_argument("--max-points", metavar="N", default="2e6",
                   help="most crossings drawn (default 2e6; more are thinned to every k-th)")
    p.add_argument("--dpi", type=int, default=200, help="PNG resolution (default 200)")
    p.add_argument("--no-wrap", action="store_true",
                   help="do not wrap pendulum angles to [-pi, pi) on the section axes")
    args = p.parse_args(argv)
    try:
        args.max_points = int(float(args.max_points))
    except ValueError:
        raise UsageError(f"--max-points: not a number: '{args.max_points}'") from None
    if args.max_points < 1:
        raise UsageError(f"--max-points: must be >= 1, got {args.max_points}")
    if not 20 <= args.dpi <= 2400:
        raise UsageError(f"--dpi: must be in [20, 2400], got {args.dpi}")
    return args


def make_plots(args):
    run = Run(args.out_dir)
    axes = parse_axes(args.axes, run.state_names) if args.axes else default_axes(
        run.state_names, run.job)
    color_by = args.color_by or default_color_by(run)
    if color_by not in color_choices(run):
        raise UsageError(f"--color-by: unknown '{color_by}' "
                         f"(valid: {', '.join(color_choices(run))})")
    plot_dir = args.out or os.path.join(args.out_dir, "plots")
    try:
        os.makedirs(plot_dir, exist_ok=True)
    except OSError as e:
        raise OutputError(f"{plot_dir}: cannot create: {e.strerror}") from None
    apply_style(args.dpi)
    written = []
    for name, fig in run_figures(run, axes, color_by, not args.no_wrap, args.max_points):
        written += save(fig, plot_dir, name, args.svg)
    return written


def run_figures(run, axes, color_by, wrap, max_points):
    """(name, Figure or None) for every figure of a run, in the order `vigor plot` writes them;
    one at a time, so the program can save and close each before the next is drawn."""
    data = None
    if run.sections is not None and len(axes) == 2:
        for name in axes:
            if name not in run.sections.columns:
                raise UsageError(f"--axes: '{name}' is not a column of {run.sections.path}")
        data = SectionData(run.sections, axes[0], axes[1], max_points)
        if data.total == 0 and run.job.get("section"):
            print("note: no crossings recorded: no section.png", file=sys.stderr)
    if data is not None:
        yield "section", plot_section(run, data, color_by, wrap)
    indicator = chosen_indicator(run, color_by)
    if indicator:
        yield "chaos_map", plot_chaos_map(run, data, indicator, wrap)
    yield "energy", plot_energy(run)
    yield "symplectic", plot_symplectic(run)
    if run.invariants is not None:
        yield "invariants", plot_invariants(run)
    yield "throughput", plot_throughput(run)


def main(argv=None):
    if _IMPORT_ERROR is not None:
        print(MISSING_MATPLOTLIB, file=sys.stderr)
        return 3  # the environment, not the input: DESIGN's runtime-failure code
    # Files only, no display: the program never opens a window (the Python API leaves the
    # backend to the notebook).
    matplotlib.use("Agg")
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        make_plots(args)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OutputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 3
    return 0


# ------------------------------------------------------------------- from Python (vigor.Result)


class _ArrayTable:
    """A table of a vigor.Result (name -> array) read as the CSV tables above are."""

    path = "(vigor.Result)"

    def __init__(self, columns):
        self._columns = columns
        self.columns = list(columns)

    def count_rows(self):
        return len(next(iter(self._columns.values()))) if self._columns else 0

    def iter_chunks(self, names):
        yield {n: np.asarray(self._columns[n], dtype=float) for n in names}

    def read(self, names):
        return {n: np.asarray(self._columns[n], dtype=float) for n in names}


class _ResultRun(Run):
    """A vigor.Result as a results directory's Run: the same figures from the same code."""

    def __init__(self, res):  # noqa: super().__init__ reads a directory; this reads the Result
        self.dir = "(vigor.Result)"
        self._h5 = None
        self.summary = res.summary
        self.job = res.summary.get("job") or {}
        self.final = _ArrayTable(res.final)
        self.sections = _ArrayTable(res.sections)
        self.tangent_series = self._series(res.tangent_series)
        self.energy_series = self._series(res.energy_series)
        self.invariants = _ArrayTable(res.invariants) if res.invariants else None
        self.state_names = res.state_names
        self._columns = {}
        self._res = res

    @staticmethod
    def _series(table):
        if not table or not len(table.get("t", ())):
            return None
        return {k: np.asarray(v, dtype=float) for k, v in table.items() if k != "segment"}

    def column(self, name):
        return np.asarray(self._res.final[name], dtype=float)

    def h5(self):
        return None


def figures(res, axes=None, color_by=None, wrap=True, max_points=2_000_000):
    """Every figure `vigor plot` draws, for a vigor.Result, as {name: matplotlib Figure}: section,
    chaos_map (when the run has a chaos indicator), energy, symplectic (tangent maps), invariants
    (loop and parallelepiped ensembles), throughput. Arguments as the program's options."""
    if _IMPORT_ERROR is not None:
        raise ImportError(MISSING_MATPLOTLIB.replace("error: vigor plot", "vigor.plot"))
    run = _ResultRun(res)
    axes = tuple(axes) if axes else default_axes(run.state_names, run.job)
    color_by = color_by or default_color_by(run)
    if color_by not in color_choices(run):
        raise ValueError(f"color_by: unknown '{color_by}' (valid: {', '.join(color_choices(run))})")
    try:
        figs = run_figures(run, axes, color_by, wrap, max_points)
        return {name: fig for name, fig in figs if fig is not None}
    except UsageError as e:
        raise ValueError(str(e)) from None


def _axes_or_new(ax, width, height):
    if _IMPORT_ERROR is not None:
        raise ImportError(MISSING_MATPLOTLIB.replace("error: vigor plot", "vigor.plot"))
    if ax is None:
        _, ax = plt.subplots(figsize=(width, height))
    return ax


def section(res, ax=None, color_by=None, axes=None, wrap=True):
    """The section points of a vigor.Result on `ax` (a new figure when None), as section.png of
    `vigor plot`: the plane `axes` = (x, y) (default: the (q, p) pair of the first other degree
    of freedom), coloured by `color_by` (trajectory, t, or any numeric column of res.final;
    default: the chaos indicator when the run has one, else trajectory). Returns the axes."""
    run = _ResultRun(res)
    xname, yname = axes or default_axes(run.state_names, run.job)
    for name in (xname, yname):
        if name not in res.sections:
            raise ValueError(f"axes: '{name}' is not a column of the sections "
                             f"(valid: {', '.join(run.state_names + ['t'])})")
    color_by = color_by or default_color_by(run)
    if color_by not in color_choices(run):
        raise ValueError(f"color_by: unknown '{color_by}' (valid: {', '.join(color_choices(run))})")
    ax = _axes_or_new(ax, 6.2, 5.4)
    pts = {k: np.asarray(v) for k, v in res.sections.items()}
    x, y, wrapped = _section_xy(run, pts, xname, yname, wrap)
    traj = pts["trajectory"]
    if color_by == "trajectory":
        _trajectory_scatter(ax, x, y, traj)
    else:
        values = pts["t"] if color_by == "t" else per_trajectory(
            run.column("trajectory"), run.column(color_by), traj)
        _indicator_scatter(ax.figure, ax, x, y, values, color_by)
    ax.set_xlabel(axis_label(xname, run, wrapped[0]))
    ax.set_ylabel(axis_label(yname, run, wrapped[1]))
    ax.set_title(f"{section_description(run)}: {_count(len(traj))} points")
    return ax


def energy(res, ax=None):
    """max |H - H0| over the ensemble (max, 99th percentile, median) at every segment end, on a
    log axis, as the right panel of energy.png. Returns the axes."""
    ax = _axes_or_new(ax, 6.2, 4.2)
    series = {k: np.asarray(v) for k, v in res.energy_series.items()}
    _series_lines(ax, series, [("energy_error_max", "max", "-"),
                               ("energy_error_p99", "99th percentile", "--"),
                               ("energy_error_median", "median", ":")])
    ax.set_xlabel("t")
    ax.set_ylabel(r"$\max |H - H_0|$ so far, over the ensemble")
    ax.set_title(_ResultRun(res).summary.get("model", "") + ": energy error at segment ends")
    return ax


if __name__ == "__main__":
    sys.exit(main())
