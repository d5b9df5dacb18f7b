"""`python -m webwinnow ...` = the `webwinnow` command."""

from .app.cli import entry

entry()
