"""One message-passing layer of a graph network: gather sender features per edge, a linear message,
scatter-add to receivers (jax.ops.segment_sum), then a node update (pure JAX)."""
import jax
import jax.numpy as jnp

NODES = 64
EDGES = 256
FEATURES = 32


def get_inputs():
    k = jax.random.split(jax.random.key(0), 5)
    return [jax.random.normal(k[0], (NODES, FEATURES)), jax.random.randint(k[1], (EDGES,), 0, NODES),
            jax.random.randint(k[2], (EDGES,), 0, NODES),
            jax.random.normal(k[3], (FEATURES, FEATURES)) * FEATURES ** -0.5,
            jax.random.normal(k[4], (2 * FEATURES, FEATURES)) * (2 * FEATURES) ** -0.5]


def forward(nodes, senders, receivers, w_msg, w_upd):
    messages = jax.nn.relu(nodes[senders] @ w_msg)
    aggregated = jax.ops.segment_sum(messages, receivers, num_segments=nodes.shape[0])
    return jnp.tanh(jnp.concatenate([nodes, aggregated], axis=-1) @ w_upd)
