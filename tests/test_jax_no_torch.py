"""The JAX path loads no torch: tracing, the golden run and the executor stay torch-free."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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


ENTRY_POINTS = {
    "solar coverage": """
        from solar_assets.cli import main
        try:
            main(["coverage", WORKLOAD, "--jobs", "0", "--home", HOME, "--no-progress"])
        except SystemExit:
            pass
    """,
    "solar analyze": """
        from solar_assets.cli import main
        try:
            main(["analyze", WORKLOAD, "--hardware", "H100_SXM", "--no-dagster", "--jobs", "0", "--home", HOME,
                  "--no-progress"])
        except SystemExit:
            pass
    """,
    "solar.analyze(file)": """
        import solar
        assert solar.analyze(WORKLOAD, hardware=["H100_SXM"], home=HOME).ok
    """,
    "solar.analyze(live function)": """
        import solar
        if WORKLOAD.endswith("jax_mlp.py"):
            import jax.numpy as jnp
            assert solar.analyze(lambda x: jnp.tanh(x) * 2, [jnp.ones((4, 8))], hardware=["H100_SXM"], home=HOME).ok
        else:
            import torch
            assert solar.analyze(torch.nn.Linear(8, 4), [torch.randn(2, 8)], hardware=["H100_SXM"], home=HOME).ok
    """,
}


@pytest.mark.parametrize("framework,workload,absent", [("jax", "jax_mlp.py", "torch"), ("torch", "gemm.py", "jax")])
@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.slow
def test_entry_point_loads_only_the_workloads_framework(tmp_path, entry, framework, workload, absent):
    """Each way a user runs solar, in a fresh interpreter, on a JAX workload loads no torch and on a
    PyTorch one no JAX (the Dagster assets run the same chain stages in their steps)."""
    code = textwrap.dedent(ENTRY_POINTS[entry])
    probe = (f"import sys\nWORKLOAD = {str(ROOT / 'data/workloads' / workload)!r}\nHOME = {str(tmp_path)!r}\n"
             f"{code}\nprint(sorted(m for m in sys.modules if m == {absent!r} or m.startswith({absent + '.'!r})))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]", (entry, out.stdout[-500:])
