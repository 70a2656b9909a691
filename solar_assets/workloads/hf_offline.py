"""HuggingFace models built offline from solar's table of published configs (KernelBench level 4).

Workload files load models by name: ``config = AutoConfig.from_pretrained("gpt2")`` at module
level and ``AutoModelForCausalLM.from_pretrained(name, config=config)`` in ``Model.__init__``. No
hub is reachable, and a bound needs shapes and ops, not trained weights. So while a workload is
loaded (``offline_models``), those calls are answered from ``hf_configs.HF_CONFIGS``:
``AutoConfig.from_pretrained(name)`` builds ``AutoConfig.for_model(model_type, **fields)``, and
``from_pretrained(name, config=...)`` of any model class builds ``from_config(config)`` (random
weights, drawn after the loader seeds torch). ``HF_HUB_OFFLINE`` is set meanwhile, so nothing in
``transformers`` tries the network.

Under the tracer's ``FakeTensorMode`` the model's parameters are fake tensors: a 2.7 B-parameter
model is traced without allocating its 10.8 GB of weights. The golden run builds it for real once.

Validation (``validation_sizes``): the full-size weights in float64 do not fit the validation
budget for most of these models, and shrinking batch and sequence does not shrink weights. A
scaled validation therefore also builds the model with fewer layers (the table's
``validation_layers``: same widths, same per-layer structure); the pseudo-constant
``hf_layers`` in the validation constants says so, and ``layered_structure_difference`` checks
that the full-size IR is the validated IR with its repeated layer block repeated more times.
"""
from __future__ import annotations

import ast
import contextlib
import contextvars
import logging
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from solar_assets.errors import SolarError
from solar_assets.workloads.hf_configs import HF_CONFIGS

log = logging.getLogger(__name__)

LAYERS_KEY = "hf_layers"  # the pseudo-constant of a validation size: the model's reduced layer count
TABLE = "solar_assets/workloads/hf_configs.py"
EXTRA_HINT = "install solar's 'hf' extra: pip install -e '.[hf]' (transformers>=5)"


class HFOfflineError(SolarError):
    """A HuggingFace model the offline table cannot build; the message names the file."""


# ---------------------------------------------------------------------------- the table
def model_names_in(path: str | Path) -> list[str]:
    """The table's model names that the file spells as string literals (``model_name = "gpt2"``)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return []
    found = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return sorted(found & HF_CONFIGS.keys())


def uses_transformers(text: str) -> bool:
    """Whether the source imports ``transformers`` (``import transformers`` / ``from transformers ...``)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "transformers" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "transformers":
            return True
    return False


def table_config(name: str, path: str | Path, layers: int | None = None, **overrides: Any) -> Any:
    """``AutoConfig.for_model`` of the table's entry for ``name``, with ``overrides`` on top;
    ``layers`` (a validation size's ``hf_layers``) applies the entry's ``validation_layers``."""
    from transformers import AutoConfig

    entry = HF_CONFIGS.get(str(name))
    if entry is None:
        raise HFOfflineError(f"{path}: {name} is not in solar's offline table of HuggingFace configs "
                             f"({TABLE}); add its config.json fields")
    fields = {"use_cache": False, **entry["fields"], **overrides}  # see use_cache_note
    if layers is not None:  # last: a file's own layer count is reduced too
        fields.update(entry["validation_layers"])
    config = AutoConfig.for_model(entry["model_type"], **fields)
    config._name_or_path = str(name)
    return config


use_cache_note = """Configs are built with ``use_cache=False``: a forward pass that returns the logits does not
need the key/value cache, and transformers would start it as empty tensors made in ``forward``
(lifted by torch.export as 0-element constants) and copy every layer's keys and values into it —
traffic the workload's result never reads, which a lower bound may leave out."""


def reduced_layer_count(name: str) -> int:
    """The number of layers of the validation model (``validation_layers`` applied)."""
    from transformers import AutoConfig

    entry = HF_CONFIGS[name]
    fields = {**entry["fields"], **entry["validation_layers"]}
    return int(AutoConfig.for_model(entry["model_type"], **fields).num_hidden_layers)


# ---------------------------------------------------------------------------- the loading context
def split_constants(constants: Mapping[str, int] | None) -> tuple[dict[str, int] | None, int | None]:
    """(the file's own constants to rebind, the ``hf_layers`` pseudo-constant or None)."""
    if not constants:
        return (dict(constants) if constants is not None else None), None
    rest = {k: v for k, v in constants.items() if k != LAYERS_KEY}
    return rest, constants.get(LAYERS_KEY)


