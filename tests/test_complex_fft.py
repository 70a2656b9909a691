"""Complex tensors as real and imaginary planes and FFTs as library steps, in the shape users write
them (a spectral filter in PyTorch, a JAX FFT convolution): validated against the framework, with
5·N·log₂N FLOPs per complex transform (2.5·N·log₂N for a real one), counted by hand here."""
from __future__ import annotations

import textwrap

from solar_assets.coverage import check_workload
from solar_assets.coverage.flop_reference import solar_graph

SPECTRAL_FILTER = '''
import torch
import torch.nn as nn

batch_size = 4
length = 16


class Model(nn.Module):
    """Filter a signal in the frequency domain: rfft, a complex gain, irfft; also its spectrum."""

    def forward(self, x, gain_re, gain_im):
        spectrum = torch.fft.rfft(x)
        gain = torch.complex(gain_re, gain_im)
        filtered = torch.fft.irfft(spectrum * gain, n=length)
        power = spectrum.abs() ** 2
        phase = torch.angle(spectrum)
        full = torch.fft.fft2(x.reshape(batch_size, 4, 4), s=(4, 6))
        return filtered, power, phase, torch.view_as_real(full), full.conj()


def get_inputs():
    return [torch.randn(batch_size, length), torch.randn(length // 2 + 1), torch.randn(length // 2 + 1)]


def get_init_inputs():
    return []
'''

JAX_FFT = '''
import jax
import jax.numpy as jnp


def get_inputs():
    k = jax.random.split(jax.random.key(0), 2)
    return [jax.random.normal(k[0], (4, 8)), jax.random.normal(k[1], (4, 8))]


def forward(x, y):
    z = jax.lax.complex(x, y)
    spectrum = jnp.fft.fft(z)
    return jnp.fft.ifft(spectrum * jnp.conj(spectrum)), jnp.fft.rfft(x), jnp.abs(spectrum)
'''


def test_spectral_filter_validates_with_fft_flop_counts(tmp_path):
    path = tmp_path / "spectral_filter.py"
    path.write_text(textwrap.dedent(SPECTRAL_FILTER))
    row = check_workload(str(path), tmp_path / "cache")
    assert row.validated, row.error
    graph = solar_graph(path)
    ffts = {n.text.split("= linalg.")[1].split("(")[0]: n for n in graph.nodes if "linalg.fft" in n.text}
    # rfft of 4 signals of 16 points: 4 · 2.5 · 16 · log2(16) = 640; irfft back to 16 points: the same
    assert ffts["fft_r2c"].flops == 640 and ffts["fft_c2r"].flops == 640
    # fft2 over (4, 6) of 4 batches (the second dim padded 4 → 6): 4 · 5 · 24 · log2(24)
    assert ffts["fft_c2c"].flops == round(4 * 5 * 24 * 4.584962500721156)


def test_jax_complex_fft_validates(tmp_path):
    path = tmp_path / "jax_fft.py"
    path.write_text(textwrap.dedent(JAX_FFT))
    row = check_workload(str(path), tmp_path / "cache")
    assert row.validated, row.error
