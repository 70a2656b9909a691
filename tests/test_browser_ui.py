"""The Dagster UI in a real browser: start ``dagster-webserver`` on solar's definitions and a temp
``SOLAR_HOME`` with one materialised asset, open it in headless Chromium (its own CLI: no
driver), and check that the asset graph shows the stages and that the asset's metadata renders.

Screenshots are kept as artefacts under ``$SOLAR_HOME/artifacts/`` (default
``data/solar_home/artifacts/``): ``ui_asset_graph.png`` and ``ui_hardware_spec.png``.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from solar_assets import pipeline

pytestmark = pytest.mark.slow  # start-up of the webserver and the browser: about a minute

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
STAGES = ("workload_source", "golden_outputs", "ir_translation", "ir_validation", "einsum_graph",
          "hardware_spec", "sol_bounds", "cache_aware_bound", "inverse_roofline", "headroom_report")
START_TIMEOUT_S = 240


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _graphql(port: int, query: str) -> dict:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=json.dumps({"query": query}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def _wait_for_assets(port: int, server: subprocess.Popen, log: Path) -> list[str]:
    """Poll until the code location is loaded and lists its assets (or the server died)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    last = "no answer"
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"dagster-webserver exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        try:
            data = _graphql(port, "{ assetNodes { assetKey { path } } }")
            nodes = (data.get("data") or {}).get("assetNodes") or []
            if nodes:
                return ["/".join(n["assetKey"]["path"]) for n in nodes]
            last = json.dumps(data)[:300]
        except OSError as e:
            last = str(e)
        time.sleep(2)
    pytest.fail(f"the UI did not list assets within {START_TIMEOUT_S} s (last: {last}):\n{log.read_text()[-3000:]}")


def _chromium(url: str, profile: Path, screenshot: Path | None = None, budget_ms: int = 20000) -> str:
    """Load ``url`` in headless Chromium; return the DOM after ``budget_ms`` of virtual time."""
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={profile}", "--window-size=1600,1000",
             f"--virtual-time-budget={budget_ms}"]
    if screenshot is not None:
        flags.append(f"--screenshot={screenshot}")
    else:
        flags.append("--dump-dom")
    done = subprocess.run([*flags, url], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture
def ui_server(tmp_path):
    """A SOLAR_HOME with hardware_spec[H100_SXM] materialised, and the webserver on it."""
    import dagster as dg

    from solar_assets.assets.partitions import register_partitions
    from solar_assets.assets.resources import SolarConfig
    from solar_assets.assets.runner import QUIET_LOGGERS, dagster_home, solar_instance
    from solar_assets.assets.sources import SOURCE_ASSETS
    from solar_assets.assets.stages import ASSETS, hardware_spec
    from solar_assets.definitions import resources_for

    home = tmp_path / "home"
    config = SolarConfig.default(home)
    with solar_instance(home) as instance:
        register_partitions(instance, ["gemm"], ["H100_SXM", "A6000"])
        run = dg.materialize([*SOURCE_ASSETS, *ASSETS], selection=[hardware_spec], partition_key="H100_SXM",
                             instance=instance, resources=resources_for(config), run_config=QUIET_LOGGERS)
        assert run.success
    port = _free_port()
    env = {**os.environ, "SOLAR_HOME": str(home), "DAGSTER_HOME": str(dagster_home(home))}
    log = tmp_path / "webserver.log"
    webserver = Path(sys.executable).with_name("dagster-webserver")
    with log.open("w") as out:
        server = subprocess.Popen([str(webserver), "-w", str(REPO / "workspace.yaml"), "-h", "127.0.0.1",
                                   "-p", str(port)], cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    try:
        assets = _wait_for_assets(port, server, log)
        yield port, assets, home
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it: apt-get install chromium)")
def test_asset_graph_and_metadata_render_in_chromium(ui_server, tmp_path):
    port, assets, _home = ui_server
    assert set(STAGES) <= set(assets)
    artifacts = pipeline.solar_home() / "artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)
    base = f"http://127.0.0.1:{port}"

    # the lineage of the report, all levels up: every stage as its own node (the global lineage
    # page folds assets into their groups)
    graph_url = f"{base}/assets/headroom_report?view=lineage&lineageScope=upstream&lineageDepth=10"
    dom = _chromium(graph_url, tmp_path / "profile-graph")
    missing = [s for s in STAGES if s not in dom]
    assert not missing, f"asset graph at {graph_url} does not show {missing}"
    _chromium(graph_url, tmp_path / "profile-graph-shot", artifacts / "ui_asset_graph.png")

    asset_url = f"{base}/assets/hardware_spec?partition=H100_SXM&view=events"
    dom = _chromium(asset_url, tmp_path / "profile-asset")
    for shown in ("DRAM bytes/s", "on-chip buffer bytes", "NVIDIA", "sources"):
        assert shown in dom, f"{asset_url}: metadata entry {shown!r} not rendered"
    shot = artifacts / "ui_hardware_spec.png"
    _chromium(asset_url, tmp_path / "profile-asset-shot", shot)
    for png in (artifacts / "ui_asset_graph.png", shot):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
