"""Formulas written once: one definition evaluates whole columns and renders its derivation for one row.

A :class:`Formula` holds a name, an output unit and an arithmetic expression over named symbols, written in a
small, safe subset of Python syntax (numbers, names, ``+ - * / **``, parentheses and the functions ``min``,
``max``, ``ceil``, ``floor``, ``exp``, ``ln`` and ``hours_sum``). The expression is parsed once; evaluating it
applies that parse tree's operations over numpy arrays (through one function generated from the checked tree
once: names, numbers and the listed operations only), and rendering it walks the same tree, writing names (the
symbolic line) or one row's numbers (the substituted line). So the printed arithmetic is the computed arithmetic::

    >>> capital = Formula("capital_usd_per_hour", "USD/h", "accelerators * price_usd * crf / HOURS_PER_YEAR")
    >>> float(capital.evaluate({"accelerators": 8.0, "price_usd": 30_000.0, "crf": 0.25}))
    6.8493150684931505
    >>> capital.symbolic()
    'accelerators x price_usd x crf / 8,760 h/year'
    >>> capital.substituted({"accelerators": 8.0, "price_usd": 30_000.0, "crf": 0.25})
    '8 x 30,000 x 0.25 / 8,760'

A column may be hourly: shape (24, rows), the hours of a day on the first axis, so that it broadcasts with the
ordinary (rows,) columns; ``hours_sum`` adds its 24 hours up, and a substituted line writes its row's 24 values as a
list, ``[0.05, 0.05, ..., 0.12]``, which :func:`reevaluate` reads back::

    >>> day = Formula("kwh_per_day", "kWh/day", "hours_sum(power_kw_by_hour)")
    >>> day.substituted({"power_kw_by_hour": np.array([[1.0, 2.0]] * 12 + [[3.0, 2.0]] * 12)}, row=0)
    'hours_sum([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3])'

Upper-case names are constants (:data:`CONSTANTS`): the symbolic line shows them with their unit. A formula
meant for another set of columns is :meth:`Formula.bind`-ed to them (the decode pool's cost is the pool cost
formula bound to the decode pool's columns), so there is still one definition.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from economics.schema.day_profiles import HOURS

Array = NDArray[Any]

CONSTANTS: dict[str, tuple[float, str]] = {
    "SECONDS_PER_DAY": (86_400.0, "s/day"),
    "HOURS_PER_DAY": (float(HOURS), "h/day"),
    "HOURS_PER_YEAR": (8_760.0, "h/year"),
    "DAYS_PER_YEAR": (365.0, "day/year"),
    "MONTHS_PER_YEAR": (12.0, "month/year"),
    "TOKENS_PER_M": (1_000_000.0, "token/M token"),
    "KW_PER_MW": (1_000.0, "kW/MW"),
    "W_PER_KW": (1_000.0, "W/kW"),
    "G_PER_KG": (1_000.0, "g/kg"),
    "KG_PER_TONNE": (1_000.0, "kg/t"),
    "BYTES_PER_GB": (1e9, "B/GB"),
    "BYTES_PER_MB": (1e6, "B/MB"),
    "BYTES_PER_TB": (1e12, "B/TB"),
    "PARAMS_PER_BILLION": (1e9, "parameter/billion"),
    "FLOPS_PER_TFLOPS": (1e12, "FLOP/s per TFLOPS"),
}
"""Named constants of the formulas: value and unit. The module-level names below are these values, for code that
computes outside a formula object (the planner, the retrofit's cash flows); nothing else writes them."""
SECONDS_PER_DAY = CONSTANTS["SECONDS_PER_DAY"][0]
HOURS_PER_DAY = CONSTANTS["HOURS_PER_DAY"][0]
HOURS_PER_YEAR = CONSTANTS["HOURS_PER_YEAR"][0]
DAYS_PER_YEAR = CONSTANTS["DAYS_PER_YEAR"][0]
G_PER_KG = CONSTANTS["G_PER_KG"][0]
KG_PER_TONNE = CONSTANTS["KG_PER_TONNE"][0]

ROUNDING_TOLERANCE = 1e-12
"""Relative tolerance of ``ceil`` and ``floor`` in every formula and in the functions that evaluate them: a quotient
within it of a whole number is that number, so 72.8 kW / 5.2 kW (13.999999999999998 in floating point) is 14 systems
a rack and 16.000000000000004 systems is 16, not 17. Far below any input's precision, far above rounding error."""


def ceil(x: Any) -> Any:
    """``ceil`` within :data:`ROUNDING_TOLERANCE`.

    >>> float(ceil(16.000000000000004)), float(ceil(16.01)), float(ceil(float("inf")))
    (16.0, 17.0, inf)
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(invalid="ignore"):  # an infinite quantity stays infinite (inf - inf would be NaN)
        return np.where(np.isinf(x), x, np.ceil(x - np.abs(x) * ROUNDING_TOLERANCE))


def floor(x: Any) -> Any:
    """``floor`` within :data:`ROUNDING_TOLERANCE`.

    >>> float(floor(72.8 / 5.2)), float(floor(13.99)), float(floor(float("-inf")))
    (14.0, 13.0, -inf)
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(invalid="ignore"):  # an infinite quantity stays infinite (inf - inf would be NaN)
        return np.where(np.isinf(x), x, np.floor(x + np.abs(x) * ROUNDING_TOLERANCE))


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "min": lambda *a: _reduce(np.minimum, a),
    "max": lambda *a: _reduce(np.maximum, a),
    "ceil": ceil,
    "floor": floor,
    "hours_sum": lambda a: np.sum(a, axis=0),
    "exp": np.exp,
    "ln": np.log,
}
_BINARY: dict[type, tuple[Callable[[Any, Any], Any], str, int]] = {
    ast.Add: (np.add, "+", 1), ast.Sub: (np.subtract, "-", 1),
    ast.Mult: (np.multiply, "x", 2), ast.Div: (np.divide, "/", 2), ast.Pow: (np.power, "^", 4),
}


