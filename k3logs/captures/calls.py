"""One tool call checked: its function named among the request's tools, its arguments parsed and held against the
tool's JSON schema (patterns from a bundle run with a time limit), markup leaked into content, and what a gateway
changed of what the model said."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from k3logs.catalogue.read import read_toml_or_raise
from k3logs.resources import data_dir


# ------------------------------------------------------------------------------------------------------
# one call
# ------------------------------------------------------------------------------------------------------
def tools_of(request: dict | None) -> dict[str, object]:
    """Tool name -> its parameters schema (None: any arguments)."""
    tools = (request or {}).get("tools") or [{"function": f} for f in (request or {}).get("functions") or []]
    out = {}
    for t in tools if isinstance(tools, list) else []:
        f = t.get("function") if isinstance(t, dict) and isinstance(t.get("function"), dict) else None
        if f and isinstance(f.get("name"), str):
            out[f["name"]] = f.get("parameters")
    return out


def _messages(response: dict | None) -> list[tuple[int, dict]]:
    """(choice index, message) of every answer of a chat completion."""
    choices = (response or {}).get("choices")
    return [(ci, c["message"]) for ci, c in enumerate(choices if isinstance(choices, list) else [])
            if isinstance(c, dict) and isinstance(c.get("message"), dict)]


def calls_of(response: dict | None) -> list[tuple[int, object]]:
    """(choice index, call) of every tool call of a chat completion."""
    return [(ci, call) for ci, msg in _messages(response)
            for call in (msg["tool_calls"] if isinstance(msg.get("tool_calls"), list) else [])]


def leaks_of(response: dict | None) -> list[str]:
    """The first markup literal in the text of each answer that holds one."""
    out = []
    for _, msg in _messages(response):
        content = msg.get("content")
        if isinstance(content, str):
            hit = next((lit for lit in markup() if lit in content), None)
            if hit:
                out.append(hit)
    return out


def function_of(call) -> dict:
    return call.get("function") if isinstance(call, dict) and isinstance(call.get("function"), dict) else {}


@lru_cache(maxsize=256)
def _validator(schema_json: str):
    """The validator of one tool schema (by its JSON text: checking a schema costs far more than a call),
    or the note saying why it cannot be applied."""
    import jsonschema
    import referencing

    from .bounded_regex import bounded_validator, unbounded_regexes
    schema = json.loads(schema_json)
    if unbounded_regexes(schema):
        return ("the tool's parameters use patternProperties with unevaluatedProperties, whose regexes k3logs "
                "cannot run with a time limit; not checked")
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
        cls = bounded_validator(cls)  # (the schema's regexes come from the bundle: never run unbounded)
    except jsonschema.SchemaError as e:
        return f"the tool's parameters are not a valid JSON schema ({e.message})"
    except Exception as e:  # a schema of a type no draft knows
        return f"the tool's parameters could not be applied ({type(e).__name__}: {e})"
    # an empty registry: jsonschema's default one would fetch a remote $ref (a URL from untrusted input)
    return cls(schema, registry=referencing.Registry())


def _schema_problem(schema, args) -> str | None:
    from jsonschema.exceptions import best_match

    from .bounded_regex import GaveUp
    validator = _validator(json.dumps(schema, sort_keys=True, default=str))
    if isinstance(validator, str):
        return "!" + validator
    try:
        err = best_match(validator.iter_errors(args))
    except GaveUp as e:
        return f"!the tool's parameters could not be checked: {e}"
    except Exception as e:  # an unresolvable $ref (never fetched), a schema regex Python cannot compile
        return f"!the tool's parameters could not be applied ({type(e).__name__}: {e})"
    if err is None:
        return None
    where = "/".join(str(p) for p in err.absolute_path) or "(arguments)"
    return f"{where}: {err.message}"


def call_problem(call, tools: dict[str, object]) -> tuple[str, str] | None:
    """(kind, detail) when a call is malformed by itself, None when it satisfies its tool's schema. A detail
    starting with '!' is a note about the request's schema, not a failure."""
    f = function_of(call)
    name, args = f.get("name"), f.get("arguments")
    if not isinstance(name, str) or not name:
        return "malformed_call", "the call has no function name"
    if name not in tools:
        return "unknown_tool", f"{name!r} is not one of the request's tools ({', '.join(sorted(tools)) or 'none'})"
    if not isinstance(args, str):
        return "malformed_call", f"arguments is {type(args).__name__}, not a JSON string"
    try:
        parsed = json.loads(args)
    except (ValueError, RecursionError) as e:
        return "arguments_not_json", f"arguments are not JSON ({e}): {args[:80]}"
    if not isinstance(parsed, dict):
        return "arguments_not_json", f"arguments are a JSON {type(parsed).__name__}, not an object: {args[:80]}"
    schema = tools[name]
    if schema is None:
        return None
    problem = _schema_problem(schema, parsed)
    return ("schema_violation", problem) if problem else None


def gateway_problem(raw, fwd) -> tuple[str, str] | None:
    """(kind, detail) when the forwarded copy of a good raw call is not the same call."""
    if fwd is None:
        return "lost_fields", "the forwarded response does not have this call"
    rf, ff = function_of(raw), function_of(fwd)
    lost = [k for k in ("id", "type")
            if isinstance(raw, dict) and raw.get(k) and not (isinstance(fwd, dict) and fwd.get(k))]
    lost += [f"function.{k}" for k in ("name", "arguments") if rf.get(k) and not ff.get(k)]
    if lost:
        return "lost_fields", f"the forwarded call lacks {', '.join(lost)}"
    if ff.get("name") != rf.get("name"):
        return "altered_arguments", f"forwarded as {ff.get('name')!r} instead of {rf.get('name')!r}"
    want, got = json.loads(rf["arguments"]), ff.get("arguments")
    if not isinstance(got, str):
        return "altered_arguments", f"arguments forwarded as a JSON {type(got).__name__}, not a string"
    try:
        once = json.loads(got)
    except (ValueError, RecursionError):
        return "altered_arguments", f"forwarded arguments are not JSON: {got[:80]}"
    if isinstance(once, str):
        try:
            if json.loads(once) == want:
                return "double_escaped", f"arguments JSON-encoded twice: {got[:80]}"
        except (ValueError, RecursionError):
            pass
    if isinstance(once, dict) and isinstance(want, dict) and once != want and set(once) < set(want) \
            and all(once[k] == want[k] for k in once):
        return "lost_fields", f"the forwarded arguments lack {', '.join(sorted(set(want) - set(once)))}"
    if once != want:
        return "altered_arguments", f"forwarded arguments {got[:60]} differ from the raw {rf['arguments'][:60]}"
    return None


def call_key(call) -> str:
    f = function_of(call)
    return json.dumps([f.get("name"), f.get("arguments")], default=str)


@lru_cache(maxsize=1)
def markup() -> tuple[str, ...]:
    return load_toolcall_data(data_dir("patterns") / "toolcalls.toml")


def load_toolcall_data(path: Path) -> tuple[str, ...]:
    """The literals of tool-call markup leaked into content (patterns/toolcalls.toml [[leaked_markup]])."""
    data, _ = read_toml_or_raise(path, "tool-call rules")
    return tuple(str(lit) for entry in data["leaked_markup"] for lit in entry["literals"])
