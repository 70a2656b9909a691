"""Regenerate the committed JSON Schemas from the pydantic models: ``python -m ir_schemas.export``."""
from __future__ import annotations

import json
from pathlib import Path

from pydantic import TypeAdapter

from ir_schemas.affine_loop_ir import Program
from ir_schemas.report import ReportRow
from ir_schemas.report_document import ReportDocument

HERE = Path(__file__).resolve().parent
SCHEMAS = {
    "affine_loop_ir.v1.schema.json": Program.model_json_schema,
    "report.v1.schema.json": lambda: TypeAdapter(list[ReportRow]).json_schema(),
    "report_document.v2.schema.json": lambda: ReportDocument.model_json_schema(by_alias=True),
}


def render(name: str) -> str:
    return json.dumps(SCHEMAS[name](), indent=2, sort_keys=True) + "\n"


def main() -> None:
    for name in SCHEMAS:
        (HERE / name).write_text(render(name))


if __name__ == "__main__":
    main()
