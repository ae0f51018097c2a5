"""A request's whole-number arguments, read one way for every route and mode.

JSON has one number type: `5` and `5.0` are the same number to it, and JSON Schema's "integer"
takes any number with no fraction. Some agent hosts send every number as a float, so an
argument the tool's schema calls an integer arrives as 5.0; refused, the agent could not mend
its call, its value being an integer already.
"""

from __future__ import annotations

from typing import Any

from vaultmind.errors import UsageError

_KINDS = {None: "an integer", 0: "a non-negative integer", 1: "a positive integer"}


def whole_number(value: Any, name: str, *, least: int | None = None) -> int | None:
    """`value` as an int (at least `least`, when given): an int, or a float with no fraction
    (5.0); None for None. true and false, 1.5, infinity, NaN, a string are refused, as a number
    below `least` is, naming the argument as `name` says it ("'limit'")."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or (least is not None and value < least):
        raise UsageError(f"{name} must be {_KINDS.get(least, f'an integer of at least {least}')}")
    return value
