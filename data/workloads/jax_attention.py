"""Multi-head scaled-dot-product self-attention as a pure JAX function (einsum form)."""
import jax
import jax.numpy as jnp

BATCH = 2
SEQ = 128
DIM = 256
HEADS = 8


def get_inputs():
    k = jax.random.split(jax.random.key(0), 5)
    s = DIM ** -0.5
    return [jax.random.normal(k[0], (BATCH, SEQ, DIM))] + [jax.random.normal(k[i], (DIM, DIM)) * s for i in range(1, 5)]


def forward(x, wq, wk, wv, wo):
    b, t, d = x.shape
    h = HEADS
    q = (x @ wq).reshape(b, t, h, d // h)
    k = (x @ wk).reshape(b, t, h, d // h)
    v = (x @ wv).reshape(b, t, h, d // h)
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(d // h)
    p = jax.nn.softmax(scores, axis=-1)
    o = jnp.einsum("bhqk,bkhd->bqhd", p, v).reshape(b, t, d)
    return o @ wo
