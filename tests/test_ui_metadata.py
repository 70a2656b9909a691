"""What the Dagster UI is given: figures with units (``solar_assets.dagster_defs.metadata``), code that is
never cut, the per-op table, per-op roofline points, and hardware partitions from every spec dir
the CLI searches. Fast: no asset runs; tests/test_browser_ui.py checks the rendering."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg
import pytest

from ir_schemas import PerOpRow
from solar_assets.dagster_defs import metadata as md

REPO = Path(__file__).resolve().parents[1]


def test_figures_read_with_their_units():
    assert md.seconds(0.000032051994746268655).text == "32.1 µs"
    assert md.seconds(None).text == "none"
    assert md.count(1024**3).text == "1.07 G" and md.count(2 * 1024**3, "FLOP").text == "2.15 GFLOP"
    assert md.data_size(12 * 2**20).text == "12 MiB (12,582,912 B)" and md.data_size(512).text == "512 B"
    assert md.flop_rate(67e12).text == "67 TFLOP/s" and md.byte_rate(3.35e12).text == "3.35 TB/s"
    assert md.factor(1.0312, "the bandwidth").text == "1.03× the bandwidth"
    assert md.sol(4.2e-9, "memory").text == "4.2 ns, memory-bound"


def test_plotted_figures_are_short_numbers_in_the_unit_of_their_label():
    assert md.rounded(0.000032051994746268655) == 3.205e-05
    assert md.rounded(123456.789) == 123500.0 and md.rounded(0.0) == 0.0
    plotted = md.plotted_times({"SOL fused": 3.2051994746268655e-05, "SOL cache-aware": None})
    assert list(plotted) == ["SOL fused [µs]"] and plotted["SOL fused [µs]"].value == 32.05


def test_long_code_lines_continue_on_the_next_line_and_lose_nothing():
    line = "    for n<8, k<128: Y[n,k] += " + " + ".join(f"X{i}[n,k]*W{i}[k]" for i in range(40))
    wrapped = md.wrap_line(line, 80)
    assert len(wrapped) > 1 and all(len(part) <= 80 for part in wrapped)
    assert all(part.startswith("      ↪ ") for part in wrapped[1:])  # the line's indent, then the mark
    assert " ".join(p.replace("↪ ", "").strip() for p in wrapped).split() == line.split()
    assert md.wrap_line("x" * 200, 80)[0] == "x" * 80  # no space to break at: cut at the width
    block = md.code("program p(x)\n" + line, "").value
    assert block.startswith("```\nprogram p(x)\n") and block.endswith("\n```")
    assert max(len(row) for row in block.splitlines()) <= md.CODE_WRAP_COLUMNS


def _op(rank: int, module: str, op: str, macs: int, nbytes: int, time_s: float, share: float) -> PerOpRow:
    return PerOpRow(workload="w", hardware="H100_SXM", rank=rank, node=op, op=f"aten.{op}.default", module=module,
                    macs=macs, flops=2 * macs, bytes=nbytes, compute_s=0.0, memory_s=time_s, time_s=time_s,
                    share=share, limiter="memory", ir_nodes=1, exact=True)


def test_the_per_op_table_has_a_record_per_op_with_units():
    rows = [_op(2, "", "relu", 0, 4096, 1.2e-9, 0.25),
            _op(1, "encoder.fc1", "addmm", 16384, 11520, 3.6e-9, 0.75).model_copy(
                update={"module_class": "Linear", "label": "addmm#1", "source": "model.py:42"})]
    table = md.per_op_table(rows)
    assert [c.name for c in table.schema.columns] == ["rank", "module", "op", "line", "MACs", "FLOPs", "bytes",
                                                      "time unfused", "share", "limiter"]
    first, second = (r.data for r in table.records)  # largest share first
    assert first == {"rank": 1, "module": "encoder.fc1 (Linear)", "op": "addmm#1", "line": "model.py:42",
                     "MACs": "16.4 k", "FLOPs": "32.8 k", "bytes": "11.2 KiB", "time unfused": "3.6 ns",
                     "share": "75.0 %", "limiter": "memory"}
    assert second["module"] == "-" and second["op"] == "relu" and second["bytes"] == "4 KiB" and second["line"] == "-"
    modules = md.per_module_table(rows)
    assert [r.data["module"] for r in modules.records] == ["(model)", "\u2003encoder", "\u2003\u2003encoder.fc1 (Linear)"]
    assert modules.records[0].data["share"] == "100.0 %" and modules.records[2].data["MACs"] == "16.4 k"
    assert len(md.per_op_table(rows, top=1).records) == 1


def test_kernelbench_length_names_are_cut_to_fit_the_page_not_lost():
    """A HuggingFace module path and a KernelBench file name: the UI cells keep the path's end
    and the file's both ends (per_op.csv keeps them whole)."""
    path = "model.transformer.h.11.attn.c_attn"
    row = _op(1, path, "addmm", 16384, 11520, 3.6e-9, 1.0).model_copy(update={
        "module_class": "Conv1D", "label": "addmm#48",
        "source": "47_Hugging_Face_Transformers_GPT2_LMHeadModel_Inference.py:123"})
    [record] = md.per_op_table([row]).records
    cells = record.data
    assert all(len(str(v)) <= md.UI_TEXT_CHARS for v in cells.values()), cells
    assert cells["module"].startswith("…") and cells["module"].endswith("c_attn (Conv1D)")
    assert cells["line"].startswith("47_Hug") and cells["line"].endswith(".py:123")
    modules = md.per_module_table([row])
    assert all(len(r.data["module"].lstrip("\u2003")) <= md.UI_TEXT_CHARS for r in modules.records)


