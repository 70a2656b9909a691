"""The Dagster UI in a real browser: start ``dagster-webserver`` on solar's definitions and a temp
``SOLAR_HOME`` with a hardware spec and a small two-layer MLP materialised to its bounds, open it
in headless Chromium, and check what a person sees: the asset graph shows the stages; the metadata
shows figures with units (``TFLOP/s``, ``ns``, ``KiB``), never a raw 17-digit float; the bounds asset
shows the per-op table inline; the IR and the roofline picture open whole (no line cut at the
dialog's edge, the PNG decoded).

The first test drives Chromium's own CLI (``--dump-dom``: no driver); the second clicks through
the Chrome DevTools Protocol (a websocket, ``websockets`` from the venv). Screenshots are kept as
artefacts under ``$SOLAR_HOME/artifacts/`` (default ``data/solar_home/artifacts/``):
``ui_asset_graph.png``, ``ui_hardware_spec.png``, ``ui_sol_bounds.png``, ``ui_ir_dialog.png``.
"""
from __future__ import annotations

import base64
import itertools
import json
import os
import re
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
RAW_FLOAT = re.compile(r"\d\.\d{9,}|\d{13,}")  # 0.000032051994746268655, 67000000000000

BATCH, IN_FEATURES, HIDDEN, OUT_FEATURES = 8, 32, 64, 16
TINY_MLP = f"""import torch
import torch.nn as nn

batch_size, in_features, hidden, out_features = {BATCH}, {IN_FEATURES}, {HIDDEN}, {OUT_FEATURES}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return []
"""


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


