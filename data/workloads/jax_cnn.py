"""A small CNN classifier in Flax linen: conv / ReLU / max-pool twice, average pool, linear head (NHWC)."""
import jax
from flax import linen as nn

BATCH = 4
SIZE = 32
CHANNELS = 3
CLASSES = 10


class Model(nn.Module):
    classes: int

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Conv(16, (3, 3), padding="SAME")(x))
        x = nn.max_pool(x, (2, 2), strides=(2, 2))
        x = nn.relu(nn.Conv(32, (3, 3), strides=(2, 2), padding=((1, 1), (1, 1)))(x))
        x = nn.avg_pool(x, (2, 2), strides=(2, 2))
        x = x.mean(axis=(1, 2))
        return nn.Dense(self.classes)(x)


def get_inputs():
    return [jax.random.normal(jax.random.key(0), (BATCH, SIZE, SIZE, CHANNELS))]


def get_init_inputs():
    return [CLASSES]