def test_an_op_is_placed_at_its_own_intensity_and_attained_rate(tmp_path):
    from solar_assets.report.roofline_plot import op_point, plot_roofline

    op = _op(1, "fc1", "addmm", 16384, 11520, 3.6e-9, 0.75)
    x, y = op_point(op)
    assert x == pytest.approx(2 * 16384 / 11520) and y == pytest.approx(2 * 16384 / 3.6e-9 / 1e12)
    assert op_point(_op(2, "", "cat", 0, 4096, 1e-9, 0.25)) is None  # no FLOPs: no place on a log axis
    row = _row()
    png = plot_roofline([row], tmp_path / "r.png", per_op=[op, _op(2, "", "cat", 0, 4096, 1e-9, 0.25)])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _row():
    """A hand-made report row of a memory-bound MLP on H100_SXM: the fields the plot reads."""
    from ir_schemas import ReportRow

    fields = {name: None for name in ReportRow.model_fields}
    defaults = {k: v.default for k, v in ReportRow.model_fields.items() if v.default is not None}
    fields.update(defaults)
    fields.update(workload="w", hardware="H100_SXM", dtype="float32", translator="tracer", validated=True,
                  macs=16384, flops=32768, bytes_unfused=22336, bytes_fused=13824, sol_unfused_s=6.7e-9,
                  sol_fused_s=4.2e-9, bound_unfused="memory", bound_fused="memory", peak_flop_per_s=67e12,
                  dram_bytes_per_s=3.35e12, intensity_fused_flop_per_byte=32768 / 13824,
                  intensity_unfused_flop_per_byte=32768 / 22336)
    return ReportRow.model_construct(**fields)


def test_hardware_partitions_come_from_every_spec_dir_the_cli_searches(tmp_path, monkeypatch):
    from solar_assets.dagster_defs.resources import SolarConfig
    from solar_assets.dagster_defs.sensors import new_partitions
    from solar_assets.dagster_defs.sources import hardware_file_versions
    from solar_assets.hardware import list_hardware

    home = tmp_path / "home"
    (home / "hardware").mkdir(parents=True)
    spec = (REPO / "hardware" / "H100_SXM.yaml").read_text()
    assert "name: H100_SXM" in spec
    (home / "hardware" / "mine.yaml").write_text(spec.replace("name: H100_SXM", "name: mine"))
    monkeypatch.setenv("SOLAR_HOME", str(home))
    monkeypatch.delenv("SOLAR_HARDWARE_DIR", raising=False)
    shipped = set(list_hardware(REPO / "hardware"))
    with dg.DagsterInstance.ephemeral() as instance:
        workloads, hardware = new_partitions(instance, SolarConfig.default(home))
        # $SOLAR_HOME/hardware (hardware detect's) is the user's; the shipped specs and examples are
        # registered when used (a fresh home's UI shows only what the user registered)
        assert hardware == ["mine"] and workloads == []
        from solar_assets.dagster_defs.sensors import shipped_now

        first_tick = shipped_now(SolarConfig.default(home))
        assert {f"h:{s}" for s in shipped} <= first_tick and "w:gemm" in first_tick
        # a shipped-dir file that was not there at the first tick is the user's: registered
        later = new_partitions(instance, SolarConfig.default(home), first_tick - {"h:A6000", "w:gemm"})
        assert later == (["gemm"], ["A6000", "mine"])
        versions = hardware_file_versions(SolarConfig.default(home), ["mine", "H100_SXM", "nope"])
        assert set(versions) == {"mine", "H100_SXM"}
        # a directory of one's own (a test's, a deployment's) is the only one listed
        own = tmp_path / "own"
        own.mkdir()
        shutil.copy(REPO / "hardware" / "A6000.yaml", own / "A6000.yaml")
        config = SolarConfig(home=str(home), workload_dir=str(tmp_path), hardware_dir=str(own))
        assert new_partitions(instance, config)[1] == ["A6000"]


