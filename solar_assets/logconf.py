"""Log levels for solar's own loggers only: ``-vv`` means solar's DEBUG lines, not matplotlib's font
manager, numba's compiler passes or urllib3's connections (those stay at WARNING). Shared by the CLI
and the worker processes, which are spawned and so start with fresh logger levels."""
from __future__ import annotations

import logging

SOLAR_LOGGERS = ("solar", "solar_assets", "ir_schemas")
QUIET_LOGGERS = ("matplotlib", "PIL", "numba", "jax", "jaxlib", "absl", "urllib3", "dagster", "httpx",
                 "httpcore", "asyncio", "filelock", "fsspec", "torch", "pyomo", "great_expectations", "langchain",
                 "alembic", "sqlalchemy", "grpc", "git")


def apply_levels(level: int) -> None:
    """``level`` for solar's loggers; third-party loggers no lower than WARNING."""
    for name in SOLAR_LOGGERS:
        logging.getLogger(name).setLevel(level)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(max(level, logging.WARNING))


def solar_level() -> int:
    """The level solar's loggers log at now (what a worker process should use)."""
    return logging.getLogger("solar_assets").getEffectiveLevel()
