"""`python -m webwinnow ...` = the `webwinnow` command."""

from .cli import entry

entry()
