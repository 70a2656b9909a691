"""Log levels for solar's own loggers only: ``-vv`` means solar's DEBUG lines, not matplotlib's font
manager, numba's compiler passes or urllib3's connections (those stay at WARNING). Shared by the CLI
and the worker processes, which are spawned and so start with fresh logger levels."""
from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

SOLAR_LOGGERS = ("solar", "solar_assets", "ir_schemas")
QUIET_LOGGERS = ("matplotlib", "PIL", "numba", "jax", "jaxlib", "absl", "urllib3", "dagster", "httpx",
                 "httpcore", "asyncio", "filelock", "fsspec", "torch", "pyomo", "great_expectations", "langchain",
                 "alembic", "sqlalchemy", "grpc", "git", "distributed", "dask", "tornado", "bokeh")


def apply_levels(level: int) -> None:
    """``level`` for solar's loggers; third-party loggers no lower than WARNING."""
    for name in SOLAR_LOGGERS:
        logging.getLogger(name).setLevel(level)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(max(level, logging.WARNING))


def quiet_library_children() -> None:
    """Hold the loggers a library created below a quiet name to the quiet name's level: a module
    that sets its own level at import (great-expectations' ``data_context.types.base`` sets INFO,
    then logs "Created temporary directory" on every cold call) would otherwise print past it."""
    for name, found in list(logging.root.manager.loggerDict.items()):
        if isinstance(found, logging.Logger) and found.level != logging.NOTSET and "." in name:
            parent = name.split(".", 1)[0]
            if parent in QUIET_LOGGERS:
                floor = logging.getLogger(parent).getEffectiveLevel()
                if found.level < floor:
                    found.setLevel(floor)


def solar_level() -> int:
    """The level solar's loggers log at now (what a worker process should use)."""
    return logging.getLogger("solar_assets").getEffectiveLevel()


@contextlib.contextmanager
def fake_tensor_failures_quiet(shown_when_verbose: bool) -> Iterator[None]:
    """torch's fake-tensor mode logs every failing meta kernel with its traceback at ERROR
    (``failed while attempting to run meta for aten.mm.default`` and 20 lines), also where the
    failure is expected (a candidate validation size too small) or comes back as one line (an
    export error). Held to CRITICAL for the block; ``shown_when_verbose``: not while solar's
    loggers are at INFO or below (``-v``)."""
    fake = logging.getLogger("torch._subclasses.fake_tensor")
    if shown_when_verbose and logging.getLogger("solar_assets").isEnabledFor(logging.INFO):
        yield
        return
    before = fake.level
    fake.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        fake.setLevel(before)
