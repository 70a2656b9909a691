"""A two-layer MLP classifier whose forward returns its cross-entropy loss (B=64, 512 -> 1024 -> 10).

For ``solar analyze --train`` (AdamW by default): the step is the forward, the loss it returns, the
backward to both layers' weights and biases, and AdamW's update of each with its two moments.
MACs by hand: forward B·(512·1024 + 1024·10) = 34,209,792; backward two weight gradients (the
same products again) and the hidden layer's input gradient (B·1024·10), 34,865,152; the input
needs no gradient (the model has parameters), so the step does 69,074,944 MACs.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features, hidden, num_classes):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, num_classes)

    def forward(self, x, target):
        logits = self.fc2(F.gelu(self.fc1(x)))
        return F.cross_entropy(logits, target)


batch_size = 64
in_features = 512
hidden = 1024
num_classes = 10


def get_inputs():
    return [torch.randn(batch_size, in_features), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return [in_features, hidden, num_classes]
