"""A pre-norm transformer block in Flax linen: LayerNorm, causal multi-head attention, GELU MLP."""
import jax
import jax.numpy as jnp
from flax import linen as nn

BATCH = 2
SEQ = 64
DIM = 128
HEADS = 4
MLP = 512


class Model(nn.Module):
    heads: int
    mlp: int

    @nn.compact
    def __call__(self, x):
        t = x.shape[1]
        mask = nn.make_causal_mask(jnp.ones((x.shape[0], t)))
        h = nn.LayerNorm()(x)
        x = x + nn.MultiHeadDotProductAttention(num_heads=self.heads)(h, h, mask=mask)
        h = nn.LayerNorm()(x)
        h = nn.Dense(x.shape[-1])(nn.gelu(nn.Dense(self.mlp)(h)))
        return x + h


def get_inputs():
    return [jax.random.normal(jax.random.key(0), (BATCH, SEQ, DIM))]


def get_init_inputs():
    return [HEADS, MLP]
