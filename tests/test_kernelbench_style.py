"""Workloads written the way KernelBench writes them (the project's own files, in that style): sizes
in lower case and as expressions, chained and unpacked, in tuples and lists; values that are not
sizes beside them; Python scalars among the inputs; tensors made inside ``forward`` (constants,
random draws, a state attribute it overwrites); einops. Each is validated, most at a scaled size
that rebinds its lower-case constants (the budget is half the full-size IR's cost, so the search
must scale), and the label is checked against the sizing rule worked out by hand here."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from solar_assets import pipeline
from solar_assets.coverage.workload import check_workload
from solar_assets.sizing import ValidationBudget
from solar_assets.sizing import ValidationSize, program_cost
from solar_assets.workloads import load_torch_workload, read_workload_source, size_constants

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

NORMALISE = HEADER + '''
class Model(nn.Module):
    """Leaky ReLU, then each row divided by its L1 norm."""

    def __init__(self, dim, negative_slope, eps):
        super().__init__()
        self.dim, self.negative_slope, self.eps = dim, negative_slope, eps

    def forward(self, x):
        y = F.leaky_relu(x, self.negative_slope)
        return y / (y.abs().sum(dim=self.dim, keepdim=True) + self.eps)

batch_size = 16 * 4
features = 200
dim = 1
negative_slope = 0.01
eps = 1e-5

def get_inputs():
    return [torch.randn(batch_size, features)]

def get_init_inputs():
    return [dim, negative_slope, eps]
'''

CHAINED_MATMUL = HEADER + '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)

M = K = N = 64

def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]

def get_init_inputs():
    return []
'''

TUPLE_SHAPE = HEADER + '''
class Model(nn.Module):
    """Hinge loss over a batch of flat vectors."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))

batch_size = 4
input_shape = (4000,)
dim = 1

def get_inputs():
    return [torch.rand(batch_size, *input_shape), torch.randint(0, 2, (batch_size, *input_shape)).float() * 2 - 1]

def get_init_inputs():
    return []
'''

LAYER_LIST = HEADER + '''
class Model(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers, current = [], input_size
        for width in layer_sizes:
            layers += [nn.Linear(current, width), nn.ReLU()]
            current = width
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)

batch_size = 32
input_size = 100
layer_sizes = [400, 800]
output_size = 10
SOLAR_VALIDATION_SIZES = {"batch_size": 3, "layer_sizes": (9, 7)}

def get_inputs():
    return [torch.randn(batch_size, input_size)]

def get_init_inputs():
    return [input_size, layer_sizes, output_size]
'''

CONV_GROUPNORM = HEADER + '''
class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride)
        self.norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x)))

batch_size = 56
in_channels = 4
out_channels = 16
kernel_size = (3, 5)
stride = (2, 1)
num_groups = 8
height = width = 12

def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, num_groups]
'''

SCALAR_INPUT = HEADER + '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, s):
        return A * s

batch_size = 56
dim = 300

def get_inputs():
    return [torch.randn(batch_size, dim), 3.5]

def get_init_inputs():
    return []
'''

CONSTANTS_IN_FORWARD = HEADER + '''
class Model(nn.Module):
    def __init__(self, min_value):
        super().__init__()
        self.min_value = min_value

    def forward(self, x):
        x = torch.min(x, torch.tensor(self.min_value))
        return x + torch.tensor([1.0, -2.0, 3.0, 0.5]) * torch.ones(4)

batch_size = 56
features = 4
min_value = 0.25

def get_inputs():
    return [torch.randn(batch_size, 30, features)]

def get_init_inputs():
    return [min_value]
'''

BLOCK_PICKS = "import numpy as np\n" + HEADER + '''
class Model(nn.Module):
    """Scores of each query against keys picked from a fixed index table (all key 0, as a block-sparse
    attention's random picks in eval mode), plus a position ramp and a column mask made in forward."""

    def __init__(self, num_picks):
        super().__init__()
        self.num_picks = num_picks

    def forward(self, q, k):
        b, h, s, d = q.shape
        scores = torch.matmul(q, k.transpose(-1, -2))
        table = torch.tensor(np.zeros((h, s, self.num_picks), dtype=np.int64))
        picked = torch.gather(scores, -1, table.unsqueeze(0).expand(b, h, s, self.num_picks))
        ramp = torch.tensor(np.arange(s, dtype=np.float32) * 0.5 - 3.0)
        mask = torch.tensor(np.tile(np.array([1.0, 0.0, 1.0], dtype=np.float32), (s, 1)))
        return picked * mask + ramp[:, None]

batch_size = 4
num_heads = 4
seq_len = 96
head_dim = 8
num_picks = 3

def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, head_dim), torch.randn(batch_size, num_heads, seq_len, head_dim)]

def get_init_inputs():
    return [num_picks]
'''

