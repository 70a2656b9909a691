"""Errors solar reports to a user. Each message names the file (or workload) and the fault."""
from __future__ import annotations

from pathlib import Path


class SolarError(Exception):
    """Base class of every error solar reports to a user; its message names the file and the fault."""


class IRError(SolarError, ValueError):
    """A program that is not valid Affine Loop IR; the message locates the fault."""


def one_line(message: str) -> str:
    """A multi-line message (one fault per line) as one line, faults separated by '; '."""
    return "; ".join(" ".join(line.split()) for line in message.splitlines() if line.strip())


def with_path(message: str, path: str | Path) -> str:
    """The message on one line, prefixed by the file when it does not name it already."""
    text = one_line(message)
    return text if str(path) in text or Path(path).name in text else f"{path}: {text}"
