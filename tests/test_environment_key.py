"""What a finished result's key covers: the settings that change results, not the ones that say
where results live, how they are measured or how large the home may grow."""
from __future__ import annotations

import pytest

from solar_assets.cache_store import environment_key


@pytest.mark.parametrize("variable, value", [("SOLAR_STAGE_CLOCK", "/tmp/clock"), ("SOLAR_CACHE_LIMIT", "1G"),
                                             ("SOLAR_FRESH_WORKERS", "1"), ("SOLAR_HOME", "/elsewhere")])
def test_a_setting_that_changes_no_result_keeps_the_key(monkeypatch, variable, value):
    monkeypatch.delenv(variable, raising=False)
    before = environment_key()
    monkeypatch.setenv(variable, value)
    assert environment_key() == before


@pytest.mark.parametrize("variable, value", [("SOLAR_FP32_MATH", "ieee"), ("SOLAR_VALIDATION_SIZES", "x=3"),
                                             ("SOLAR_NODEWISE_BYTES", "1000")])
def test_a_setting_that_changes_results_changes_the_key(monkeypatch, variable, value):
    monkeypatch.delenv(variable, raising=False)
    before = environment_key()
    monkeypatch.setenv(variable, value)
    assert environment_key() != before
