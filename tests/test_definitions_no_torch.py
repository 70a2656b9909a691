"""Loading the Dagster definitions imports no torch (nor JAX): every ``solar analyze`` call and
the UI load them, and the asset inputs are annotated with the real artifact types, whose modules
must stay framework-free."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = textwrap.dedent("""
    import sys
    import solar_assets.dagster_defs.definitions
    from solar_assets.dagster_defs import assets
    assert assets.ir_validation is not None
    print(sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "jax")))
""")


def test_loading_the_definitions_loads_no_torch(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SOLAR_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"
