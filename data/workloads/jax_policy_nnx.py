"""A robot control policy as a Flax nnx module: one observation in, a squashed action out.

The kind of network a robot runs at hundreds of Hz: proprioception and a small visual feature
vector, LayerNorm, a 256-wide MLP, a tanh-bounded Gaussian-mean action head.
"""
import jax
import jax.numpy as jnp
from flax import nnx

OBS = 96
HIDDEN = 256
ACTIONS = 12


class Model(nnx.Module):
    def __init__(self, obs: int, hidden: int, actions: int, *, rngs: nnx.Rngs):
        self.norm = nnx.LayerNorm(obs, rngs=rngs)
        self.fc1 = nnx.Linear(obs, hidden, rngs=rngs)
        self.fc2 = nnx.Linear(hidden, hidden, rngs=rngs)
        self.head = nnx.Linear(hidden, actions, rngs=rngs)

    def __call__(self, obs):
        h = jax.nn.elu(self.fc1(self.norm(obs)))
        h = jax.nn.elu(self.fc2(h))
        return jnp.tanh(self.head(h))


def get_inputs():
    return [jax.random.normal(jax.random.key(0), (1, OBS))]


def get_init_inputs():
    return [OBS, HIDDEN, ACTIONS]
