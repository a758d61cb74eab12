"""qct's error types: what the library raises for a problem the user can fix."""

from __future__ import annotations


class QctError(Exception):
    """An error the user can fix; the CLI prints it as one line and exits with .exit_code."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code
