"""A :class:`~economics.schema.scenario.Scenario` from a dict of values the model has read before, without its
validators running again.

The model has no validator across fields: each field's value is read by the one value parser
(:func:`economics.schema.values.for_model`, a pure function of the field and the value) and then held to the
field's type and bounds. So what the model made of one field's value it makes of the same value again, whatever
the other fields, and a dict whose every value it has read before (or is a finite number within its float field's
bounds, which the parser and the model keep as it is) gives the model pydantic would build, copied from a blank
one with those values. Anything else (an unknown field, a value not seen, a bad one) is left to pydantic.
"""

from __future__ import annotations

from typing import Any

from economics.schema.read_memo import value_key
from economics.schema.scenario import FIELDS, Scenario
from economics.schema.values import FieldKind

SEEN_AT_MOST = 4096
"""Values held before starting again (a scenario's ids, choices and counts: the same few on every call)."""

_SEEN: dict[tuple[str, tuple[type, Any]], tuple[Any]] = {}
"""(field, value as a key) -> (what the model made of it,)."""

_INF = float("inf")
_FLOAT_BOUNDS: dict[str, tuple[float, float, float, float]] = {
    name: (-_INF if spec.ge is None else spec.ge, -_INF if spec.gt is None else spec.gt,
           _INF if spec.le is None else spec.le, _INF if spec.lt is None else spec.lt)
    for name, spec in FIELDS.items() if spec.kind is FieldKind.FLOAT}
"""Each float field's bounds (ge, gt, le, lt), an absent one as infinity: every test below fails on NaN and on
either infinity, so a number within them is finite."""

_BLANK = Scenario.model_validate({})
"""Every field at its default, none given: what the copies start from."""


def _within(name: str, value: Any) -> bool:
    """Whether ``value`` is a float of a float field, finite and within its bounds."""
    bounds = _FLOAT_BOUNDS.get(name)
    if bounds is None or type(value) is not float:
        return False
    ge, gt, le, lt = bounds
    return value >= ge and value > gt and value <= le and value < lt


def scenario_of(given: dict[str, Any]) -> Scenario | None:
    """The Scenario ``Scenario.model_validate(given)`` would give, when every value of ``given`` is known (else
    None): the same field values and the same fields given.

    >>> known = scenario_of({"pue": 1.3}); known.pue, known.model_fields_set
    (1.3, {'pue'})
    >>> scenario_of({"pue": 0.5}) is None, scenario_of({"not_a_field": 1.0}) is None
    (True, True)
    """
    update: dict[str, Any] = {}
    for name, value in given.items():
        if _within(name, value):
            update[name] = value  # what the parser returns for a finite float, and within the bounds
            continue
        try:
            seen = _SEEN.get((name, value_key(value)))
        except TypeError:  # not hashable: pydantic says what it is
            return None
        if seen is None:
            return None
        update[name] = seen[0]
    return _BLANK.model_copy(update=update)


def remember(given: dict[str, Any], scenario: Scenario) -> None:
    """Keep what the model made of each value of ``given`` (``scenario`` is ``Scenario.model_validate(given)``);
    a float field's finite numbers within its bounds are not kept (:func:`scenario_of` takes them as they are).
    """
    if len(_SEEN) + len(given) > SEEN_AT_MOST:
        _SEEN.clear()
    made = scenario.__dict__
    for name, value in given.items():
        if _within(name, value):
            continue
        try:
            _SEEN[(name, value_key(value))] = (made[name],)
        except TypeError:
            continue
