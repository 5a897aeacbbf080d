"""The one value parser: what a cell, a link parameter, a JSON value or a DataFrame entry means.

Every way into the calculator (CSV files, shareable links, JSON, the DataFrame API and ``Scenario``/dict) reads
values with these functions, so the same text means the same value everywhere:

- **empty**: ``None``, NaN, ``pd.NA`` or text that is only whitespace -> :data:`EMPTY` (the field's default).
- **numbers**: ASCII digits with an optional sign, decimal point and exponent (``12``, ``-0.5``, ``.5``, ``1e6``),
  surrounding whitespace ignored. Refused everywhere: digit separators (``1_000``, ``1,000``), non-ASCII digits
  (Arabic-Indic, full-width), hexadecimal, ``nan``, ``inf``, and anything that overflows to infinity. Python
  ints, floats, numpy numbers and ``Decimal`` are numbers; ``True``/``False`` are not.
- **booleans**: ``true/false``, ``yes/no``, ``y/n``, ``t/f``, ``1/0`` in any case; the numbers 0 and 1.
- **choices and catalog ids**: text, stripped and lower-cased.
- **free text**: text, stripped; numbers become their text.

Anything else (lists, dicts, bytes, dates, objects) is a :class:`CellTypeError`: a caller's mistake, reported as
an unusable input naming the field, the row and the value. A value that is the right type but not a valid value is
a :class:`ValueProblem` whose message shows the value. The parser checks neither bounds nor catalog membership:
callers do, with the field's bounds (column-wise validation, the ``Scenario`` model) and the catalog.

>>> number(" 1e3 "), number(""), boolean("Y"), choice(" Own ", ("own", "rent"))
(1000.0, EMPTY, True, 'own')
>>> number("1_000")
Traceback (most recent call last):
economics.schema.values.ValueProblem: '1_000' is not a number
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable, Iterable
from decimal import Decimal
from enum import StrEnum
from numbers import Integral, Real
from typing import Any, Protocol

import numpy as np
import pandas as pd
from pydantic_core import PydanticCustomError, PydanticUseDefault

NUMBER_PATTERN = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
NUMBER = re.compile(NUMBER_PATTERN)
NON_FINITE_WORDS = frozenset({"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"})
"""Words for infinity: refused as "not a finite number" (``nan`` is simply not a number)."""
TRUE_WORDS = frozenset({"true", "yes", "y", "t", "1"})
FALSE_WORDS = frozenset({"false", "no", "n", "f", "0"})
ID_FIELDS = frozenset({"accelerator", "decode_accelerator", "new_accelerator", "model", "serving_stack",
                       "throughput_claim"})
"""Text fields holding catalog ids: compared lower-cased, like choices."""
LOWER_TEXT_FIELDS = ID_FIELDS | {"curves_sha256", "throughput_measured_for"}
"""Text fields read lower-cased: the catalog ids, a SHA-256 in hex and a configuration of catalog ids."""

MAX_NUMBER_CHARS = 100
"""A number written with more characters than this is refused (no real figure needs them; it bounds the work)."""
MAX_SHOWN_CHARS = 60
"""User text in a message is cut to this many characters (with a count of the rest)."""


class _Empty:
    """The marker for an empty value; the field's default applies."""

    _instance: _Empty | None = None

    def __new__(cls) -> _Empty:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "EMPTY"

    def __bool__(self) -> bool:
        return False


EMPTY = _Empty()


class FieldKind(StrEnum):
    """How a field's values are read (:func:`parse`): a number, a whole number, a flag, one of the field's choices,
    or text. The value is the word the schema's documents show (``GET /v1/fields``, the MCP tool ``fields``).

    >>> FieldKind.INT.numeric, FieldKind.BOOL.numeric
    (True, False)
    """

    STR = "str"
    FLOAT = "float"
    INT = "int"
    BOOL = "bool"
    CHOICE = "choice"

    numeric: bool
    """Whether values of this kind are numbers (a float or a whole number): they have units and bounds. Set on each
    member, not a property: it is read per field on every scenario's way in (a property costs 6x as much)."""

    def __init__(self, value: str) -> None:
        self.numeric = value in ("float", "int")

    @property
    def python_type(self) -> type:
        """The Python type of a parsed value of this kind (a choice is its text)."""
        return _PYTHON_TYPES[self]


