"""Token embedding lookup (a gather), masked mean pooling and a linear classifier (pure JAX)."""
import jax
import jax.numpy as jnp

BATCH = 8
SEQ = 32
VOCAB = 1000
DIM = 64
CLASSES = 5


def get_inputs():
    k = jax.random.split(jax.random.key(0), 4)
    tokens = jax.random.randint(k[0], (BATCH, SEQ), 0, VOCAB)
    lengths = jax.random.randint(k[1], (BATCH,), 1, SEQ + 1)
    return [tokens, lengths, jax.random.normal(k[2], (VOCAB, DIM)), jax.random.normal(k[3], (DIM, CLASSES)) * 0.1]


def forward(tokens, lengths, table, w):
    e = table[tokens]  # (BATCH, SEQ, DIM)
    mask = (jnp.arange(tokens.shape[1])[None, :] < lengths[:, None]).astype(e.dtype)
    pooled = (e * mask[..., None]).sum(1) / lengths[:, None].astype(e.dtype)
    return pooled @ w
