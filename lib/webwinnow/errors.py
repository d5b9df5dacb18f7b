"""Errors a user can act on: the command prints their message as one line and exits non-zero.

Anything else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations


class UserError(ValueError):
    """Bad input, a refused --out, a missing table: the message says what to do. Exit status 2.

    A ValueError, so library callers that catch bad values catch it too.
    """

    exit_code = 2


class TooManyFailures(UserError):
    """More input files failed than extract.max_failed_ratio allows; documents were not written."""

    exit_code = 3