_FLOAT, _BOOL, _CHOICE = FieldKind.FLOAT, FieldKind.BOOL, FieldKind.CHOICE
"""Members read on the per-value paths: on Python 3.11 a member read off its class goes through
``EnumType.__getattr__``'s hook, about 170 ns against 15 ns for a module name (docs/speed.md, ``tidy8``)."""
_PYTHON_TYPES = {FieldKind.STR: str, FieldKind.FLOAT: float, FieldKind.INT: int, FieldKind.BOOL: bool,
                 FieldKind.CHOICE: str}


class ValueProblem(ValueError):
    """A value of a usable type that is not a valid value (``'abc'`` for a number); the message shows it."""


class CellTypeError(TypeError):
    """A value of a type no field can hold (a list, a dict, bytes, a date)."""


class Spec(Protocol):
    """What the parser needs to know about a field (:class:`economics.schema.scenario.FieldSpec` has it)."""

    @property
    def name(self) -> str:
        """The field's name."""

    @property
    def kind(self) -> FieldKind:
        """How its values are read."""

    @property
    def choices(self) -> tuple[str, ...]:
        """The values a ``choice`` field accepts (lower case)."""


def choice_words(kind: type[StrEnum]) -> list[str]:
    """The values of an enum's members in order, as plain text: a command line option's ``choices``, so that
    argparse's "invalid choice" message lists the words people type, not the members' reprs.

    >>> choice_words(FieldKind)[:2]
    ['str', 'float']
    """
    return [str(member.value) for member in kind]


def shown(value: Any, limit: int = MAX_SHOWN_CHARS) -> str:
    r"""A value as plain, safe text for a message: control characters escaped, long text shortened with a count.

    >>> shown("a\x1b[31mb")
    'a\\x1b[31mb'
    >>> shown("x" * 100, 10)
    'xxxxxxxxxx… (100 characters)'
    """
    text = value if isinstance(value, str) else _repr(value)
    if len(text) > limit:
        return escape_controls(text[:limit]) + f"… ({len(text):,} characters)"
    return escape_controls(text)


def whole_number_option(what: str, low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number in ASCII digits (``1_000`` and non-ASCII digits refused, as in every file),
    within [low, high] when given, with a message naming what the option means.

    >>> whole_number_option("samples", 1, 10)("7")
    7
    >>> whole_number_option("samples")("1_000")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: samples must be a whole number, got '1_000'
    """
    def parse(text: str) -> int:
        t = text.strip()
        if not (t.isascii() and t.lstrip("+-").isdigit() and len(t) <= 30):
            raise argparse.ArgumentTypeError(f"{what} must be a whole number, got '{shown(text, 40)}'")
        n = int(t)
        if (low is not None and n < low) or (high is not None and n > high):
            raise argparse.ArgumentTypeError(f"{what} must be >= {low:,} and <= {high:,}, got {n:,}")
        return n
    return parse


MAX_SHOWN_PATH_CHARS = 400
"""A path in a message is shown whole up to this many characters (a path cut at 60 no longer says which file)."""


def shown_path(path: str) -> str:
    r"""A file path as plain, safe text for a message: control characters escaped, whole up to
    :data:`MAX_SHOWN_PATH_CHARS`; a longer one keeps its end, where the file's name is.

    >>> shown_path("/tmp/" + "d/" * 300 + "scenarios.csv")[-40:]
    'd/d/d/d/d/scenarios.csv (618 characters)'
    """
    if len(path) > MAX_SHOWN_PATH_CHARS:
        return "…" + escape_controls(path[-MAX_SHOWN_PATH_CHARS:]) + f" ({len(path):,} characters)"
    return escape_controls(path)


def _repr(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    try:
        return repr(value) if isinstance(value, (list, tuple, dict, set, bytes, Decimal)) else str(value)
    except Exception:  # a user object whose str() fails: its type is still worth naming
        return f"<{type(value).__name__}>"


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff"
                      r"\ud800-\udfff]")
LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
"""Half of a UTF-16 pair on its own (JSON's ``"\ud800"``): a valid JSON string, but no character, so no UTF-8
text can hold it."""


def escape_controls(text: str) -> str:
    r"""Control characters, bidirectional overrides, invisible characters (zero-width space and joiners, word
    joiner, byte-order mark) and lone surrogates as ``\xNN`` / ``\uNNNN``, so a terminal shows them and any
    message can be written as UTF-8.

    >>> escape_controls("bell\x07 tab\t"), escape_controls("half \ud800")
    ('bell\\x07 tab\\x09', 'half \\ud800')
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}",
                        text)


