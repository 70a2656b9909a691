"""Errors solar reports to a user. Each message names the file (or workload) and the fault."""


class SolarError(Exception):
    """Base class of every error solar reports to a user; its message names the file and the fault."""


class IRError(SolarError, ValueError):
    """A program that is not valid Affine Loop IR; the message locates the fault."""
