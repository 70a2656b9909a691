"""A GRU over a sequence with jax.lax.scan (Flax linen GRUCell), returning every hidden state."""
import jax
import jax.numpy as jnp
from flax import linen as nn

STEPS = 12
BATCH = 4
FEATURES = 32
HIDDEN = 64


class Model(nn.Module):
    hidden: int

    @nn.compact
    def __call__(self, xs):
        cell = nn.GRUCell(features=self.hidden)
        scan = nn.scan(lambda c, carry, x: c(carry, x), variable_broadcast="params", split_rngs={"params": False},
                       in_axes=0, out_axes=0)
        h0 = jnp.zeros((xs.shape[1], self.hidden))
        h, ys = scan(cell, h0, xs)
        return ys


def get_inputs():
    return [jax.random.normal(jax.random.key(0), (STEPS, BATCH, FEATURES))]


def get_init_inputs():
    return [HIDDEN]
