"""solar's MACs against ``torch.utils.flop_counter.FlopCounterMode``: flops == 2 × MACs, exactly.

Each workload is traced at its own size (no golden run, no validation) and its einsum graph's
MACs are compared with FlopCounterMode's count of one forward of the same model at the same
size, run on the meta device (shapes only, so production sizes cost nothing). Every deliberate
difference is documented in docs/flop_agreement.md and pinned in ``test_documented_differences``.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from solar_assets.coverage.flop_reference import flop_counter_flops, solar_macs
from workload_texts import UNLOWERABLE_AIRY

REPO = Path(__file__).resolve().parents[1]

AGREE = {
    "gemm": ["data/workloads/gemm.py", "data/zoo/matmul_rectangular.py", "data/zoo/matmul_transposed_a.py",
             "data/zoo/matmul_transposed_both.py", "data/zoo/matmul_matvec.py", "data/zoo/matmul_3d_tensor_matrix.py",
             "data/zoo/matmul_square_4096.py"],
    "bmm": ["data/zoo/matmul_batched.py", "data/zoo/matmul_4d_tensor_matrix.py", "data/zoo/matmul_einsum_ellipsis.py"],
    "conv": ["data/zoo/conv_standard1d.py", "data/zoo/conv_standard2d.py", "data/zoo/conv_standard3d.py",
             "data/zoo/conv_transposed1d.py", "data/zoo/conv_transposed2d.py", "data/zoo/conv_transposed3d.py",
             "data/zoo/conv_grouped2d.py", "data/zoo/conv_depthwise2d.py", "data/zoo/conv_strided2d.py",
             "data/zoo/conv_transposed2d_asymmetric_grouped.py", "data/workloads/conv2d_bias_relu.py"],
    "linear": ["data/zoo/fused_gemm_bias_relu.py", "data/zoo/model_mlp_deep_narrow.py"],
    "attention": ["data/workloads/multihead_attention.py", "data/zoo/model_gpt_block.py",
                  "data/zoo/model_llama_decoder_layer.py"],
}
CASES = [(kind, path) for kind, paths in AGREE.items() for path in paths]


def _existing(relative: str) -> Path:
    path = REPO / relative
    if not path.is_file():
        pytest.skip(f"{relative} is not in this checkout")
    return path


@pytest.mark.parametrize(("kind", "relative"), CASES, ids=[Path(p).stem for _, p in CASES])
def test_macs_are_half_of_flop_counter_flops(kind, relative):
    path = _existing(relative)
    flops, per_op = flop_counter_flops(path)
    assert flops > 0, f"FlopCounterMode counted nothing in {relative}: not a {kind} case"
    assert 2 * solar_macs(path) == flops, f"{relative}: FlopCounterMode counts {per_op}"


# Deliberate differences (docs/flop_agreement.md): a sum over an elementwise product of two
# tensors (a dot product, a squared L2 norm) is MACs for solar; FlopCounterMode counts no mul/sum.
DIFFER = {
    # F.cosine_similarity: |x|² and |y|² per row are sums of squares (MACs); x·y traces as a mul
    # kernel then a sum kernel, which are elementwise FLOPs, not MACs
    "data/zoo/loss_cosine_similarity.py": lambda m: 2 * m.BATCH * m.DIM,
    # x / torch.norm(x, dim=1): one sum of squares over (BATCH, DIM)
    "data/zoo/norm_l2.py": lambda m: m.BATCH * m.DIM,
}


@pytest.mark.parametrize("relative", sorted(DIFFER), ids=lambda p: Path(p).stem)
def test_documented_differences(relative):
    path = _existing(relative)
    flops, _ = flop_counter_flops(path)
    assert flops == 0
    spec = importlib.util.spec_from_file_location(f"flop_agreement_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert solar_macs(path) == DIFFER[relative](module)


UNLOWERABLE = UNLOWERABLE_AIRY


def test_an_op_without_lowering_is_named_never_counted_as_zero(tmp_path):
    from solar_assets.coverage import unlowered_op
    from solar_assets.translate import TranslationError

    path = tmp_path / "spectrum.py"
    path.write_text(UNLOWERABLE)
    with pytest.raises(TranslationError) as caught:
        solar_macs(path)
    assert str(path) in str(caught.value)
    assert unlowered_op(str(caught.value)) == "aten.special_airy_ai.default"



# The same dot product written two ways (docs/flop_agreement.md, "a product and a sum written as two
# ops"): MACs are a property of the IR's kernels, and each side is consistent with FlopCounterMode.
DOT_PRODUCT = '''\
import torch
import torch.nn as nn

N = 1000


class Model(nn.Module):
    def forward(self, x, y):
        return {expr}


def get_inputs():
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return []
'''


@pytest.mark.parametrize(("expr", "macs"), [("torch.einsum('i,i->', x, y)", 1000), ("(x * y).sum()", 0)],
                         ids=["einsum", "mul_then_sum"])
def test_dot_product_macs_follow_the_kernels(tmp_path, expr, macs):
    path = tmp_path / "dot.py"
    path.write_text(DOT_PRODUCT.format(expr=expr))
    flops, per_op = flop_counter_flops(path)
    assert solar_macs(path) == macs
    assert flops == 2 * macs, f"FlopCounterMode counts {per_op}"


CAUSAL_SDPA = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(2, 4, 32, 16) for _ in range(3)]


def get_init_inputs():
    return []
'''


def test_every_difference_has_its_reason(tmp_path):
    """bench/flop_agreement.py's reason column: a causal mask keeps S(S+1)/2 of S² products per head,
    FlopCounterMode counts the dense product; a 2-norm is sums of products it does not count."""
    from solar_assets.coverage.flop_reference import difference_reasons, solar_graph

    path = tmp_path / "causal.py"
    path.write_text(CAUSAL_SDPA)
    flops, per_op = flop_counter_flops(path)
    graph = solar_graph(path)
    B, H, S, E = 2, 4, 32, 16
    assert flops == 4 * B * H * S * S * E  # FlopCounterMode: the dense q·kᵀ and p·v
    assert 2 * graph.macs == 4 * B * H * (S * (S + 1) // 2) * E
    mask, *renamed = difference_reasons(graph, per_op)
    assert mask.startswith("scaled_dot_product_attention: a mask removes products: "
                           f"{100 * (S * (S + 1) // 2) / S**2:.1f} % kept")
    assert f"dense {flops:,}" in mask  # the dense figure is FlopCounterMode's
    # on the meta device torch runs SDPA's math path: FlopCounterMode counts the same products as bmm
    assert all("the same products" in r for r in renamed)

    norm = _existing("data/zoo/norm_l2.py")
    flops, per_op = flop_counter_flops(norm)
    (reason,) = difference_reasons(solar_graph(norm), per_op)
    assert reason.startswith("linalg_vector_norm: sums of products in an op FlopCounterMode does not count")
    assert difference_reasons(solar_graph(_existing("data/workloads/gemm.py")),
                              flop_counter_flops(_existing("data/workloads/gemm.py"))[1]) == []
