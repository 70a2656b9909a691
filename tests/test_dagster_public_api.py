"""solar uses Dagster through its public API only: no module of solar imports ``dagster._...``,
names a private Dagster module in the instance configuration it writes, or writes to the event
log itself (Dagster's storage calls); every materialisation comes from a Dagster step."""
import ast
from pathlib import Path

import solar_assets

PACKAGE = Path(solar_assets.__file__).parent
# Storage entry points that write events or index them outside a step (what batch.py once called).
EVENT_LOG_WRITES = {"store_event", "store_event_batch", "prepare_insert_event", "index_transaction",
                    "_store_asset_event", "_store_asset_event_tags", "handle_new_event", "report_runless_asset_event",
                    "wipe_input_asset_version_info", "_step_execution_context"}


def _modules() -> list[Path]:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 50  # the scan sees the package
    return files


def test_no_module_imports_a_private_dagster_module():
    private = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            private += [f"{path.relative_to(PACKAGE)}:{node.lineno}: {n}" for n in names
                        if n.startswith("dagster") and any(part.startswith("_") for part in n.split(".")[1:])]
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in {
                    "import_module", "__import__"} and node.args and isinstance(node.args[0], ast.Constant) \
                    and str(node.args[0].value).startswith("dagster._"):
                private.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.args[0].value}")
    assert private == []


def test_no_module_writes_to_the_event_log():
    writes = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr in EVENT_LOG_WRITES:
                writes.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: .{node.attr}")
    assert writes == []


def test_the_instance_configuration_names_no_private_dagster_module(tmp_path):
    import yaml

    from solar_assets.dagster_defs.instance import DAGSTER_YAML

    text = DAGSTER_YAML.format(home=tmp_path)
    modules = []

    def walk(value):
        if isinstance(value, dict):
            modules.extend(str(v) for k, v in value.items() if k == "module")
            for v in value.values():
                walk(v)

    walk(yaml.safe_load(text))
    assert not [m for m in modules if "._" in m or m.startswith("dagster._")]
