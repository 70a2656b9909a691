"""How much of a directory of workloads solar covers: translated, validated, at what size.

``solar coverage DIR`` runs ``run_coverage`` over the directory's workload files with the plain
pipeline stages (no Dagster) and the pipeline's caches, and prints ``format_coverage``, whose last
line is ``coverage: N/M translated, K/M validated``. ``flop_reference`` (imported on its own: it
needs torch) counts a workload with torch's FlopCounterMode next to solar's MACs.
"""
from solar_assets.coverage.workload import CoverageRow, check_workload, unlowered_op
from solar_assets.coverage.runner import run_coverage
from solar_assets.coverage.table import coverage_json, coverage_summary, format_coverage

__all__ = [
    "CoverageRow", "check_workload", "coverage_json", "coverage_summary", "format_coverage",
    "run_coverage", "unlowered_op",
]
