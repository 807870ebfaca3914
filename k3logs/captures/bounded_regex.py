"""Regexes that come from a bundle (a tool schema's `pattern`, its `patternProperties`) run with a time limit:
a pattern such as ^(a+)+$ takes exponential time in a backtracking engine, and Python's `re` cannot be
stopped. The `regex` package's searches take a timeout; a pattern that runs out of time is not run again, and
once the process has spent BUDGET_S waiting on such patterns, none is run any more. A check that gives up
raises GaveUp, which says why (the caller reports it as a check not made, never as a pass or a failure)."""
from __future__ import annotations

import time
from functools import lru_cache

import regex

SEARCH_S = 0.05    # one search
BUDGET_S = 2.0     # every search that ran out of time, in one process


class GaveUp(Exception):
    """A pattern could not be applied within its time (or cannot be compiled)."""


_slow: set[str] = set()
_spent = 0.0


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> regex.Pattern:
    try:
        return regex.compile(pattern)
    except (regex.error, TypeError, ValueError, OverflowError, RecursionError) as e:
        raise GaveUp(f"the pattern {pattern[:80]!r} does not compile ({e})") from e


def search(pattern: str, text: str) -> bool:
    """Whether `pattern` matches somewhere in `text`, within SEARCH_S."""
    global _spent
    if pattern in _slow:
        raise GaveUp(f"the pattern {pattern[:80]!r} ran out of time before; not run again")
    if _spent >= BUDGET_S:
        raise GaveUp(f"patterns from the bundle already took {BUDGET_S:g} s; no more are run")
    compiled = _compiled(pattern)
    start = time.monotonic()
    try:
        return compiled.search(text, timeout=SEARCH_S) is not None
    except TimeoutError as e:
        _slow.add(pattern)
        _spent += time.monotonic() - start
        raise GaveUp(f"the pattern {pattern[:80]!r} took more than {SEARCH_S:g} s on a value "
                     f"{len(text)} characters long (catastrophic backtracking?); not checked") from e


# ------------------------------------------------------------------------------------------------------
# jsonschema's keywords that run a schema's regexes, on the bounded engine
# ------------------------------------------------------------------------------------------------------
def _pattern(validator, patrn, instance, schema):
    from jsonschema.exceptions import ValidationError
    if validator.is_type(instance, "string") and not search(patrn, instance):
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(validator, patterns, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    for patrn, subschema in patterns.items():
        for k, v in instance.items():
            if search(patrn, k):
                yield from validator.descend(v, subschema, path=k, schema_path=patrn)


def _additional_properties(validator, ap, instance, schema):
    from jsonschema.exceptions import ValidationError
    if not validator.is_type(instance, "object"):
        return
    properties, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
    extras = sorted((k for k in instance if k not in properties and not any(search(p, k) for p in patterns)),
                    key=str)
    if validator.is_type(ap, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], ap, path=extra)
    elif not ap and extras:
        if patterns:
            yield ValidationError(f"{', '.join(map(repr, extras))} {'does' if len(extras) == 1 else 'do'} not "
                                  f"match any of the regexes: {', '.join(map(repr, sorted(patterns)))}")
        else:
            yield ValidationError(f"Additional properties are not allowed ({', '.join(map(repr, extras))} "
                                  f"{'was' if len(extras) == 1 else 'were'} unexpected)")


@lru_cache(maxsize=None)
def bounded_validator(cls):
    """`cls` (a jsonschema validator class) whose schema regexes run on the bounded engine."""
    import jsonschema
    return jsonschema.validators.extend(cls, {"pattern": _pattern, "patternProperties": _pattern_properties,
                                              "additionalProperties": _additional_properties})


def unbounded_regexes(schema) -> bool:
    """Whether a schema would run its patternProperties where this module cannot bound them
    (unevaluatedProperties finds the keys they cover with `re`)."""
    found = {"patternProperties": False, "unevaluatedProperties": False}
    stack, seen = [schema], 0
    while stack and seen < 100_000:
        node = stack.pop()
        seen += 1
        if isinstance(node, dict):
            for k in found:
                found[k] = found[k] or k in node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return all(found.values())
