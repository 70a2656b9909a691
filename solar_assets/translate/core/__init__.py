"""The lowering core shared by the PyTorch and JAX frontends: the program builder, the symbolic
views (the IR's affine type), the lowering context, the canonical elementwise table and one
implementation of each structured op (reduce, scan, conv, pool, gather). Imports no framework."""
