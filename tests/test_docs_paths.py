"""The layout the docs describe is the code's (issue 29, item 4): every path in
docs/architecture.md's concept table and in the README's layout block exists, and every name the
table gives beside a module is defined there, so a rename that forgets the docs fails here."""
from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TICKED = re.compile(r"`([^`]+)`")


def concept_rows() -> list[tuple[str, str]]:
    """(concept, module cell) of each row of the table under "## Where each concept lives"."""
    text = (REPO / "docs" / "architecture.md").read_text()
    section = text.split("## Where each concept lives", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and not set(cells[1]) <= set("-") and cells != ["concept", "module"]:
            rows.append((cells[0], cells[1]))
    assert len(rows) >= 15, rows
    return rows


def _defined(name: str, files: list[Path]) -> bool:
    pattern = re.compile(rf"^\s*(class|def)\s+{re.escape(name)}\b|^{re.escape(name)}\s*[:=]", re.M)
    return any(pattern.search(f.read_text()) for f in files)


def test_every_module_and_name_in_the_concept_table_exists():
    problems = []
    for concept, cell in concept_rows():
        tokens = TICKED.findall(cell)
        base = REPO / tokens[0]
        if not base.exists():
            problems.append(f"{concept}: {tokens[0]} does not exist")
            continue
        for token in tokens[1:]:
            if "/" in token or token.endswith(".py"):  # a file or package inside the first one
                if not (base / token).exists() and not (REPO / token).exists():
                    problems.append(f"{concept}: {token} is not in {tokens[0]}")
            else:  # a name the module defines
                files = sorted(base.rglob("*.py")) if base.is_dir() else [base]
                if not _defined(token, files):
                    problems.append(f"{concept}: {token} is not defined in {tokens[0]}")
    assert not problems, "\n".join(problems)


def layout_paths() -> list[str]:
    """The paths of the README's layout block, each under the directories it is indented in."""
    text = (REPO / "README.md").read_text()
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    paths, parents = [], []
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent % 2 or indent > 8:
            continue  # a description's continuation line
        names = re.match(r"([\w./-]+(?:, [\w./-]+)*)", line.strip())[1]
        level = indent // 2
        parents = parents[:level]
        for name in names.split(", "):
            paths.append("".join(parents) + name)
        if names.endswith("/"):
            parents.append(names)
    assert len(paths) >= 40, paths
    return paths


def test_every_path_in_the_readme_layout_exists():
    missing = [p for p in layout_paths() if not (REPO / p).exists()]
    assert not missing, missing


def test_the_layers_section_states_the_import_tests_allowlist():
    import sys

    sys.path.insert(0, str(REPO / "tests"))
    from test_import_graph import MERGED

    merged = len({node for _, node in MERGED})
    words = {1: "one", 2: "two", 3: "three", 4: "four"}
    text = (REPO / "docs" / "architecture.md").read_text()
    assert f"The allowlist is {words[merged]} merged node" in text


def test_a_renamed_module_would_be_caught():
    """The self-test: a name the table does not hold and a path that is not there are found."""
    assert not _defined("no_such_function_anywhere", [REPO / "solar_assets" / "errors.py"])
    assert _defined("SolarError", [REPO / "solar_assets" / "errors.py"])
    assert "solar_assets/report/per_module.py" in layout_paths() or "solar_assets/report/" in layout_paths()
