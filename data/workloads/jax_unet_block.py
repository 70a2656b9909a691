"""A diffusion-style UNet residual block in Flax linen: GroupNorm, SiLU, 3x3 convs, a time
embedding projected and added per channel, a 1x1 skip projection (NHWC)."""
import jax
from flax import linen as nn

BATCH = 2
SIZE = 16
C_IN = 32
C_OUT = 64
T_DIM = 128
GROUPS = 8


class Model(nn.Module):
    c_out: int
    groups: int

    @nn.compact
    def __call__(self, x, t_emb):
        h = nn.silu(nn.GroupNorm(num_groups=self.groups)(x))
        h = nn.Conv(self.c_out, (3, 3), padding="SAME")(h)
        h = h + nn.Dense(self.c_out)(nn.silu(t_emb))[:, None, None, :]
        h = nn.silu(nn.GroupNorm(num_groups=self.groups)(h))
        h = nn.Conv(self.c_out, (3, 3), padding="SAME")(h)
        return h + nn.Conv(self.c_out, (1, 1))(x)


def get_inputs():
    k = jax.random.split(jax.random.key(0), 2)
    return [jax.random.normal(k[0], (BATCH, SIZE, SIZE, C_IN)), jax.random.normal(k[1], (BATCH, T_DIM))]


def get_init_inputs():
    return [C_OUT, GROUPS]