_BIDI_CONTROLS = re.compile(r"[\u202a-\u202e\u2066-\u2069]")


def without_bidi_controls(text: str) -> str:
    r"""Text with the bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) removed, for
    a document that would obey them (a name with a right-to-left override prints its letters reversed). The
    direction marks (U+200E, U+200F) only steer neutral characters and stay.

    >>> without_bidi_controls("fleet‮gnp.exe")
    'fleetgnp.exe'
    """
    return _BIDI_CONTROLS.sub("", text)


def escape_for_terminal(text: str) -> str:
    r"""Text for a terminal: every control character escaped as :func:`escape_controls` does, except the line
    break (a multi-line report stays multi-line; a carriage return, which would overwrite a line, is escaped).

    >>> escape_for_terminal("name = \x1b]0;title\x07\nnext")
    'name = \\x1b]0;title\\x07\nnext'
    """
    return "\n".join(escape_controls(line) for line in text.split("\n"))


def capped(items: Iterable[str], noun: str, limit: int = 10) -> str:
    """``a, b, c and 9,990 more <noun>``: at most ``limit`` items listed, the rest counted.

    >>> capped([f"'c{i}'" for i in range(12)], "unknown columns", 3)
    "'c0', 'c1', 'c2' and 9 more unknown columns"
    """
    items = list(items)
    head = ", ".join(items[:limit])
    rest = len(items) - limit
    return head + (f" and {rest:,} more {noun}" if rest > 0 else "")


def is_empty(value: Any) -> bool:
    """None, NaN, ``pd.NA``/``NaT``, a NaN Decimal or whitespace-only text."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, str):
        return value.strip() == ""
    if isinstance(value, Decimal):
        return value.is_nan()
    if isinstance(value, (float, np.floating)):
        return bool(np.isnan(value))
    return False


def _type_error(value: Any, what: str) -> CellTypeError:
    return CellTypeError(f"{shown(value)} ({type(value).__name__}) is not {what}")


def number(value: Any) -> float | _Empty:
    """A finite float or :data:`EMPTY`; raises :class:`ValueProblem` or :class:`CellTypeError`.

    >>> number("-.5e1"), number(3), number(Decimal("0.25"))
    (-5.0, 3.0, 0.25)
    """
    if type(value) is float:  # the usual cell (a Scenario's every number): the same outcome as the checks below
        if value != value:
            return EMPTY
        if math.isfinite(value):
            return value
        raise ValueProblem(f"{shown(value)} is not a finite number")
    if is_empty(value):
        return EMPTY
    if isinstance(value, (bool, np.bool_)):
        raise ValueProblem(f"{str(bool(value)).lower()} is not a number")
    if isinstance(value, str):
        return _number_from_text(value.strip())
    if isinstance(value, (complex, np.complexfloating)):  # float() would drop the imaginary part
        raise ValueProblem(f"{shown(value)} is not a real number")
    if isinstance(value, (Integral, Real, Decimal, np.number)):
        try:
            x = float(value)
        except OverflowError:
            x = math.inf
        if not math.isfinite(x):
            raise ValueProblem(f"{shown(value)} is not a finite number")
        return x
    raise _type_error(value, "a number")


def _number_from_text(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARS:
        raise ValueProblem(f"'{shown(text)}' is not a number (longer than {MAX_NUMBER_CHARS} characters)")
    if NUMBER.fullmatch(text):
        x = float(text)
        if math.isfinite(x):
            return x
        raise ValueProblem(f"{shown(text)} is not a finite number")
    if text.lower() in NON_FINITE_WORDS:
        raise ValueProblem(f"{shown(text)} is not a finite number")
    raise ValueProblem(f"'{shown(text)}' is not a number")


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different (``json.loads(..., object_pairs_hook=unique_keys)``): a repeated
    key, of which the last would silently win, is a :class:`ValueProblem`, as a CSV's repeated column is refused.
    Scenario JSON and benchmark JSON are read with this one rule.

    >>> import json
    >>> json.loads('{"a": 1, "a": 2}', object_pairs_hook=unique_keys)
    Traceback (most recent call last):
    economics.schema.values.ValueProblem: the key 'a' appears twice in one object
    """
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueProblem(f"the key '{shown(key)}' appears twice in one object")
        out[key] = value
    return out


