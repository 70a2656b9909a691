"""The frameworks' own op surface (PyTorch's OpInfo database, JAX's primitive harnesses) as workload files.

Generated into a directory the caller owns (a temporary one in the bench and the tests), never
committed: the files follow the installed torch and jax.
"""
from solar_assets.coverage.op_surface.jax_harnesses import write_jax_files
from solar_assets.coverage.op_surface.torch_ops import OpFile, write_torch_files

__all__ = ["OpFile", "write_jax_files", "write_torch_files"]
