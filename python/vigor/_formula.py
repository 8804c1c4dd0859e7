"""A job dict as JSON values: SymPy expressions become formula text (docs/formula_models.md) by
walking their trees — each node is written in the formula language, nothing is pasted — and NumPy
scalars and arrays become numbers and lists."""
import math
import numbers
import os

import numpy as np

# SymPy function class name -> the formula language's name.
_FUNCTIONS = {name: name for name in (
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "exp", "log",
    "sqrt", "Abs", "Min", "Max")}
_FUNCTIONS.update({"Abs": "abs", "Min": "min", "Max": "max"})


def jsonable(value, path=""):
    """`value` with every SymPy expression as formula text, every NumPy value and path as JSON's;
    a number JSON cannot hold (NaN, infinity) is a JobError naming its key."""
    from . import _api  # JobError (imported here: _api imports this module)
    if isinstance(value, dict):
        return {str(k): jsonable(v, f"{path}.{k}" if path else str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist(), path)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            raise _api.JobError(f"{path}: must be a finite number, got {float(value)!r}", path)
        return float(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if _is_sympy(value):
        return formula_text(value, path)
    return value


def _is_sympy(value):
    return type(value).__module__.startswith("sympy")


def formula_text(expr, path="formula"):
    """A SymPy expression in the formula language, fully parenthesised."""
    import sympy
    from . import _api  # JobError

    def walk(e):
        if e.is_Symbol:
            return e.name
        if e is sympy.pi:
            return "pi"
        if e is sympy.E:
            return "exp(1)"
        # Negative numbers in parentheses: the formula language reads -2^x as -(2^x).
        if e.is_Integer:
            return str(int(e)) if e >= 0 else f"({int(e)})"
        if e.is_Rational:
            return f"({int(e.p)}/{int(e.q)})"
        if e.is_Float or isinstance(e, numbers.Number):
            return repr(float(e)) if e >= 0 else f"({float(e)!r})"
        if e.is_Add:
            return "(" + " + ".join(walk(a) for a in e.args) + ")"
        if e.is_Mul:
            return "(" + "*".join(walk(a) for a in e.args) + ")"
        if e.is_Pow:
            base, exponent = e.args
            if exponent == sympy.Rational(1, 2):
                return f"sqrt({walk(base)})"
            return f"({walk(base)}^{walk(exponent)})"
        name = type(e).__name__
        if e.is_Function and name in _FUNCTIONS:
            return f"{_FUNCTIONS[name]}(" + ", ".join(walk(a) for a in e.args) + ")"
        raise _api.JobError(f"{path}: the SymPy expression uses {name} ({e}), which the formula "
                            "language does not have (docs/formula_models.md lists what it has)",
                            path)

    return walk(sympy.sympify(expr))