def test_solar_ui_runs_dagster_on_the_shipped_workspace_in_a_non_editable_install(tmp_path, monkeypatch):
    """No ``workspace.yaml`` beside the sources (a wheel): ``solar ui`` uses the package-data copy."""
    import argparse
    import os
    import signal
    import subprocess

    from solar_assets import cli, pipeline
    from solar_assets.dagster_defs import runner

    monkeypatch.setattr(pipeline, "REPO_ROOT", tmp_path / "site-packages")  # no workspace.yaml there
    shipped = Path(cli.__file__).resolve().parent / "_shipped" / "workspace.yaml"
    assert cli.workspace_file() == shipped
    started: list[list[str]] = []

    class Finished:  # dagster dev that exits at once
        pid, returncode = 2**22 + 12345, 0

        def __init__(self, command, **_kwargs):
            started.append(command)

        def poll(self):
            return 0

        def wait(self, timeout=None):
            return 0

    class Exited(Exception):
        pass

    def leave(code):
        raise Exited(code)

    monkeypatch.setattr(runner, "prepare_ui_instance", lambda home: None)
    monkeypatch.setattr(subprocess, "Popen", Finished)
    monkeypatch.setattr(os, "killpg", lambda pid, sig: None)
    monkeypatch.setattr(os, "_exit", leave)
    monkeypatch.setattr(signal, "signal", lambda signum, handler: None)
    with pytest.raises(Exited):
        cli.ui(argparse.Namespace(home=str(tmp_path / "home"), port=3999))
    (command,) = started
    assert command[command.index("-w") + 1] == str(shipped) and command[command.index("-p") + 1] == "3999"


def test_a_fresh_home_shows_only_what_the_user_registered(tmp_path, monkeypatch):
    """The sensor's first tick on a fresh home registers none of the shipped examples and specs
    (the UI showed 'Missing (132)' before anything was asked); a directory of one's own is all
    registered."""
    from solar_assets.dagster_defs.resources import SolarConfig
    from solar_assets.dagster_defs.sensors import source_files

    home = tmp_path / "home"
    monkeypatch.setenv("SOLAR_HOME", str(home))
    monkeypatch.delenv("SOLAR_HARDWARE_DIR", raising=False)
    with dg.DagsterInstance.ephemeral() as instance:
        context = dg.build_sensor_context(instance=instance, resources={"solar": SolarConfig.default(home)})
        assert isinstance(source_files(context), dg.SkipReason)
        assert "w:gemm" in json.loads(context.cursor)  # the baseline: shipped files seen, not registered
        assert instance.get_dynamic_partitions("workload") == [] and instance.get_dynamic_partitions("hardware") == []
        own = tmp_path / "mine"
        own.mkdir()
        (own / "my_model.py").write_text((REPO / "data" / "workloads" / "gemm.py").read_text())
        config = SolarConfig.default(home, workload_dir=own)
        result = source_files(dg.build_sensor_context(instance=instance, resources={"solar": config}))
        [request] = [r for r in result.dynamic_partitions_requests if r.partitions_def_name == "workload"]
        assert list(request.partition_keys) == ["my_model"]
