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


def test_max_abs_finite_skips_what_is_not_finite_as_a_masked_copy_does():
    """The compiled magnitude of a reference tensor equals numpy's max over its finite values, in
    float32 and float64, with infinities and NaNs among them; none finite gives 0."""
    import numpy as np

    from solar_assets.validate.compare import max_abs_finite

    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        x = rng.standard_normal((37, 129)).astype(dtype) * 10
        x[4, 7], x[0, 0], x[36, 128] = np.inf, -np.inf, np.nan
        expected = float(np.max(np.abs(x[np.isfinite(x)])))
        assert max_abs_finite(x) == expected
        assert max_abs_finite(x[:, ::2]) == float(np.max(np.abs(x[:, ::2][np.isfinite(x[:, ::2])])))
    assert max_abs_finite(np.full(5, np.nan)) == 0.0
