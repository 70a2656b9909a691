"""The stage chain: source → IR → validation → einsum graph → bounds → report row.

``config`` (``RunConfig``: the run's options), ``artifacts`` (the typed values between stages),
``stages`` (one function per stage), ``progress`` (stage-start events) and ``run`` (the chain,
and ``validate_ir``, the part ``solar coverage`` runs). ``solar_assets.pipeline`` is the older
facade over the same functions.
"""
from solar_assets.chain.artifacts import BoundsRow, SizeChoice, ValidatedIR, WorkloadResult
from solar_assets.chain.config import RunConfig
from solar_assets.progress import progress_listener
from solar_assets.chain.run import STAGES, ChainState, Kept, analyze_workload, validate_ir

__all__ = ["BoundsRow", "ChainState", "Kept", "RunConfig", "STAGES", "SizeChoice", "ValidatedIR", "WorkloadResult",
           "analyze_workload", "progress_listener", "validate_ir"]
