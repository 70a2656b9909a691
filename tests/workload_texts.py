"""Tiny workload files shared by tests that need a real file on disk (written to tmp_path)."""

TINY_LINEAR_RELU = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)

    def forward(self, x):
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(8, 32)]


def get_init_inputs():
    return [32, 16]
'''
TINY_LINEAR_RELU_MACS = 8 * 32 * 16

UNLOWERABLE_AIRY = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.special.airy_ai(x)


def get_inputs():
    return [torch.randn(4, 16)]


def get_init_inputs():
    return []
'''
"""A workload with an op the tracer has no lowering for (aten FFT): it must be named, never counted as zero."""

BMM_PAIR = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(2, 5, 7), torch.randn(2, 7, 3)]


def get_init_inputs():
    return []
'''
BMM_PAIR_MACS = 2 * 5 * 7 * 3

# a linear layer and tanh; ``{batch}`` is the batch size (tests edit it to change the file)
TANH_LINEAR = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)

    def forward(self, x):
        return torch.tanh(self.fc(x))


batch_size = {batch}
n_in = 12


def get_inputs():
    return [torch.randn(batch_size, n_in)]


def get_init_inputs():
    return [n_in, 6]
'''