def _reduce(fn: Callable[[Any, Any], Any], args: tuple[Any, ...]) -> Any:
    out = args[0]
    for a in args[1:]:
        out = fn(out, a)
    return out


def format_term(x: float) -> str:
    """A number substituted into a derivation: up to six significant digits, thousands separators, no
    scientific notation between 1e-4 and 1e15, so that the printed arithmetic can be re-done by hand.

    >>> format_term(30000.0), format_term(0.25045645), format_term(1234567.891), format_term(-2.5e-7)
    ('30,000', '0.250456', '1,234,568', '-2.5e-07')
    >>> format_term(float("inf"))
    'inf'
    """
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    ax = abs(x)
    if x == 0:
        return "0"
    if 1e-4 <= ax < 1e15:
        decimals = max(0, 5 - math.floor(math.log10(ax)))
        text = f"{x:,.{decimals}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f"{x:.6g}"


@dataclass(frozen=True)
class Formula:
    """``name [unit] = expression``; see the module docstring. ``note`` is printed under the derivation."""

    name: str
    unit: str
    expression: str
    note: str = ""
    _tree: ast.expr = field(init=False, repr=False, compare=False)
    _run: Callable[[Mapping[str, Any]], Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Parse ``expression`` once, check it (only the allowed syntax, else :class:`ValueError`) and compile it."""
        tree = ast.parse(self.expression, mode="eval").body
        _check(tree, self.expression)
        object.__setattr__(self, "_tree", tree)
        object.__setattr__(self, "_run", _compiled(tree))

    @property
    def reads(self) -> tuple[str, ...]:
        """The symbols the expression reads (constants excluded), in order of first use."""
        names = [n.id for n in ast.walk(self._tree) if isinstance(n, ast.Name) and n.id not in CONSTANTS]
        return tuple(dict.fromkeys(names))

    def evaluate(self, values: Mapping[str, Any]) -> Any:
        """The expression over ``values`` (floats or equal-length arrays, broadcast as numpy does)."""
        return self._run(values)

    def symbolic(self) -> str:
        """The expression with names: ``accelerators x price_usd x crf / 8,760 h/year``."""
        return _render(self._tree, lambda name: name, 0)

    def substituted(self, values: Mapping[str, Any], row: int = 0) -> str:
        """The expression with one row's numbers: ``8 x 30,000 x 0.25 / 8,760``."""
        return _render(self._tree, lambda name: _term(_at(values[name], row)), 0, numbers=True)

    def bind(self, name: str, **symbols: str) -> Formula:
        """The same formula computing ``name`` from other columns (``symbol=column``).

        >>> Formula("x", "-", "a * b").bind("y", a="c").symbolic()
        'c x b'
        """
        tree = _Rename(symbols).visit(ast.parse(self.expression, mode="eval")).body
        return Formula(name, self.unit, ast.unparse(tree), self.note)


def _at(value: Any, row: int) -> Any:
    """One row's value of a column: a float, or the row's 24 values of an hourly column (24, rows)."""
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 2:
        return arr[:, row if arr.shape[1] > 1 else 0]
    return float(arr if arr.ndim == 0 else arr[row])


def _term(x: Any) -> str:
    if isinstance(x, np.ndarray):
        return "[" + ", ".join(format_term(float(h)) for h in x) + "]"
    return format_term(x)


class _Rename(ast.NodeTransformer):
    def __init__(self, symbols: Mapping[str, str]) -> None:
        self.symbols = symbols

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.Name(self.symbols.get(node.id, node.id), node.ctx)


def _check(node: ast.expr, text: str) -> None:
    """Only numbers, names, the four operations and power, unary minus and the allowed functions."""
    for n in ast.walk(node):
        ok = isinstance(n, ast.Constant | ast.Name | ast.Load | ast.USub | ast.UnaryOp | ast.BinOp)
        ok = ok or type(n) in _BINARY
        if isinstance(n, ast.Call):
            ok = isinstance(n.func, ast.Name) and n.func.id in _FUNCTIONS and not n.keywords
        if isinstance(n, ast.Name) and not (isinstance(n.ctx, ast.Load)):
            ok = False
        if not ok:
            raise ValueError(f"formula {text!r}: {type(n).__name__} is not allowed")


def _constant(node: ast.Constant) -> float:
    if not isinstance(node.value, int | float) or isinstance(node.value, bool):
        raise ValueError(f"not a number: {node.value!r}")
    return float(node.value)


Run = Callable[[Mapping[str, Any]], Any]


def _compiled(node: ast.expr) -> Run:
    """The parse tree as one Python function, built once per formula: evaluating applies the tree's numpy operations
    in its order (left operand first), with one call of the function rather than one closure per node of the tree.
    The function's text is generated from the checked tree alone (:func:`_check`): a column is ``values['name']``,
    every number and operation a name bound to its value, so nothing of the expression's text is evaluated.

    >>> _compiled(ast.parse("max(a, 2) * -b / HOURS_PER_DAY", mode="eval").body)({"a": 1.0, "b": 12.0})
    np.float64(-1.0)
    """
    bound: dict[str, Any] = {}

    def name_of(value: Any) -> str:
        key = f"_{len(bound)}"
        bound[key] = value
        return key

    def text(n: ast.expr) -> str:
        if isinstance(n, ast.Constant):
            return name_of(_constant(n))
        if isinstance(n, ast.Name):
            return name_of(CONSTANTS[n.id][0]) if n.id in CONSTANTS else f"values[{n.id!r}]"
        if isinstance(n, ast.UnaryOp):
            return f"{name_of(np.negative)}({text(n.operand)})"
        if isinstance(n, ast.BinOp):
            return f"{name_of(_BINARY[type(n.op)][0])}({text(n.left)}, {text(n.right)})"
        assert isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        return f"{name_of(_FUNCTIONS[n.func.id])}({', '.join(text(a) for a in n.args)})"

    source = f"lambda values: {text(node)}"
    run: Run = eval(compile(source, "<formula>", "eval"), {"__builtins__": {}, **bound})  # noqa: S307
    return run


def _render(node: ast.expr, name: Callable[[str], str], parent: int, numbers: bool = False, right: bool = False) -> str:
    if isinstance(node, ast.Constant):
        return format_term(_constant(node))
    if isinstance(node, ast.Name):
        if node.id in CONSTANTS:
            value, unit = CONSTANTS[node.id]
            return format_term(value) if numbers else f"{format_term(value)} {unit}"
        return name(node.id)
    if isinstance(node, ast.UnaryOp):
        text = "-" + _render(node.operand, name, 3, numbers)
        return f"({text})" if parent >= 3 else text
    if isinstance(node, ast.BinOp):
        _, sym, prec = _BINARY[type(node.op)]
        left = _render(node.left, name, prec, numbers)
        rhs = _render(node.right, name, prec, numbers, right=True)
        text = f"{left} {sym} {rhs}"
        tight = parent > prec or (parent == prec and right)
        return f"({text})" if tight else text
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    return f"{node.func.id}({', '.join(_render(a, name, 0, numbers) for a in node.args)})"


def reevaluate(text: str) -> float:
    """Re-do a substituted line's arithmetic (``8 x 30,000 x 0.25 / 8,760``): the check that printed
    derivations hold. Accepts only what :func:`_render` writes: numbers, ``inf``, ``+ - x / ^``, parentheses,
    ``min``, ``max``, ``ceil``, ``floor``, ``exp``, ``ln``, ``hours_sum`` and lists of numbers (an hourly column's
    row); function arguments and list items are separated by a comma and a space, thousands by a comma alone.

    >>> round(reevaluate("8 x 30,000 x 0.25 / 8,760"), 6)
    6.849315
    >>> reevaluate("min(1, inf, 2 ^ 2)")
    1.0
    >>> reevaluate("hours_sum(min(1, 2 x [0.25, 1]) x [4, 1,000])")
    1002.0
    """
    py = text.replace(", ", "\x00").replace(",", "").replace("\x00", ", ").replace(" x ", " * ").replace("^", "**")
    # IEEE arithmetic as the engine's: x / 0 is inf and a huge product overflows to inf, both shown as such, not warned
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return float(_evaluate_text(ast.parse(py, mode="eval").body))


def _evaluate_text(node: ast.expr) -> Any:
    if isinstance(node, ast.List):
        return np.array([_evaluate_text(e) for e in node.elts], dtype=float)
    if isinstance(node, ast.Name) and node.id == "inf":
        return math.inf
    if isinstance(node, ast.Constant):
        return _constant(node)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate_text(node.operand)
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)][0](_evaluate_text(node.left), _evaluate_text(node.right))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        return _FUNCTIONS[node.func.id](*(_evaluate_text(a) for a in node.args))
    raise ValueError(f"not arithmetic: {ast.unparse(node)}")
