"""What materialising each asset partition computes, as plain functions over plain data: the value,
its content-hash data version and the metadata a person reads in the UI (``Computed``).

No Dagster here. ``solar_assets.dagster_defs.assets`` wraps each function in a ``@dg.asset`` (the
Dagster wiring, thin, in one place); the workers of ``solar analyze`` call them directly
(``asset_compute.worker``), so a worker never imports Dagster (~1 s of every call, and a larger
process to start and stop). ``asset_compute.graph`` declares each asset's partitioning, inputs and
code version once; a test checks that the Dagster asset graph is the same.
"""