@contextlib.contextmanager
def offline_models(path: str | Path, layers: int | None = None) -> Iterator[None]:
    """While the workload at ``path`` is executed and its model built: ``from_pretrained`` of
    configs and models answered from the table (see the module docstring), ``HF_HUB_OFFLINE=1``.
    A file that does not import ``transformers`` runs untouched; one that does, without
    ``transformers`` installed, gets one line naming the extra to install."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""  # the loader names the unreadable file
    if not uses_transformers(text):
        yield
        return
    try:
        import transformers  # noqa: F401
        from transformers import PretrainedConfig, PreTrainedModel
        from transformers.models.auto.auto_factory import _BaseAutoModelClass
        from transformers.models.auto.configuration_auto import AutoConfig
    except ImportError as e:
        raise HFOfflineError(f"{path}: the file imports transformers, which is not installed ({e}); "
                             f"{EXTRA_HINT}") from None

    def config_from_table(cls: Any, name: Any, *args: Any, **kwargs: Any) -> Any:
        overrides = {k: v for k, v in kwargs.items() if k not in _LOADING_KWARGS}
        config = table_config(name, path, layers, **overrides)
        if cls not in (AutoConfig, PretrainedConfig) and not isinstance(config, cls):
            raise HFOfflineError(f"{path}: {cls.__name__}.from_pretrained({name!r}): the table's entry is a "
                                 f"{type(config).__name__}")
        return config

    def auto_model_from_config(cls: Any, name: Any, *args: Any, config: Any = None, **kwargs: Any) -> Any:
        return _static_positions(cls.from_config(_model_config(name, config, path, layers), **_model_kwargs(kwargs)))

    def model_from_config(cls: Any, name: Any, *args: Any, config: Any = None, **kwargs: Any) -> Any:
        return _static_positions(cls._from_config(_model_config(name, config, path, layers), **_model_kwargs(kwargs)))

    patches = [(AutoConfig, "from_pretrained", classmethod(config_from_table)),
               (PretrainedConfig, "from_pretrained", classmethod(config_from_table)),
               (_BaseAutoModelClass, "from_pretrained", classmethod(auto_model_from_config)),
               (PreTrainedModel, "from_pretrained", classmethod(model_from_config))]
    saved = [(owner, attr, owner.__dict__[attr]) for owner, attr, _ in patches]
    env_before = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        for owner, attr, patched in patches:
            setattr(owner, attr, patched)
        yield
    finally:
        for owner, attr, original in saved:
            setattr(owner, attr, original)
        if env_before is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = env_before


# ---------------------------------------------------------------------------- Reformer's positions
_DEFAULT_POSITIONS: contextvars.ContextVar[int | None] = contextvars.ContextVar("solar_reformer_positions",
                                                                                 default=None)


def _default_axial_positions(axial: Any, start: int, batch: int, seq: int) -> Any:
    """Reformer's eval-mode axial position encodings for the default positions ``arange(start,
    start + seq)`` in every batch row: the axial weights broadcast and concatenated over the columns
    the positions reach (``(start + seq − 1) // axial_w + 1``, known from the shape), flattened, and
    the rows ``start … start + seq − 1`` taken — what transformers computes with ``max().item()``
    and one ``index_select`` per batch row (a Python loop over the batch, which would make the IR's
    structure depend on the batch size). Same values, same data read."""
    import torch

    axial_w = axial.axial_pos_shape[1]
    columns = (start + seq - 1) // axial_w + 1
    weights = [w.expand((batch,) + tuple(axial.axial_pos_shape) + w.shape[-1:])[:, :columns] for w in axial.weights]
    encodings = torch.cat(weights, dim=-1)
    encodings = torch.reshape(encodings, (batch, -1, encodings.shape[-1]))
    return encodings[:, start:start + seq]


def _static_positions(model: Any) -> Any:
    """Reformer's axial position embeddings read ``position_ids.max().item()`` in eval mode to
    choose how many columns to slice: a length torch.export cannot know (it traces the value as
    data-dependent, ``aten._local_scalar_dense``), which an IR of static shapes cannot take. When
    ``ReformerEmbeddings`` made the positions itself (``position_ids=None``: ``arange(start, start +
    seq)``, as every call without explicit positions does), that maximum is ``start + seq − 1``, known
    from the shape, and ``_default_axial_positions`` computes the encodings without reading it; every
    other call (explicit positions, training) runs transformers' own code. Set on the model's modules (their
    ``forward``), since the model is exported after it is built, outside ``offline_models``."""
    import types

    try:
        from transformers.models.reformer import modeling_reformer as mr
    except ImportError:
        return model
    embeddings_forward, axial_forward = mr.ReformerEmbeddings.forward, mr.AxialPositionEmbeddings.forward

    def embeddings(self: Any, input_ids: Any = None, position_ids: Any = None, inputs_embeds: Any = None,
                   start_idx_pos_encodings: int = 0) -> Any:
        token = _DEFAULT_POSITIONS.set(int(start_idx_pos_encodings) if position_ids is None else None)
        try:
            return embeddings_forward(self, input_ids, position_ids, inputs_embeds, start_idx_pos_encodings)
        finally:
            _DEFAULT_POSITIONS.reset(token)

    def axial(self: Any, position_ids: Any) -> Any:
        start = _DEFAULT_POSITIONS.get()
        if start is None or self.training:
            return axial_forward(self, position_ids)
        return _default_axial_positions(self, start, position_ids.shape[0], position_ids.shape[-1])

    for module in model.modules():
        if isinstance(module, mr.ReformerEmbeddings):
            module.forward = types.MethodType(embeddings, module)
        elif isinstance(module, mr.AxialPositionEmbeddings):
            module.forward = types.MethodType(axial, module)
    return model


# keyword arguments of from_pretrained that are about fetching or loading checkpoints, not the config
_LOADING_KWARGS = {"cache_dir", "force_download", "local_files_only", "token", "revision", "proxies",
                   "resume_download", "subfolder", "trust_remote_code", "use_auth_token", "return_unused_kwargs",
                   "low_cpu_mem_usage", "device_map", "use_safetensors", "weights_only", "code_revision"}


def _model_config(name: Any, config: Any, path: str | Path, layers: int | None) -> Any:
    """The config a ``from_pretrained(name, config=...)`` builds from: the one passed (built from
    the table when the file resolved it at module level), else the table's."""
    if config is None or isinstance(config, (str, os.PathLike)):
        return table_config(config or name, path, layers)
    return config


def _model_kwargs(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """What ``from_config`` accepts of ``from_pretrained``'s keyword arguments (dtype, attention
    implementation); the checkpoint-loading ones have nothing to load."""
    keep = {"torch_dtype", "dtype", "attn_implementation"}
    return {"attn_implementation": ATTENTION, **{k: v for k, v in kwargs.items() if k in keep}}


ATTENTION = "eager"
attention_note = """Models are built with ``attn_implementation="eager"`` (unless the file asks for another):
transformers' default, SDPA, is exported as ``aten.scaled_dot_product_attention``, whose CPU
decomposition returns its output in a layout the exported graph's later ``view`` cannot take
("Cannot view a tensor with shape [B, S, D] and strides ..."). Eager attention is the same
computation written as matmul, mask and softmax; the IR then counts the score matrix as written
(an unfused schedule; the fused SOL modes may still keep it on chip)."""


# ---------------------------------------------------------------------------- validation
VALIDATION_BATCH = 2  # batch > 1: a kernel that mixed batch rows would show
VALIDATION_SEQUENCE = 16


def validation_sizes(path: str | Path) -> dict[str, int] | None:
    """The validation size of a file that builds one of the table's models with a layer
    reduction (``validation_layers``): ``batch_size`` → ≤ 2, ``sequence_length`` → ≤ 16 (module
    constants whose names say batch / sequence; the sequence kept where the entry says
    ``keep_sequence``: Reformer chunks its attention by the sequence length), and ``hf_layers`` the reduced layer count; None
    for any other file (its sizing is solar's usual one)."""
    from solar_assets.workloads.sizes import size_constants

    names = model_names_in(path)
    if len(names) != 1 or not HF_CONFIGS[names[0]]["validation_layers"]:
        return None
    try:
        import transformers  # noqa: F401
    except ImportError:
        return None
    sizes: dict[str, int] = {}
    for c in size_constants(path).values():
        low = c.name.lower()
        if not c.free:
            continue
        if "batch" in low:
            sizes[c.name] = min(c.value, VALIDATION_BATCH)
        elif "seq" in low and not HF_CONFIGS[names[0]].get("keep_sequence"):
            sizes[c.name] = min(c.value, VALIDATION_SEQUENCE)
    sizes = {k: v for k, v in sizes.items() if v != size_constants(path)[k].value}
    sizes[LAYERS_KEY] = reduced_layer_count(names[0])
    return sizes


def _strong(lines: list[str]) -> list[str]:
    """Lines with every digit run replaced, also inside names (``addmm_57``, ``h_31``): with fewer
    layers the graph's node numbering shifts after the repeated block."""
    import re

    return [re.sub(r"\d+", "#", x) for x in lines]


def _copies(lines: list[str], at: int, block: list[str]) -> int:
    n, k = 0, len(block)
    while lines[at + n * k:at + (n + 1) * k] == block:
        n += 1
    return n


def repeated_units(full: list[str], small: list[str], units_in_small: int, back: int = 256) -> int | None:
    """How many more copies of its repeated block ``full`` has than ``small``: walking both, where
    they part, ``full`` must continue with r more copies of the block that ``small`` holds
    ``units_in_small`` consecutive copies of just before (``P U^m Q`` against ``P U^n Q``), the same
    r at every such place (a model's layers repeat twice in the IR: their weights among the
    inputs, their ops among the steps). 0 when equal; None when no block fits. Every r that fits
    where they first part is tried (a short block can fit there by chance)."""
    counts = repeat_counts(full, small, units_in_small, back)
    return max(counts) if counts else None


def repeat_counts(full: list[str], small: list[str], units_in_small: int, back: int = 256) -> set[int]:
    """Every r for which ``repeated_units``'s decomposition holds (a block of two layers repeated
    5 times is also one layer repeated 10 times); {0} when equal."""
    if full == small:
        return {0}
    first = next((i for i, (a, b) in enumerate(zip(full, small)) if a != b), min(len(full), len(small)))
    candidates = {r for _, _, r in _skips(full, small, first, first, units_in_small, None, back)}
    return {reps for reps in candidates if _walk(full, small, units_in_small, reps, back)}


def _walk(full: list[str], small: list[str], m: int, reps: int, back: int, i: int = 0, j: int = 0,
          depth: int = 0) -> bool:
    """Whether ``full`` from ``i`` is ``small`` from ``j`` with ``reps`` more copies of a block at
    every place they part; every block that fits a place is tried (a short one may fit by chance
    and fail later), to a depth of 8 places."""
    while i < len(full) or j < len(small):
        if i < len(full) and j < len(small) and full[i] == small[j]:
            i, j = i + 1, j + 1
            continue
        if depth >= 8:
            return False
        return any(_walk(full, small, m, reps, back, ii, jj, depth + 1)
                   for ii, jj, _ in _skips(full, small, i, j, m, reps, back))
    return True


def _skips(full: list[str], small: list[str], i: int, j: int, m: int, reps: int | None,
           back: int) -> Iterator[tuple[int, int, int]]:
    """Where ``full`` and ``small`` part at (i, j): the positions after ``full``'s extra copies and their count,
    trying the block lengths from short to long and the parting point up to ``back`` lines earlier
    (the lines after a block can start like the block). The block is the copy of ``small`` just
    before the parting point; the earlier copies are not asked to equal it: a model's first layer
    may differ from the others (Reformer's reads the embeddings into both reversible streams)."""
    m = 1
    for k in range(1, j // m + 1):
        for t in range(0, min(back, j - k * m, i) + 1):
            ii, jj = i - t, j - t
            block = small[jj - k:jj]
            if small[jj - k * m:jj] != block * m:
                continue
            r = _copies(full, ii, block)
            if r == 0 or (reps is not None and r != reps):
                continue
            after = ii + r * k
            if (after == len(full) and jj == len(small)) or (
                    after < len(full) and jj < len(small) and full[after] == small[jj]):
                yield after, jj, r


def layered_structure_difference(full: Any, small: Any, path: str | Path, constants: Mapping[str, int]) -> str | None:
    """The structure check for a validation with fewer layers (``hf_layers`` in ``constants``):
    the full-size IR's tensors and steps, every number normalised away (also inside names), are
    the validated IR's with its block of layers repeated more times — the block being all the
    validated IR's layers, one copy per layer or per pair of layers (gpt-neo alternates global
    and local attention) — and tensors and steps agree on the count. None when it holds, else
    the difference."""
    from solar_assets.ir.structure import structure_of

    n_small = int(constants[LAYERS_KEY])
    (ft, fs), (st, ss) = structure_of(full), structure_of(small)
    ft, fs, st, ss = _strong(ft), _strong(fs), _strong(st), _strong(ss)
    for period in (1, 2):
        if n_small % period:
            continue
        units = n_small // period
        common = repeat_counts(ft, st, units) & repeat_counts(fs, ss, units)
        if common:
            log.info("%s: the full-size IR is the validated one with its layer block repeated %d more times",
                     path, max(common))
            return None
    return (f"the full-size IR is not the validated IR ({n_small} layers) with its layers repeated "
            f"({len(ft)} tensors and {len(fs)} steps at full size, {len(st)} and {len(ss)} validated, "
            "every number normalised away)")
