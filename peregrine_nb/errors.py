"""Exceptions raised by peregrine_nb.

Every failing C call sets a per-thread message naming what went wrong; the
Python layer raises the exception class that matches the status, carrying that
message unchanged.
"""
from __future__ import annotations


class PeregrineError(Exception):
    """Base class of every error the engine reports."""

    status: str = "PG_ERR"

    def __init__(self, message: str, status: str | None = None):
        super().__init__(message)
        if status is not None:
            self.status = status


class InvalidArgumentError(PeregrineError, ValueError):
    status = "PG_ERR_INVALID_ARG"


class UnsupportedError(PeregrineError):
    status = "PG_ERR_UNSUPPORTED"


class ShapeError(PeregrineError, ValueError):
    status = "PG_ERR_SHAPE"


class DTypeError(PeregrineError, TypeError):
    status = "PG_ERR_DTYPE"


class GraphError(PeregrineError):
    status = "PG_ERR_GRAPH"


class FormatError(PeregrineError):
    status = "PG_ERR_FORMAT"


class LibraryNotFoundError(PeregrineError, ImportError):
    status = "PG_ERR_NOLIB"


BY_STATUS = {
    cls.status: cls
    for cls in (InvalidArgumentError, UnsupportedError, ShapeError, DTypeError, GraphError, FormatError)
}
