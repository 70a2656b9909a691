"""A few steps of a diffusion-style sampler with jax.lax.fori_loop (static trip count): each step
runs a small denoiser MLP on the sample and a per-step time feature picked with dynamic_slice."""
import jax
import jax.numpy as jnp

STEPS = 6
BATCH = 8
DIM = 32
HIDDEN = 128


def get_inputs():
    k = jax.random.split(jax.random.key(0), 4)
    return [jax.random.normal(k[0], (BATCH, DIM)), jax.random.normal(k[1], (STEPS, HIDDEN)) * 0.1,
            jax.random.normal(k[2], (DIM, HIDDEN)) * DIM ** -0.5, jax.random.normal(k[3], (HIDDEN, DIM)) * HIDDEN ** -0.5]


def forward(x, t_feat, w1, w2):
    def step(i, x):
        t = jax.lax.dynamic_slice_in_dim(t_feat, i, 1, axis=0)  # (1, HIDDEN)
        eps = jax.nn.silu(x @ w1 + t) @ w2
        return x - 0.1 * eps

    return jax.lax.fori_loop(0, STEPS, step, x)
