"""``solar ui`` stops within 5 s of SIGTERM / SIGINT and leaves none of its processes behind, also
when started the way a shell's ``&`` does (SIGINT ignored), which is how ``dagster dev`` used to
linger for a minute with its webserver and daemon."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

STOP_WITHIN_S = 5.0
START_WITHIN_S = 240.0  # dagster dev loads the code location in a subprocess: slow on a busy machine


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _parents() -> dict[int, int]:
    """``{pid: parent pid}`` of every process, from /proc (no psutil needed)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            out[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return out


def _descendants(root: int) -> set[int]:
    parents = _parents()
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    """Running and not a zombie (a zombie has exited; only its parent's wait is missing)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _background_like() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # what `solar ui &` inherits from a non-interactive shell


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_solar_ui_stops_within_5s_with_its_children(tmp_path: Path, signum: int) -> None:
    port = _free_port()
    env = {**os.environ, "SOLAR_HOME": str(tmp_path / "home")}
    log = (tmp_path / "ui.log").open("wb")
    solar = Path(sys.executable).with_name("solar")
    ui = subprocess.Popen([str(solar), "ui", "--home", str(tmp_path / "home"), "--port", str(port)], env=env,
                          stdout=log, stderr=subprocess.STDOUT,
                          preexec_fn=_background_like if signum == signal.SIGTERM else None)
    children: set[int] = set()
    try:
        deadline = time.monotonic() + START_WITHIN_S
        while not _answers(port):
            assert ui.poll() is None, f"solar ui exited with {ui.returncode}:\n{(tmp_path / 'ui.log').read_text()[-3000:]}"
            assert time.monotonic() < deadline, "solar ui did not answer in time"
            time.sleep(1.0)
        children = _descendants(ui.pid)
        assert len(children) >= 2, "dagster dev runs a webserver and a daemon under solar ui"
        sent = time.monotonic()
        ui.send_signal(signum)
        ui.wait(timeout=STOP_WITHIN_S + 5)
        took = time.monotonic() - sent
        assert took < STOP_WITHIN_S, f"solar ui took {took:.1f} s to stop"
        time.sleep(0.2)
        left = sorted(pid for pid in children if _alive(pid))
        assert not left, f"processes left behind: {left}"
        assert not _answers(port)
    finally:
        if ui.poll() is None:
            ui.kill()
            ui.wait()
        for pid in children:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        log.close()
