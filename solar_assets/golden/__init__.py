"""Golden outputs: the workload run by its own framework on seeded inputs, at its validation size
(chosen by ``solar_assets.sizing``)."""
from solar_assets.golden.golden import Golden, load_golden, make_golden, save_golden

__all__ = ["Golden", "load_golden", "make_golden", "save_golden"]