def whole(x: float) -> int:
    """An integer field's value: ``x`` when it is whole, else :class:`ValueProblem`.

    >>> whole(8.0)
    8
    """
    if not float(x).is_integer():
        raise ValueProblem(f"must be a whole number, got {shown(x)}")
    return int(x)


def boolean(value: Any) -> bool | _Empty:
    """True/False or :data:`EMPTY` from a word (true/false, yes/no, y/n, t/f, 1/0), a bool, or the number 0 or 1.

    >>> boolean(" No "), boolean(1), boolean("t")
    (False, True, True)
    """
    if is_empty(value):
        return EMPTY
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str):
        low = value.strip().lower()
        if low in TRUE_WORDS:
            return True
        if low in FALSE_WORDS:
            return False
        raise ValueProblem(f"'{shown(value.strip())}' is not true or false")
    if isinstance(value, (Integral, Real, Decimal, np.number)):
        if value == 1 or value == 0:
            return bool(value == 1)
        raise ValueProblem(f"{shown(value)} is not true or false")
    raise _type_error(value, "true or false")


def text(value: Any, lower: bool = False) -> str | _Empty:
    """Stripped text (lower-cased for ids and choices) or :data:`EMPTY`; numbers become their text.

    >>> text("  B200 ", lower=True), text(7)
    ('b200', '7')
    """
    if is_empty(value):
        return EMPTY
    if isinstance(value, str):
        out = value.strip()
    elif isinstance(value, (Integral, Real, Decimal, np.number)) and not isinstance(value, (bool, np.bool_)):
        out = str(value.item() if isinstance(value, np.generic) else value)
    elif isinstance(value, (bool, np.bool_)):
        out = "true" if value else "false"
    else:
        raise _type_error(value, "text")
    return out.lower() if lower else out


def choice(value: Any, choices: tuple[str, ...]) -> str | _Empty:
    """One of ``choices`` (case and surrounding space ignored) or :data:`EMPTY`."""
    word = text(value, lower=True)
    if word is EMPTY or word in choices:
        return word
    raise ValueProblem(f"'{shown(word)}' is not one of {', '.join(choices)}")


def parse(spec: Spec, value: Any) -> Any:
    """The value of field ``spec`` from any input: float/int/bool/str or :data:`EMPTY` (bounds not checked).

    >>> from economics.schema.scenario import FIELDS
    >>> parse(FIELDS["accelerator_count"], " 64 "), parse(FIELDS["rent_includes_energy"], "f")
    (64, False)
    """
    if spec.kind.numeric:
        x = number(value)
        if isinstance(x, _Empty) or spec.kind is _FLOAT:
            return x
        return whole(x)
    if spec.kind is _BOOL:
        return boolean(value)
    if spec.kind is _CHOICE:
        return choice(value, spec.choices)
    return text(value, lower=spec.name in LOWER_TEXT_FIELDS)


FEW_TEXTS = 16
"""Up to this many texts, :func:`numbers_from_text` reads them one by one: pandas' string methods cost about 0.5 ms
a call whatever the length, and a one-row table's validation parses some 60 number columns."""


