"""The JAX path loads no torch: tracing, the golden run and the executor stay torch-free."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = textwrap.dedent("""
    import sys
    import numpy as np
    from solar_assets.execute import execute_program
    from solar_assets.golden.jax_golden import make_jax_golden
    from solar_assets.translate.jax_tracer import trace_jax
    from solar_assets.workloads import read_workload_source

    src = read_workload_source(sys.argv[1])
    program = trace_jax(src).program
    golden = make_jax_golden(src)
    assert program.inputs, program.name
    print(sorted(m for m in sys.modules if m == "torch" or m.startswith("torch.")))
""")


def test_tracing_a_jax_workload_loads_no_torch():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", PROBE, str(ROOT / "data/workloads/jax_mlp.py")],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"
