"""DeepSeek-style multi-head latent attention, one decode step, naive order.

Keys and values are cached as a low-rank latent ``c`` (rank LATENT ≪ HEADS·HEAD_DIM). The naive
order up-projects the whole latent cache to per-head keys and values (``c @ W_uk``, ``c @ W_uv``)
before attending: its cost grows with CACHE × LATENT × HEADS × HEAD_DIM. ``jax_mla_absorbed.py``
computes the same function with the up-projections absorbed into the query and the output.
"""
import jax
import jax.numpy as jnp

BATCH = 2
QUERY = 2  # new tokens this step
CACHE = 512  # cached positions
DIM = 256
HEADS = 8
HEAD_DIM = 32
LATENT = 64


def get_inputs():
    k = jax.random.split(jax.random.key(0), 6)
    x = jax.random.normal(k[0], (BATCH, QUERY, DIM))
    c = jax.random.normal(k[1], (BATCH, CACHE, LATENT))
    w_q = jax.random.normal(k[2], (DIM, HEADS, HEAD_DIM)) * DIM ** -0.5
    w_uk = jax.random.normal(k[3], (LATENT, HEADS, HEAD_DIM)) * LATENT ** -0.5
    w_uv = jax.random.normal(k[4], (LATENT, HEADS, HEAD_DIM)) * LATENT ** -0.5
    w_o = jax.random.normal(k[5], (HEADS, HEAD_DIM, DIM)) * (HEADS * HEAD_DIM) ** -0.5
    return [x, c, w_q, w_uk, w_uv, w_o]


def forward(x, c, w_q, w_uk, w_uv, w_o):
    q = jnp.einsum("bqd,dhe->bqhe", x, w_q)
    k = jnp.einsum("bsr,rhe->bshe", c, w_uk)  # the whole cache up-projected
    v = jnp.einsum("bsr,rhe->bshe", c, w_uv)
    scores = jnp.einsum("bqhe,bshe->bhqs", q, k) * HEAD_DIM ** -0.5
    p = jax.nn.softmax(scores, axis=-1)
    o = jnp.einsum("bhqs,bshe->bqhe", p, v)
    return jnp.einsum("bqhe,hed->bqd", o, w_o)
