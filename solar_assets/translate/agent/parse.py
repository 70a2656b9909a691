"""The chat model's reply as an IR ``Program``: JSON (bare or in a fenced block) validated by the
pydantic models. The reply is data; a reply that does not parse becomes diagnostics for the next
attempt, never an exception that stops the loop."""
from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from ir_schemas import Program

MAX_SCHEMA_ERRORS = 8
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
    """The reply as a Program; ``ReplyError`` with the JSON or schema errors otherwise."""
    raw = extract_json(text)
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        line = raw.splitlines()[e.lineno - 1] if 0 < e.lineno <= len(raw.splitlines()) else ""
        raise ReplyError([f"the reply is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}"
                          + (f": {line.strip()[:120]!r}" if line else "")]) from None
    if not isinstance(data, dict):
        raise ReplyError([f"the reply's JSON is a {type(data).__name__}, not a Program object"])
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
