"""Versioned data formats of solar: the Affine Loop IR and the report.

The pydantic models here are the source of truth; the committed ``*.schema.json`` files are
generated from them (``python -m ir_schemas.export``) and a test keeps the two in sync.
"""
from ir_schemas.affine_loop_ir import (
    IR_VERSION,
    Cond,
    DType,
    Kernel,
    Linalg,
    Loop,
    Origin,
    Program,
    Repeat,
    Reshape,
    Role,
    Step,
    TensorDecl,
    TopK,
    Update,
)
from ir_schemas.report import REPORT_VERSION, ReportRow
from ir_schemas.report_document import REPORT_SCHEMA, Failure, MeasuredOpRow, ModuleRow, PerOpRow, ReportDocument

__all__ = [
    "IR_VERSION", "Cond", "DType", "Kernel", "Linalg", "Loop", "Origin", "Program", "Repeat", "Reshape", "Role", "Step",
    "TensorDecl", "TopK", "Update", "REPORT_VERSION", "ReportRow",
    "REPORT_SCHEMA", "Failure", "MeasuredOpRow", "ModuleRow", "PerOpRow", "ReportDocument",
]
