"""Kept for the translate/agent imports: the symbolic views live in ``translate.core.affine``."""
from solar_assets.translate.core.affine import Lin, SymTensor, split_reshape, view_dim

__all__ = ["Lin", "SymTensor", "split_reshape", "view_dim"]
