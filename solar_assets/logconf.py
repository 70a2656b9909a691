"""Log levels for solar's own loggers only: ``-vv`` means solar's DEBUG lines, not matplotlib's font
manager, numba's compiler passes or urllib3's connections (those stay at WARNING). Shared by the CLI
and the worker processes, which are spawned and so start with fresh logger levels."""
from __future__ import annotations

import logging

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
