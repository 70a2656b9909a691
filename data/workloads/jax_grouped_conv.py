"""A MobileNet-style separable block as a pure JAX function: a depthwise 3x3 conv
(feature_group_count = channels, stride 2), ReLU6, then a grouped 1x1 conv (4 groups) (NCHW)."""
import jax
import jax.numpy as jnp

BATCH = 2
CHANNELS = 32
SIZE = 24
OUT = 64
GROUPS = 4


def get_inputs():
    k = jax.random.split(jax.random.key(0), 3)
    return [jax.random.normal(k[0], (BATCH, CHANNELS, SIZE, SIZE)),
            jax.random.normal(k[1], (CHANNELS, 1, 3, 3)) / 3.0,
            jax.random.normal(k[2], (OUT, CHANNELS // GROUPS, 1, 1)) * (CHANNELS // GROUPS) ** -0.5]


def forward(x, w_dw, w_pw):
    h = jax.lax.conv_general_dilated(x, w_dw, (2, 2), ((1, 1), (1, 1)), feature_group_count=CHANNELS)
    h = jnp.clip(h, 0.0, 6.0)
    return jax.lax.conv_general_dilated(h, w_pw, (1, 1), "VALID", feature_group_count=GROUPS)
