"""``ByPartition`` inputs: the runtime check accepts the three shapes Dagster's IO manager hands
over (a dict by partition key, the only partition's bare value, None) and names a wrong type."""
from __future__ import annotations

import dagster as dg

from solar_assets.dagster_defs.artifact_types import by_partition_type


class Row:
    pass


def test_the_three_shapes_pass_and_a_wrong_value_is_named():
    kind = by_partition_type(Row)
    assert dg.check_dagster_type(kind, {"a|x": Row(), "b|x": Row()}).success
    assert dg.check_dagster_type(kind, Row()).success
    assert dg.check_dagster_type(kind, None).success
    bad = dg.check_dagster_type(kind, {"a|x": Row(), "b|x": "text"})
    assert not bad.success and "str" in bad.description
    assert not dg.check_dagster_type(kind, {"a|x": None}).success  # None only in an optional one


def test_an_optional_kind_takes_none_values_and_each_kind_is_one_type():
    kind = by_partition_type(Row, optional=True)
    assert dg.check_dagster_type(kind, {"a|x": None, "b|x": Row()}).success
    assert by_partition_type(Row, optional=True) is kind and by_partition_type(Row) is not kind
    assert kind.display_name == "ByPartition[Row | None]"
