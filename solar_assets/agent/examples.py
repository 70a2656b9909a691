"""Worked examples for the agent's prompt: real tracer IRs of shipped workloads, stored as JSON.

The files under ``examples/`` are generated, never typed: regenerate them after a tracer change
with ``python -m solar_assets.agent.examples`` (a test checks they still match what the
tracer produces). Stored rather than traced at import so that building a prompt stays cheap and
the prompt hash changes only when an example really changes.
"""
from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

from ir_schemas import Program

log = logging.getLogger(__name__)

EXAMPLES_DIR = Path(__file__).with_name("examples")
REPO_ROOT = Path(__file__).resolve().parents[2]
# Chosen to show a contraction, a padded stencil with bias and epilogue, and reductions with
# normalisation: between them every kind of kernel statement the IR has.
EXAMPLE_WORKLOADS = ("gemm", "conv2d_bias_relu", "layernorm_gelu_mlp")


@dataclass(frozen=True)
class WorkedExample:
    workload: str
    source: str  # the workload file's text
    program: Program  # the tracer's IR of it


def load_examples() -> list[WorkedExample]:
    """The stored examples, in ``EXAMPLE_WORKLOADS`` order."""
    examples = []
    for name in EXAMPLE_WORKLOADS:
        data = json.loads((EXAMPLES_DIR / f"{name}.json").read_text())
        examples.append(WorkedExample(data["workload"], data["source"], Program.model_validate(data["program"])))
    return examples


def generate_examples(workload_dir: Path = REPO_ROOT / "data" / "workloads") -> list[dict]:
    """Trace each example workload now: what the files should contain."""
    from solar_assets.translate import trace_torch
    from solar_assets.workloads import read_workload_source

    out = []
    for name in EXAMPLE_WORKLOADS:
        path = workload_dir / f"{name}.py"
        program = trace_torch(read_workload_source(path)).program
        out.append({"workload": name, "source_file": f"data/workloads/{name}.py", "source": path.read_text(),
                    "program": program.model_dump(mode="json")})
    return out


def write_examples() -> None:
    EXAMPLES_DIR.mkdir(exist_ok=True)
    for data in generate_examples():
        target = EXAMPLES_DIR / f"{data['workload']}.json"
        target.write_text(json.dumps(data, indent=1) + "\n")
        log.info("wrote %s", target)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    write_examples()
