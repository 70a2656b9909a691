"""Packaging (issue 17, item 8): the specs and the Dagster workspace travel in the wheel, the
dependencies are ranges, and constraints.txt holds exact versions inside those ranges."""
from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
SPECS = sorted(p.name for p in (REPO / "hardware").glob("*.yaml") if p.name != "host.yaml")


def _project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def _constraints() -> dict[str, str]:
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def test_dependencies_are_ranges_except_torch():
    for text in [*_project()["dependencies"], *_project()["optional-dependencies"]["postgres"],
                 *_project()["optional-dependencies"]["dask"], *_project()["optional-dependencies"]["k8s"]]:
        req = Requirement(text)
        exact = [s for s in req.specifier if s.operator == "=="]
        if req.name == "torch":
            assert exact, text  # torch exact (STACK.md)
        else:  # Dagster too: solar uses its public API only (tests/test_dagster_public_api.py)
            assert not exact and any(s.operator == "<" for s in req.specifier), f"{text}: want a bounded range"


def test_make_test_dagster_range_covers_the_lowest_and_newest_dagster_allowed():
    from packaging.version import Version

    makefile = (REPO / "Makefile").read_text()
    versions = next(line for line in makefile.splitlines() if line.startswith("DAGSTER_RANGE")).split("=", 1)[1].split()
    (spec,) = [Requirement(t).specifier for t in _project()["dependencies"] if Requirement(t).name == "dagster"]
    lowest = min(s.version for s in spec if s.operator == ">=")
    assert lowest in versions and all(spec.contains(v) for v in versions)
    assert max(Version(v) for v in versions) > Version(lowest)


def test_constraints_pin_every_direct_dependency_inside_its_range():
    pins = _constraints()
    deps = [Requirement(t) for t in [*_project()["dependencies"], *_project()["optional-dependencies"]["test"]]]
    for req in deps:
        name = canonicalize_name(req.name)
        assert name in pins, f"constraints.txt lacks {req.name}"
        assert req.specifier.contains(pins[name]), f"{req.name}=={pins[name]} is outside {req.specifier}"


def test_make_setup_installs_with_the_constraints():
    makefile = (REPO / "Makefile").read_text()
    assert "pip install -q -c constraints.txt -e '.[test,hf,postgres,dask,k8s]'" in makefile  # the tests need these extras


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("whl")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(REPO),
                    "-w", str(out)], check=True, cwd=REPO, capture_output=True, timeout=300)
    (path,) = out.glob("solar-*.whl")
    return path


def test_wheel_carries_the_specs_and_the_workspace(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for spec in SPECS:
            member = f"solar_assets/_shipped/hardware/{spec}"
            assert member in names
            assert z.read(member) == (REPO / "hardware" / spec).read_bytes()
        assert z.read("solar_assets/_shipped/workspace.yaml") == (REPO / "workspace.yaml").read_bytes()


def test_installed_wheel_finds_the_specs_outside_the_repo(wheel, tmp_path):
    """Unpacked as site-packages would hold it, with no repo around it: the loader uses the package data."""
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    env = {k: v for k, v in os.environ.items() if k not in ("SOLAR_HARDWARE_DIR", "SOLAR_HOME")}
    env["PYTHONPATH"] = str(site)
    code = ("import solar_assets.hardware as h; print(h.shipped_hardware_dir()); "
            "print(','.join(h.list_hardware())); print(h.load_hardware('h100_sxm').name)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         check=True, timeout=120).stdout.splitlines()
    assert out[0] == str(site / "solar_assets" / "_shipped" / "hardware")
    assert out[1].split(",") == [s.removesuffix(".yaml") for s in SPECS]
    assert out[2] == "H100_SXM"


def test_workspace_file_from_a_checkout_or_the_wheel(wheel, tmp_path):
    from solar_assets.cli import workspace_file

    assert workspace_file() == REPO / "workspace.yaml"
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    env = {k: v for k, v in os.environ.items() if k not in ("SOLAR_HARDWARE_DIR", "SOLAR_HOME")}
    env["PYTHONPATH"] = str(site)
    code = "from solar_assets.cli import workspace_file; print(workspace_file())"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == str(site / "solar_assets" / "_shipped" / "workspace.yaml")