def numbers_from_text(texts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised :func:`number` over stripped texts: (values with NaN for empty, not-a-number mask, non-finite mask).

    The same grammar and the same ``float()`` as the scalar parser, over whole arrays (a million cells fast); up to
    :data:`FEW_TEXTS` texts, the same tests in a plain loop (:func:`_few_numbers_from_text`).

    >>> values, not_number, nonfinite = numbers_from_text(np.array(["1e3", "", "x", "-inf", "1e999"], dtype=object))
    >>> values.tolist()[:2], not_number.tolist(), nonfinite.tolist()
    ([1000.0, nan], [False, False, True, False, False], [False, False, False, True, True])
    """
    if len(texts) <= FEW_TEXTS:
        return _few_numbers_from_text(texts)
    return _numbers_from_text_table(texts)


def _numbers_from_text_table(texts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`numbers_from_text` through pandas' string methods, once per array."""
    series = pd.Series(texts, dtype=object)
    empty = (series == "").to_numpy(dtype=bool)
    ok = (series.str.fullmatch(NUMBER_PATTERN).to_numpy(dtype=bool, na_value=False)
          & (series.str.len() <= MAX_NUMBER_CHARS).to_numpy(dtype=bool, na_value=False))
    values = np.full(len(series), np.nan)
    values[ok] = series[ok].to_numpy(dtype=object).astype(float)
    infinite = ok & np.isinf(values)
    words = ~ok & ~empty & series.str.lower().isin(NON_FINITE_WORDS).to_numpy(dtype=bool)
    values[infinite] = np.nan
    return values, ~ok & ~empty & ~words, infinite | words


def _few_numbers_from_text(texts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`numbers_from_text` text by text, with the table path's tests in its order: '' is empty; a text of at
    most :data:`MAX_NUMBER_CHARS` that :data:`NUMBER` matches whole is its ``float()`` (non-finite when that
    overflows); one of :data:`NON_FINITE_WORDS` (any case) is non-finite; anything else, a cell that is not a
    string included (pandas' string methods give it NA), is not a number.
    """
    values = np.full(len(texts), np.nan)
    not_number = np.zeros(len(texts), dtype=bool)
    nonfinite = np.zeros(len(texts), dtype=bool)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            not_number[i] = True
        elif t == "":
            continue
        elif len(t) <= MAX_NUMBER_CHARS and NUMBER.fullmatch(t):
            x = float(t)
            if math.isinf(x):
                nonfinite[i] = True
            else:
                values[i] = x
        elif t.lower() in NON_FINITE_WORDS:
            nonfinite[i] = True
        else:
            not_number[i] = True
    return values, not_number, nonfinite


_PARSED: dict[tuple[int, type, Any], tuple[Spec, Any]] = {}
"""What :func:`for_model` parsed, per field, type and value of a text, whole number or flag (a scenario's ids,
choices and counts: the same few values on every call of the app): (the field's spec, the parsed value)."""
PARSED_AT_MOST = 4096
"""Values :data:`_PARSED` holds before it starts again (names and other free texts are seldom read twice)."""


def for_model(spec: Spec, value: Any) -> Any:
    """:func:`parse` for a pydantic field validator: EMPTY -> None (optional field) or the default; a bad value
    -> a pydantic error whose message is the parser's. Bounds are left to the model. A text, whole number or flag
    parsed once is remembered (:data:`_PARSED`; parse is a pure function of the field and the value).
    """
    if type(value) is float and spec.kind is _FLOAT and math.isfinite(value):
        return value  # a Scenario's usual number: what parse() returns for it, without its three calls
    key = (id(spec), type(value), value) if type(value) in (str, int, bool) else None
    if key is not None and (seen := _PARSED.get(key)) is not None and seen[0] is spec:
        return seen[1]
    try:
        parsed = EMPTY if value is None else parse(spec, value)  # None is empty for every kind (is_empty)
    except (ValueProblem, CellTypeError) as exc:
        raise PydanticCustomError("value", "{reason}", {"reason": str(exc)}) from None
    if parsed is EMPTY:
        if getattr(spec, "optional", False):
            return None
        raise PydanticUseDefault()
    if key is not None:
        if len(_PARSED) >= PARSED_AT_MOST:
            _PARSED.clear()
        _PARSED[key] = (spec, parsed)
    return parsed
