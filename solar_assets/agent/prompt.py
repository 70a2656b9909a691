"""What the agent tells the chat model: the IR's rules and schema, worked examples, the task,
and after a rejected reply the diagnostics.

Everything here is text built from data (the JSON Schema, the stored examples, the workload
source); ``prompt_sha256`` hashes the system prompt and the templates, so a cached answer is
reused only for the prompt that produced it.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path

import ir_schemas
from ir_schemas import Program
from solar_assets.agent.examples import load_examples

SCHEMA_PATH = Path(ir_schemas.__file__).with_name("affine_loop_ir.v1.schema.json")

RULES = """\
You translate PyTorch (or JAX / Flax) workloads into Affine Loop IR, a small executable loop
language. Your reply is data: it is parsed as JSON into the IR, checked, executed on the
workload's own inputs and compared with the framework's outputs. Nothing you write is run as Python.

The IR (JSON Schema below) is a Program: tensors, inputs, outputs and an ordered list of steps.
- tensors: name (identifier), shape (static integers, row-major), dtype, role
  (input | weight | output | intermediate). Inputs bind to the forward arguments as
  "input:<position>"; weights bind to the model's parameters and buffers as
  "param:<qualified name>" / "buffer:<qualified name>" (in PyTorch the names of
  model.named_parameters(), e.g. "param:fc1.weight"; the task lists them where it can).
  Outputs and intermediates have no binding, except an output that is an input's or buffer's
  storage after forward updated it in place (x.mul_(2), self.cache[:, p] = k): it binds
  "updates:<that tensor's binding>" and starts holding that tensor's values, so write only the
  places the update changes. A tensor read outside its extent must declare
  pad_value (e.g. 0.0 for a zero-padded convolution input, -inf for max pooling).
- inputs: the input tensors in forward-argument order; outputs: in the order forward returns them.
- A kernel step is one perfect loop nest with static trip counts and one statement
  out update expr. "out" is T[i, j, ...]; every subscript (in out and in expr) must be affine in
  the loop variables: integer coefficients and constants only, like "p*2 + r - 1". No products of
  loop variables, no division, no data-dependent indices. update is one of = += max= min= *=;
  a reduction (+=, max=, ...) starts from its identity unless init is "keep" (then it accumulates
  into what is there, e.g. a bias written by an earlier kernel). With "=", every loop variable
  of extent > 1 must appear in the out subscript.
- expr is arithmetic (+ - * / **, comparisons) over tensor reads, loop variables and numeric
  constants, and these scalar functions: {functions}.
- A reshape step views a whole tensor with another shape (same element count, row-major): it
  declares its "out" tensor with the new shape and moves no data.
- Accumulate in the kernel, not in Python: there are no other statements.

Reply with exactly one JSON object, the complete Program (a ```json fenced block is fine),
and nothing else.
"""

WORKLOAD_TEMPLATE = """\
Translate this workload (file {file}) into one Affine Loop IR program named "{name}".{size}

```python
{source}
```
{interface}"""

NODE_TEMPLATE = """\
The deterministic tracer of workload {file} has no lowering for one node of its torch.export
(core ATen) graph. Write the IR steps that compute just this node:

    {node}

ATen op: {target}
Arguments: {arguments}

Reply with a Program named "{name}" whose tensors are exactly the inputs and outputs below
(copy their declarations), plus any intermediates you need (name them starting with "{prefix}"),
and whose steps compute the outputs from the inputs. The inputs are whole, contiguous tensors.

{skeleton}
"""

REPAIR_TEMPLATE = """\
Your reply (attempt {attempt}) was rejected:
{diagnostics}

Reply with the corrected complete Program as one JSON object."""


def _compact(program: Program) -> str:
    return json.dumps(program.model_dump(mode="json", exclude_none=True), separators=(",", ":"))


@lru_cache(maxsize=1)
def system_prompt() -> str:
    """The rules, the JSON Schema of the IR and the worked examples (tracer IRs of shipped workloads)."""
    from solar_assets.ir import SCALAR_FUNCTIONS

    functions = ", ".join(f"{name}({', '.join('xyz'[:n])})" for name, n in sorted(SCALAR_FUNCTIONS.items()))
    parts = [RULES.format(functions=functions), "JSON Schema of the Program:",
             SCHEMA_PATH.read_text().strip(), ""]
    for i, ex in enumerate(load_examples(), 1):
        parts += [f"Example {i}: workload {ex.workload}", "```python", ex.source.strip(), "```",
                  "Its IR (the readable form first, then the JSON to reply with):", "```",
                  str(ex.program).strip(), "```", "```json", _compact(ex.program), "```", ""]
    return "\n".join(parts)


@lru_cache(maxsize=1)
def prompt_sha256() -> str:
    """Hash of everything fixed in the prompts: the system prompt and the message templates."""
    text = "\n\0".join([system_prompt(), WORKLOAD_TEMPLATE, NODE_TEMPLATE, REPAIR_TEMPLATE])
    return hashlib.sha256(text.encode()).hexdigest()


def workload_message(file: str, name: str, source: str, constants: Mapping[str, int] | None = None,
                     interface: Sequence[str] = ()) -> str:
    """The task: the whole workload. ``constants``: module constants rebound for this translation;
    ``interface``: lines describing the forward inputs and parameters (names, shapes, dtypes)."""
    size = ""
    if constants:
        size = (" Translate it with these module constants rebound (the shapes follow from them): "
                + ", ".join(f"{k} = {v}" for k, v in sorted(constants.items())) + ".")
    iface = ("\nWhat the workload binds at this size:\n" + "\n".join(f"- {line}" for line in interface) + "\n"
             if interface else "")
    return WORKLOAD_TEMPLATE.format(file=file, name=name, size=size, source=source.rstrip(), interface=iface)


def node_message(file: str, name: str, node: str, target: str, arguments: str, prefix: str,
                 skeleton: Program) -> str:
    """The task: one graph node, from its input tensors to its output tensors."""
    skeleton_json = json.dumps(skeleton.model_dump(mode="json", exclude_none=True), indent=1)
    return NODE_TEMPLATE.format(file=file, name=name, node=node, target=target, arguments=arguments,
                                prefix=prefix, skeleton=f"```json\n{skeleton_json}\n```")


def repair_message(attempt: int, diagnostics: Sequence[str]) -> str:
    """After a rejected reply: what was wrong, one diagnostic per bullet."""
    return REPAIR_TEMPLATE.format(attempt=attempt, diagnostics="\n".join(f"- {d}" for d in diagnostics))
