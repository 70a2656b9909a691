"""The thin Dagster layer: assets over the stage functions in ``solar_assets.pipeline``.

Nothing outside this package (and ``solar_assets.dagster_defs.definitions`` / the CLI) imports Dagster.
"""
