"""Build hook: copy the shipped hardware specs and the Dagster workspace into the wheel.

The top-level ``hardware/`` folder stays the source of truth (DESIGN.md fixes the layout); a wheel
carries a copy as package data under ``solar_assets/_shipped/`` so a non-editable install finds them
(``solar_assets.hardware.spec.shipped_hardware_dir``). Everything else is in pyproject.toml.
"""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildWithShippedData(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / "solar_assets" / "_shipped"
        (target / "hardware").mkdir(parents=True, exist_ok=True)
        for spec in sorted((ROOT / "hardware").glob("*.yaml")):
            if spec.name != "host.yaml":  # machine-specific, never shipped
                shutil.copy2(spec, target / "hardware" / spec.name)
        shutil.copy2(ROOT / "workspace.yaml", target / "workspace.yaml")


setup(cmdclass={"build_py": BuildWithShippedData})
