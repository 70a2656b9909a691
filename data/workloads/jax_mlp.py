"""A three-layer MLP as a Flax linen module (GELU, softmax head)."""
import jax
import jax.numpy as jnp
from flax import linen as nn

BATCH = 32
D_IN = 256
HIDDEN = 512
D_OUT = 64


class Model(nn.Module):
    hidden: int
    d_out: int

    @nn.compact
    def __call__(self, x):
        x = nn.gelu(nn.Dense(self.hidden)(x))
        x = nn.gelu(nn.Dense(self.hidden)(x))
        return jax.nn.softmax(nn.Dense(self.d_out)(x), axis=-1)


def get_inputs():
    return [jax.random.normal(jax.random.key(0), (BATCH, D_IN))]


def get_init_inputs():
    return [HIDDEN, D_OUT]