SHAPELESS_CONSTANT = "import numpy as np\n" + HEADER + '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * torch.tensor(np.linspace(0.0, 1.0, 100, dtype=np.float32) ** 2)

batch_size = 8

def get_inputs():
    return [torch.randn(batch_size, 100)]

def get_init_inputs():
    return []
'''

GROUPNORM_MEAN = HEADER + '''
class Model(nn.Module):
    """3-D convolution, group normalisation, then the mean of everything per sample: each group's
    normalised values sum to zero, so the result is rounding noise around 0."""

    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = self.group_norm(self.conv(x))
        return x.mean(dim=[1, 2, 3, 4])

batch_size = 8
in_channels = 3
out_channels = 8
D, H, W = 6, 10, 10
kernel_size = 3
num_groups = 4

def get_inputs():
    return [torch.randn(batch_size, in_channels, D, H, W)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups]
'''

TRANSPOSED_CONV3D_FIXED = HEADER + '''
class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, groups):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                         groups=groups, bias=False)

    def forward(self, x):
        return self.deconv(x)

in_channels = 4
out_channels = 6
kernel_size = (3, 5, 3)
stride = (2, 1, 2)
padding = (1, 2, 0)
groups = 2

def get_inputs():
    return [torch.randn(2, 4, 5, 9, 7)]  # every size written here: nothing to rebind

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, groups]
'''

LSTM_RANDOM_STATE = HEADER + '''
class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers):
        super().__init__()
        self.num_layers, self.hidden_size = num_layers, hidden_size
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)

    def forward(self, x):
        h0 = torch.randn(self.num_layers, x.size(0), self.hidden_size, device=x.device)
        c0 = torch.rand(self.num_layers, x.size(0), self.hidden_size, device=x.device)
        out, _ = self.lstm(x, (h0, c0))
        return out[:, -1, :]

batch_size = 56
sequence_length = 3
input_size = 5
hidden_size = 6
num_layers = 2

def get_inputs():
    return [torch.randn(batch_size, sequence_length, input_size)]

def get_init_inputs():
    return [input_size, hidden_size, num_layers]
'''

STATE_ATTRIBUTE = HEADER + '''
batch_size = 56

class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.hidden = torch.randn((batch_size, hidden_size))
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)

    def forward(self, x, initial_hidden=None):
        if initial_hidden is not None:
            self.hidden.copy_(initial_hidden)
        self.hidden = self.hidden.to(x.device)
        combined = torch.cat((x, self.hidden), dim=1)
        self.hidden = torch.tanh(self.i2h(combined))
        return self.hidden * 2.0

input_size = 5
hidden_size = 6

def get_inputs():
    return [torch.rand(batch_size, input_size), torch.rand(batch_size, hidden_size)]

def get_init_inputs():
    return [input_size, hidden_size]
'''

EINOPS_HEADS = HEADER + '''from einops import rearrange, reduce, repeat

class Model(nn.Module):
    def __init__(self, heads, dim):
        super().__init__()
        self.heads = heads
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        y = rearrange(self.proj(x), "b l (h d) -> b h l d", h=self.heads)
        s = reduce(y, "b h l d -> b h d", "mean")
        r = repeat(s, "b h d -> b h l d", l=x.shape[1])
        return rearrange(y * r, "b h l d -> b l (h d)")

batch_size = 56
seq_len = 5
heads = 2
dim = 6

def get_inputs():
    return [torch.randn(batch_size, seq_len, dim)]

def get_init_inputs():
    return [heads, dim]
