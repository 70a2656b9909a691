"""Node-wise sampling: the extreme-value points (validate/nodewise_check.extreme_points)."""


def test_extreme_points_through_block_maxima_equal_a_full_sort():
    """The block search finds the same extreme values as sorting the whole tensor (a brute-force
    reference), with a tail that is not a whole block and a planted extreme in it; a non-finite
    value sends it to the full search, which skips that value; an unsigned dtype is searched as
    unsigned (no wrapped negation)."""
    import numpy as np

    from solar_assets.validate.nodewise_check import EXTREME_BLOCK, extreme_points

    rng = np.random.default_rng(7)
    x = rng.standard_normal(40 * EXTREME_BLOCK + 123).astype(np.float32)
    x[-1], x[17] = 99.0, -99.0
    got = extreme_points(x, 8)
    assert sorted(x[got[:8]].tolist()) == sorted(np.sort(x)[-8:].tolist())
    assert sorted(x[got[8:]].tolist()) == sorted(np.sort(x)[:8].tolist())
    x[3] = np.inf
    got = extreme_points(x, 8)
    finite = np.sort(x[np.isfinite(x)])
    assert 3 not in got and sorted(x[got[:8]].tolist()) == sorted(finite[-8:].tolist())
    u = rng.integers(0, 200, 40 * EXTREME_BLOCK, dtype=np.uint8)
    u[5], u[9] = 255, 0
    got = extreme_points(u, 8)
    assert sorted(u[got[:8]].tolist()) == sorted(np.sort(u)[-8:].tolist()) and 255 in u[got[:8]]
    assert sorted(u[got[8:]].tolist()) == sorted(np.sort(u)[:8].tolist())
