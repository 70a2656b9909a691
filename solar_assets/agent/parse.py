"""The chat model's reply as an IR ``Program``: JSON (bare or in a fenced block) validated by the
pydantic models. The reply is data; a reply that does not parse becomes diagnostics for the next
attempt, never an exception that stops the loop.

A reply is bounded before anything recursive reads it: at most ``MAX_REPLY_CHARS`` characters,
JSON nested at most ``MAX_JSON_DEPTH`` deep, and each string in it (an expression, a subscript)
at most ``MAX_EXPR_CHARS`` long and ``MAX_EXPR_DEPTH`` deep as a Python expression. Python's
parser and the IR's recursive walkers would otherwise meet a 200,000-deep expression with a
``MemoryError`` or ``RecursionError``; the limits are far above what any lowering writes (the
tracer's deepest expression is about 10 levels) and turn such a reply into a diagnostic.
"""
from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from typing import Any

from pydantic import ValidationError

from ir_schemas import Program

MAX_SCHEMA_ERRORS = 8
MAX_REPLY_CHARS = 512 * 1024
MAX_JSON_DEPTH = 64
MAX_EXPR_CHARS = 16 * 1024
MAX_EXPR_DEPTH = 100
_JSON_TOKEN = re.compile(r'\\.|["\[\]{}]', re.DOTALL)  # an escape pair, a quote or a bracket
_BRACKETS = re.compile(r"[\[\]{}()]")
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n(.*?)```", re.DOTALL)


class ReplyError(ValueError):
    """A reply that is not a Program; ``diagnostics`` say why, one message each."""

    def __init__(self, diagnostics: list[str]):
        super().__init__("; ".join(diagnostics))
        self.diagnostics = diagnostics


def reply_text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content
                       if isinstance(b, str) or (isinstance(b, dict) and b.get("type", "text") == "text"))
    return str(content)


def extract_json(text: str) -> str:
    """The JSON text of a reply: the first ```json block (or the first fenced block holding an
    object), else everything from the first '{' to the last '}'."""
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(text)]
    for lang, body in blocks:
        if lang == "json":
            return body.strip()
    for _, body in blocks:
        if body.lstrip().startswith("{"):
            return body.strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ReplyError(["the reply holds no JSON object; reply with the Program as one JSON object"])
    return text[start:end + 1]


def parse_program(text: str) -> Program:
    """The reply as a Program; ``ReplyError`` with the size, JSON or schema errors otherwise."""
    if len(text) > MAX_REPLY_CHARS:
        raise ReplyError([f"the reply is {len(text):,} characters long; the limit is {MAX_REPLY_CHARS:,}: "
                          "reply with the Program alone, one JSON object"])
    raw = extract_json(text)
    depth = _json_nesting(raw)
    if depth > MAX_JSON_DEPTH:
        raise ReplyError([f"the reply's JSON is nested {depth:,} deep; the limit is {MAX_JSON_DEPTH}"])
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        line = raw.splitlines()[e.lineno - 1] if 0 < e.lineno <= len(raw.splitlines()) else ""
        raise ReplyError([f"the reply is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}"
                          + (f": {line.strip()[:120]!r}" if line else "")]) from None
    if not isinstance(data, dict):
        raise ReplyError([f"the reply's JSON is a {type(data).__name__}, not a Program object"])
    problems = [p for where, value in _strings(data) if (p := expression_problem(value, where))]
    if problems:
        raise ReplyError(problems[:MAX_SCHEMA_ERRORS])
    try:
        return Program.model_validate(data)
    except ValidationError as e:
        errors = e.errors()
        messages = [f"schema: {'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
                    + (f" (got {_short(err.get('input'))})" if "input" in err and err["type"] != "missing" else "")
                    for err in errors[:MAX_SCHEMA_ERRORS]]
        if len(errors) > MAX_SCHEMA_ERRORS:
            messages.append(f"schema: … and {len(errors) - MAX_SCHEMA_ERRORS} more errors")
        raise ReplyError(messages) from None


def _short(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def expression_problem(text: str, where: str) -> str:
    """Why the string at ``where`` is too deeply nested or too long to parse safely ('' if not).

    The bracket nesting is counted first, without parsing; then the length; then Python's parser
    (whose stack overflow is a ``MemoryError`` or ``RecursionError``, caught here) and the depth
    of the tree it builds, which also counts chains of operators (``- - - x``, ``a + b + ...``)."""
    advice = "split the computation into kernels over intermediate tensors"
    depth = _nesting(text)
    if depth > MAX_EXPR_DEPTH:
        return f"{where}: the expression is nested {depth:,} brackets deep; the limit is {MAX_EXPR_DEPTH}: {advice}"
    if len(text) > MAX_EXPR_CHARS:
        return f"{where}: the string is {len(text):,} characters long; the limit is {MAX_EXPR_CHARS:,}: {advice}"
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return ""  # not an expression (a name, a dtype) or a bad one: the IR checker says which
    except (MemoryError, RecursionError):  # the parser's own stack overflowed: deep by far
        return f"{where}: the expression is nested too deeply for Python's parser; the limit is {MAX_EXPR_DEPTH}: {advice}"
    depth = _tree_depth(tree)
    if depth > MAX_EXPR_DEPTH:
        return f"{where}: the expression is nested {depth:,} operations deep; the limit is {MAX_EXPR_DEPTH}: {advice}"
    return ""


def _nesting(text: str) -> int:
    """Deepest bracket nesting of ``text`` (all of ``([{``, unbalanced text counted as written)."""
    depth = deepest = 0
    for ch in _BRACKETS.findall(text):
        depth += 1 if ch in "([{" else -1
        deepest = max(deepest, depth)
    return deepest


def _json_nesting(raw: str) -> int:
    """Deepest ``[``/``{`` nesting of JSON text, brackets inside strings not counted; one pass."""
    depth = deepest = 0
    in_string = False
    for m in _JSON_TOKEN.finditer(raw):
        token = m.group()
        if token[0] == "\\":
            continue
        if token == '"':
            in_string = not in_string
        elif not in_string:
            depth += 1 if token in "[{" else -1
            deepest = max(deepest, depth)
    return deepest


def _tree_depth(tree: ast.AST) -> int:
    """Depth of an AST, walked with an explicit stack (no recursion)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _strings(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """Every string in parsed JSON with its dotted location (``steps.2.expr``), without recursion."""
    stack = [(where, value)]
    while stack:
        at, v = stack.pop()
        if isinstance(v, str):
            yield at or "<root>", v
        elif isinstance(v, dict):
            stack.extend((f"{at}.{k}" if at else str(k), x) for k, x in reversed(list(v.items())))
        elif isinstance(v, list):
            stack.extend((f"{at}.{i}" if at else str(i), x) for i, x in reversed(list(enumerate(v))))