'''


def odd_eighth(value: int) -> int:
    """The sizing rule for a constant no other constant divides: value / 8, rounded, made odd, ≥ 3."""
    target = max(3, round(value / 8))
    return target if target % 2 else (target - 1 if target - 1 >= 3 else target + 1)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return path


def validated_at_half_budget(path: Path, tmp_path: Path):
    """The coverage row with a budget half the full-size IR's cost: the search must scale. No target
    below the budget (``scaled_share=1``): these files show which constants are scaled, at the first
    factor, 1/8 (``tests/test_validation_size.py`` has the target)."""
    cache = tmp_path / "cache"
    full = pipeline.translate_source(read_workload_source(path), cache).program
    cost = program_cost(full)
    budget = ValidationBudget(tensor_bytes=cost.tensor_bytes // 2, iterations=max(1, cost.iterations // 2),
                              scaled_share=1)
    row = check_workload(path, cache, budget)
    assert row.validated, row.error
    return row


def test_every_spelling_is_read():
    import tempfile

    text = ("M = K = N = 2048 * 2\nheight, width = 256, 128\ninput_shape = (32768,)\nlayer_sizes = [400, 800]\n"
            "kernel_size = (3, 5)\nbias_shape = (N, 1, 1)\nbatch_size: int = 16\nhidden = 4 * batch_size\n"
            "eps = 1e-5\nnegative_slope = 0.01\nflag = True\n")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "spellings.py"
        path.write_text(text)
        found = {n: (c.value, c.free) for n, c in size_constants(path).items()}
    assert found == {
        "M": (4096, True), "K": (4096, True), "N": (4096, True), "height": (256, True), "width": (128, True),
        "input_shape[0]": (32768, True), "layer_sizes[0]": (400, True), "layer_sizes[1]": (800, True),
        "kernel_size[0]": (3, True), "kernel_size[1]": (5, True),
        "bias_shape[0]": (4096, False), "bias_shape[1]": (1, True), "bias_shape[2]": (1, True),
        "batch_size": (16, True), "hidden": (64, False)}  # floats and booleans are not sizes


def test_rebinding_chained_tuple_and_list_elements(tmp_path):
    import torch

    path = write(tmp_path, "mlp", LAYER_LIST)
    w = load_torch_workload(read_workload_source(path), {"batch_size": 3, "layer_sizes[1]": 7})
    assert tuple(w.inputs[0].shape) == (3, 100)
    assert w.module.layer_sizes == [400, 7]  # a list stays a list, the other element as written
    assert [m.out_features for m in w.model.network if isinstance(m, torch.nn.Linear)] == [400, 7, 10]
    path = write(tmp_path, "chained", CHAINED_MATMUL)
    w = load_torch_workload(read_workload_source(path), {"K": 5})
    assert [tuple(x.shape) for x in w.inputs] == [(64, 5), (5, 64)]  # M and N keep the chained value


def test_lower_case_and_expression_scaled_non_sizes_fixed(tmp_path):
    row = validated_at_half_budget(write(tmp_path, "normalise", NORMALISE), tmp_path)
    # batch_size = 16 * 4 is the batch; features is the reduction length (kept); dim = 1, eps and the
    # slope are not sizes
    assert row.validated_size == f"batch_size={odd_eighth(64)}" == "batch_size=7"


def test_chained_constants_scaled(tmp_path):
    row = validated_at_half_budget(write(tmp_path, "chained", CHAINED_MATMUL), tmp_path)
    # M, K and N share the value 64, a reduction length: only the last tier (all sizes) scales them
    assert row.validated_size == "M=7,K=7,N=7" and odd_eighth(64) == 7


def test_tuple_element_scaled(tmp_path):
    row = validated_at_half_budget(write(tmp_path, "hinge", TUPLE_SHAPE), tmp_path)
    # batch_size = 4 is below 8 and stays; the tuple's element is the size, 4000 / 8 = 500 made odd
    assert row.validated_size == f"input_shape[0]={odd_eighth(4000)}" == "input_shape[0]=499"


def test_declared_list_sizes(tmp_path):
    row = check_workload(write(tmp_path, "mlp", LAYER_LIST), tmp_path / "cache")
    assert row.validated, row.error
    assert row.validated_size == "batch_size=3,layer_sizes[0]=9,layer_sizes[1]=7"


def test_conv_parameters_stay_fixed(tmp_path):
    row = validated_at_half_budget(write(tmp_path, "conv_gn", CONV_GROUPNORM), tmp_path)
    # kernel_size, stride (tuples) and num_groups = 8 are operator parameters: never rebound
    assert row.validated_size == f"batch_size={odd_eighth(56)}" == "batch_size=7"


def test_scalar_input(tmp_path):
    path = write(tmp_path, "scalar", SCALAR_INPUT)
    row = validated_at_half_budget(path, tmp_path)
    assert row.validated_size == "batch_size=7"
    program = pipeline.translate_source(read_workload_source(path)).program
    assert [t.binding for t in program.tensors if t.role == "input"] == ["input:0"]  # 3.5 is an IR constant
    assert any("3.5" in s.expr for s in program.steps if s.kind == "kernel")


def test_constants_made_in_forward(tmp_path):
    row = validated_at_half_budget(write(tmp_path, "consts", CONSTANTS_IN_FORWARD), tmp_path)
    assert row.validated_size == "batch_size=7"


def test_large_constants_made_in_forward_by_their_structure(tmp_path):
    path = write(tmp_path, "block_picks", BLOCK_PICKS)
    row = check_workload(path, tmp_path / "cache")
    assert row.validated and row.validated_size == "full", row.error
    program = pipeline.translate_source(read_workload_source(path), tmp_path / "cache").program
    # the 4 x 96 x 3 = 1152-entry index table is one literal, the 96-entry ramp one affine form
    exprs = [s.expr for s in program.steps if s.kind == "kernel"]
    assert not any("select" in e and e.count("select") > 3 for e in exprs)
    assert any(e.replace(" ", "") in ("(-3.0)+0.5*i0", "-3.0+0.5*i0") for e in exprs), exprs


def test_constant_template_reproduces_the_values():
    from solar_assets.workloads.in_forward import constant_template

    rng = np.random.default_rng(0)
    cases = [
        np.zeros((12, 62, 3), dtype=np.int64),                              # uniform: a literal
        np.arange(200, dtype=np.float32).reshape(10, 20) * 0.25 - 7.0,      # affine in both indices
        np.broadcast_to(rng.integers(-5, 5, size=(1, 7, 1)), (30, 7, 9)),   # a table along one axis
        np.tile(np.array([True, False, True]), (50, 1)),                    # bool, along the last axis
    ]
    for values in cases:
        loops = [f"i{a}" for a in range(values.ndim)]
        expr = constant_template(values, loops)
        assert expr is not None
        grids = np.meshgrid(*[np.arange(n) for n in values.shape], indexing="ij")
        env = dict(zip(loops, grids), select=np.where)
        got = np.broadcast_to(eval(expr, {"__builtins__": {}}, env), values.shape)  # noqa: S307 - our own text
        np.testing.assert_array_equal(got.astype(values.dtype), values)
    assert constant_template(np.linspace(0.0, 1.0, 100) ** 2, ["i0"]) is None  # no structure, > 64 entries


def test_constant_without_structure_is_one_clear_line(tmp_path):
    from solar_assets.translate.translation import TranslationError

    path = write(tmp_path, "squares", SHAPELESS_CONSTANT)
    with pytest.raises(TranslationError, match=r"squares\.py.*constant tensor .*100 elements.*register_buffer"):
        pipeline.translate_source(read_workload_source(path), tmp_path / "cache")


def test_cancelled_mean_is_judged_against_the_summed_magnitude(tmp_path):
    path = write(tmp_path, "conv_gn_mean", GROUPNORM_MEAN)
    row = check_workload(path, tmp_path / "cache")
    assert row.validated, row.error
    golden = pipeline.golden_for(read_workload_source(path), tmp_path / "cache", ValidationSize({}))
    assert np.max(np.abs(golden.outputs64[0])) < 1e-12  # the float64 result really cancels


def test_cancellation_scale_follows_the_float32_drift():
    from types import SimpleNamespace

    from solar_assets.validate.compare import _cancellation_scale

    ref64 = np.array([1e-16, -2e-16])
    ref32 = np.array([3e-8, -1e-8], dtype=np.float32)  # float32 rounding of terms near 3e-8 * 2^24
    golden = SimpleNamespace(outputs=[ref32], outputs64=[ref64])
    notes: list[str] = []
    drift = max(abs(float(np.float32(3e-8)) - 1e-16), abs(float(np.float32(-1e-8)) + 2e-16))
    magnitude = drift * 2.0 ** 24
    assert _cancellation_scale("mean", 0, golden, 1e-9, notes) == pytest.approx(1e-9 * magnitude / 2e-16)
    assert "cancels" in notes[0]
    # a result that does not cancel keeps the plain 1e-9 * max|ref|
    plain = SimpleNamespace(outputs=[np.array([1.0, 2.0], dtype=np.float32)], outputs64=[np.array([1.0, 2.0])])
    assert _cancellation_scale("y", 0, plain, 1e-9, []) == 1e-9


def test_transposed_conv3d_with_no_size_to_scale_is_validated_node_wise(tmp_path):
    path = write(tmp_path, "deconv3d", TRANSPOSED_CONV3D_FIXED)
    tiny = ValidationBudget(tensor_bytes=4096, iterations=1000)  # not even the input fits
    row = check_workload(path, tmp_path / "cache", tiny)
    assert row.validated, row.error
    assert row.validated_size.startswith("node-wise"), row.validated_size


def test_random_state_in_forward_takes_the_fixed_pattern(tmp_path):
    import torch

    path = write(tmp_path, "lstm", LSTM_RANDOM_STATE)
    row = validated_at_half_budget(path, tmp_path)
    assert row.validated_size == "batch_size=7"
    # the golden output is the model run with h0 = sin(1.2345 k + 0.5), c0 = 0.5 + 0.5 sin(...)
    size = ValidationSize({"batch_size": 7})
    golden = pipeline.golden_for(read_workload_source(path), None, size)
    w = load_torch_workload(read_workload_source(path), size.constants)
    shape = (2, w.inputs[0].shape[0], 6)
    wave = np.sin(1.2345 * np.arange(math.prod(shape)) + 0.5).reshape(shape)
    with torch.no_grad():
        out, _ = w.model.lstm(w.inputs[0], (torch.tensor(wave, dtype=torch.float32),
                                            torch.tensor(0.5 + 0.5 * wave, dtype=torch.float32)))
    np.testing.assert_allclose(golden.outputs[0], out[:, -1, :].numpy(), rtol=1e-6, atol=1e-6)


def test_state_attribute_overwritten_in_forward(tmp_path):
    import torch

    path = write(tmp_path, "rnn_cell", STATE_ATTRIBUTE)
    row = check_workload(path, tmp_path / "cache")  # batch_size sizes the attribute in __init__ too
    assert row.validated and row.validated_size == "full", row.error
    golden = pipeline.golden_for(read_workload_source(path), None,
                                 pipeline.validation_size_for(read_workload_source(path),
                                                              pipeline.translate_source(read_workload_source(path))))
    w = load_torch_workload(read_workload_source(path))
    x, h = w.inputs
    expected = torch.tanh(w.model.i2h(torch.cat((x, h), dim=1))) * 2.0  # copy_ makes the state the second input
    np.testing.assert_allclose(golden.outputs[0], expected.detach().numpy(), rtol=1e-6, atol=1e-6)


def test_einops(tmp_path):
    pytest.importorskip("einops")
    row = validated_at_half_budget(write(tmp_path, "einops_heads", EINOPS_HEADS), tmp_path)
    assert row.validated_size == "batch_size=7"


def test_bench_orders_problems_and_takes_quantiles(tmp_path):
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("kernelbench_bench", Path(__file__).parents[1] / "bench" / "kernelbench.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # its dataclass looks its module up there
    try:
        spec.loader.exec_module(bench)
    finally:
        sys.modules.pop(spec.name, None)
    for name in ("10_b.py", "2_a.py", "1_c.py", "33_d.py"):
        (tmp_path / name).write_text("")
    assert [p.name for p in bench.problem_files(tmp_path, None)] == ["1_c.py", "2_a.py", "10_b.py", "33_d.py"]
    assert [p.name for p in bench.problem_files(tmp_path, 2, skip=1)] == ["2_a.py", "10_b.py"]
    values = [4.0, 1.0, 3.0, 10.0, 2.0]
    assert bench.percentile(values, 0.9) == pytest.approx(float(np.percentile(values, 90)))
    assert bench.percentile(values, 0.5) == 3.0
