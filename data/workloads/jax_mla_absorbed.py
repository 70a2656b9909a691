"""DeepSeek-style multi-head latent attention, one decode step, weight-absorbed order.

The same function as ``jax_mla_naive.py`` (same inputs, same outputs), re-associated: the key
up-projection is absorbed into the query (``q · W_uk`` gives a query in latent space) and the
value up-projection is applied after attention to the latent-space output, so the cache is read
in its compressed form and never up-projected.
"""
import jax
import jax.numpy as jnp

BATCH = 2
QUERY = 2
CACHE = 512
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
    q_latent = jnp.einsum("bqhe,rhe->bqhr", q, w_uk)  # W_uk absorbed into the query
    scores = jnp.einsum("bqhr,bsr->bhqs", q_latent, c) * HEAD_DIM ** -0.5
    p = jax.nn.softmax(scores, axis=-1)
    o_latent = jnp.einsum("bhqs,bsr->bqhr", p, c)  # attention over the compressed cache
    o = jnp.einsum("bqhr,rhe->bqhe", o_latent, w_uv)  # W_uv applied once per query
    return jnp.einsum("bqhe,hed->bqd", o, w_o)