@pytest.fixture(scope="module")
def ui_server(tmp_path_factory):
    """A SOLAR_HOME with hardware_spec[H100_SXM] and tiny_mlp's stages on it materialised, and the
    webserver on it (started once for the module's tests)."""
    import dagster as dg

    from solar_assets.dagster_defs.partitions import register_partitions, workload_hardware_key
    from solar_assets.dagster_defs.resources import SolarConfig
    from solar_assets.dagster_defs.runner import QUIET_LOGGERS, dagster_home, solar_instance
    from solar_assets.dagster_defs.sources import SOURCE_ASSETS
    from solar_assets.dagster_defs.assets import ASSETS, BOUND_ASSETS, WORKLOAD_ASSETS, hardware_spec
    from solar_assets.dagster_defs.definitions import resources_for

    tmp_path = tmp_path_factory.mktemp("ui")
    home, workloads = tmp_path / "home", tmp_path / "workloads"
    workloads.mkdir()
    (workloads / "tiny_mlp.py").write_text(TINY_MLP)
    config = SolarConfig.default(home, workload_dir=workloads)
    with solar_instance(home) as instance:
        register_partitions(instance, ["gemm", "tiny_mlp"], ["H100_SXM", "A6000"])
        for selection, key in (([hardware_spec], "H100_SXM"), (WORKLOAD_ASSETS, "tiny_mlp"),
                               (BOUND_ASSETS, workload_hardware_key("tiny_mlp", "H100_SXM"))):
            run = dg.materialize([*SOURCE_ASSETS, *ASSETS], selection=list(selection), partition_key=key,
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
    from solar_assets.hardware import load_hardware
    from solar_assets.report import format_bytes, format_count

    spec = load_hardware("H100_SXM")  # the figures with their units, as the formatters write them
    for shown in (format_count(spec.dram_bytes_per_s, "B/s"), format_bytes(spec.onchip_buffer_bytes), "TFLOP/s"):
        assert shown in dom, f"{asset_url}: {shown!r} not shown"
    assert " TB/s" in format_count(spec.dram_bytes_per_s, "B/s")  # a unit, not digits
    assert not RAW_FLOAT.findall(_visible_metadata(dom)), f"{asset_url}: raw floats shown"
    shot = artifacts / "ui_hardware_spec.png"
    _chromium(asset_url, tmp_path / "profile-asset-shot", shot)
    for png in (artifacts / "ui_asset_graph.png", shot):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def _visible_metadata(dom: str) -> str:
    """The page's text without its tags, scripts and styles (a float in a script is not shown)."""
    dom = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", dom, flags=re.S)
    return re.sub(r"<[^>]+>", " ", dom)


class DevTools:
    """Headless Chromium driven over the Chrome DevTools Protocol: navigate, run JavaScript, take a
    screenshot. The few calls a test needs, over ``websockets``' synchronous client."""

    def __init__(self, profile: Path):
        from websockets.sync.client import connect

        port = _free_port()
        self.browser = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--window-size=1600,1000", f"--remote-debugging-port={port}",
             "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=5) as response:
                    page = next(t for t in json.loads(response.read()) if t["type"] == "page")
                break
            except (OSError, StopIteration):
                if time.monotonic() > deadline:
                    self.close()
                    pytest.fail("headless Chromium did not open its DevTools port within 60 s")
                time.sleep(0.5)
        self.socket = connect(page["webSocketDebuggerUrl"], max_size=2**27, open_timeout=30)
        self.ids = itertools.count(1)

    def call(self, method: str, **params) -> dict:
        call_id = next(self.ids)
        self.socket.send(json.dumps({"id": call_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=120))
            if message.get("id") == call_id:
                assert "error" not in message, message["error"]
                return message["result"]

    def js(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def open(self, url: str, ready: str, timeout_s: float = 120) -> None:
        """Navigate and wait until the page's text contains ``ready``."""
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + timeout_s
        while not self.js(f"!!document.body && document.body.innerText.includes({json.dumps(ready)})"):
            if time.monotonic() > deadline:
                pytest.fail(f"{url}: {ready!r} not shown within {timeout_s:g} s")
            time.sleep(0.5)

    def screenshot(self, path: Path) -> None:
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"]))

    def close(self) -> None:
        with_socket = getattr(self, "socket", None)
        if with_socket is not None:
            with_socket.close()
        os.killpg(self.browser.pid, signal.SIGTERM)
        self.browser.wait(timeout=30)


OPEN_DIALOG = """(async (entry) => {
  const rows = [...document.querySelectorAll('tr')].filter(r => r.firstElementChild
      && r.firstElementChild.textContent.trim() === entry);
  const link = rows.length && [...rows[0].querySelectorAll('a')].find(a => a.textContent.trim() === '[Show Markdown]');
  if (!link) return null;
  link.click();
  for (let i = 0; i < 40 && !document.querySelector('.bp5-dialog'); i++) await new Promise(r => setTimeout(r, 250));
  await new Promise(r => setTimeout(r, 1000));  // images decode, layout settles
  const dialog = document.querySelector('.bp5-dialog');
  if (!dialog) return null;
  const box = dialog.getBoundingClientRect();
  const scrollers = [...dialog.querySelectorAll('*')].filter(e => getComputedStyle(e).overflowX === 'auto');
  return {
    pres: [...dialog.querySelectorAll('pre')].map(p => ({text: p.textContent, whiteSpace: getComputedStyle(p).whiteSpace,
                                                       right: p.getBoundingClientRect().right, width: p.scrollWidth,
                                                       shown: p.clientWidth})),
    images: [...dialog.querySelectorAll('img')].map(i => ({alt: i.alt, width: i.naturalWidth, height: i.naturalHeight})),
    dialogRight: box.right, windowWidth: window.innerWidth,
    hiddenByScroll: scrollers.some(e => e.scrollWidth > e.clientWidth + 1),
  };
})"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it: apt-get install chromium)")
def test_units_the_per_op_table_the_ir_and_the_roofline_in_the_ui(ui_server, tmp_path):
    pytest.importorskip("websockets", reason="the DevTools Protocol needs a websocket client")
    from urllib.parse import quote

    from solar_assets.hardware import load_hardware
    from solar_assets.report import format_bytes, format_count, format_seconds

    port, _assets, home = ui_server
    artifacts = pipeline.solar_home() / "artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)
    base = f"http://127.0.0.1:{port}"
    spec = load_hardware("H100_SXM")
    bandwidth = spec.dram_bytes_per_s
    # each Linear is one addmm kernel: x, weight, bias in and the product out, float32, once each
    fc1_bytes = 4 * (BATCH * IN_FEATURES + HIDDEN * IN_FEATURES + HIDDEN + BATCH * HIDDEN)
    fc2_bytes = 4 * (BATCH * HIDDEN + OUT_FEATURES * HIDDEN + OUT_FEATURES + BATCH * OUT_FEATURES)
    relu_bytes = 4 * 2 * BATCH * HIDDEN
    browser = DevTools(tmp_path / "profile-devtools")
    try:
        bounds_url = f"{base}/assets/sol_bounds?partition={quote('H100_SXM|tiny_mlp')}&view=events"
        browser.open(bounds_url, "per-op")
        text = browser.js("document.body.innerText")
        browser.js("[...document.querySelectorAll('td')].find(td => td.textContent.trim() === 'per-op')"
                   "?.scrollIntoView({block: 'start'})")  # the screenshot shows the per-op table
        browser.screenshot(artifacts / "ui_sol_bounds.png")
        assert "TFLOP/s" in text and format_count(bandwidth, "B/s") in text, text[:3000]
        # a tiny MLP is memory-bound: each op's time is its bytes over the bandwidth, in ns
        fc1_s = fc1_bytes / bandwidth
        assert format_seconds(fc1_s).endswith(" ns") and format_seconds(fc1_s) in text
        assert not RAW_FLOAT.findall(text), RAW_FLOAT.findall(text)
        tables = browser.js("[...document.querySelectorAll('table')].map(t => t.innerText)")
        (per_op,) = [t for t in tables if t.startswith("rank\tmodule\top")]
        right = browser.js("Math.max(...[...document.querySelectorAll('table')].filter(t => t.innerText.startsWith("
                           "'rank\\tmodule\\top')).map(t => t.getBoundingClientRect().right))")
        assert right <= browser.js("window.innerWidth"), "the per-op table runs past the page"
        lines = [line.split("\t") for line in per_op.splitlines()]
        assert lines[0] == ["rank", "module", "op", "line", "MACs", "FLOPs", "bytes", "time unfused", "share", "limiter"]
        by_module = {cells[1]: cells for cells in lines[1:]}  # module path and class, op label, the user's line
        assert by_module["fc1 (Linear)"][2] == "addmm#1" and by_module["fc1 (Linear)"][3].startswith("tiny_mlp.py:")
        assert by_module["fc1 (Linear)"][4:8] == [format_count(BATCH * IN_FEATURES * HIDDEN),
                                                  format_count(2 * BATCH * IN_FEATURES * HIDDEN),  # as FlopCounterMode counts addmm
                                                  format_bytes(fc1_bytes), format_seconds(fc1_s)]
        assert by_module["fc2 (Linear)"][2] == "addmm#2" and by_module["fc2 (Linear)"][6] == format_bytes(fc2_bytes)
        (relu,) = [cells for cells in lines[1:] if cells[2].startswith("relu#")]
        assert relu[4] == "0" and relu[6] == format_bytes(relu_bytes) and relu[9] == "memory"
        total = fc1_bytes + fc2_bytes + relu_bytes
        assert by_module["fc1 (Linear)"][8] == f"{100 * fc1_bytes / total:.1f} %"
        (tree,) = [t for t in tables if t.startswith("module\tops\tMACs")]  # the same ops by module
        rows = [line.split("\t") for line in tree.splitlines()]
        assert rows[1][0].startswith("(model") and rows[1][7] == "100.0 %"
        assert any(r[0].strip() == "fc1 (Linear)" and r[2] == format_count(BATCH * IN_FEATURES * HIDDEN) for r in rows)
        # the roofs are the units' own peaks, named by unit and dtype (the spec's fp32 vector figure)
        assert "unit peaks (busiest first)" in text and "fp32 6.7e+13 FLOP/s" in text

        roofline = browser.js(f"({OPEN_DIALOG})('roofline')")
        assert roofline is not None, "no [Show Markdown] dialog for the roofline"
        (image,) = roofline["images"]
        assert image["alt"] == "roofline of tiny_mlp on H100_SXM" and image["width"] >= 400 and image["height"] >= 300

        ir_url = f"{base}/assets/ir_translation?partition=tiny_mlp&view=events"
        browser.open(ir_url, "translator")
        ir = browser.js(f"({OPEN_DIALOG})('IR')")
        assert ir is not None, "no [Show Markdown] dialog for the IR"
        browser.screenshot(artifacts / "ui_ir_dialog.png")
        (pre,) = ir["pres"]
        lines = pre["text"].rstrip("\n").splitlines()
        assert lines[0].startswith("program tiny_mlp") and len(lines) >= 5 and pre["whiteSpace"].startswith("pre")
        assert pre["width"] <= pre["shown"] + 1 and not ir["hiddenByScroll"], "an IR line runs past the dialog"
        assert pre["right"] <= ir["dialogRight"] <= ir["windowWidth"]
    finally:
        browser.close()
    for png in (artifacts / "ui_sol_bounds.png", artifacts / "ui_ir_dialog.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
