"""Arrays derived from code alone, kept on disk so that each new process loads them, not rebuilds.

Spark starts Python workers on every executor; what one worker built (the normalization table,
about a second of CPU) the next one loads in milliseconds. Files go where Numba keeps the compiled
kernels -- ``NUMBA_CACHE_DIR`` when set (a packed, read-only environment on a cluster needs it),
else ``__pycache__`` in the package, else the user's cache folder -- under a name that holds
everything the arrays depend on, so a stale file is never read: it is simply not found.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # NumPy is imported where arrays are read or written: the driver asks only
    import numpy as np  # where the cache is (stages._kernels) as it starts, before its JVM does

PACKAGE = Path(__file__).resolve().parent


def cache_dirs() -> list[Path]:
    """Where to look, in order; a new file goes to the first that can be written."""
    dirs = [Path(os.environ["NUMBA_CACHE_DIR"])] if os.environ.get("NUMBA_CACHE_DIR") else []
    dirs.append(PACKAGE / "__pycache__")
    dirs.append(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "webwinnow")
    return dirs


def cache_name(stem: str, *depends: str, code: tuple[Callable, ...] = ()) -> str:
    """stem-<digest>.npz, the digest over everything the arrays depend on: versions, and the
    source of the functions that build them (edit one and the old file is no longer found)."""
    parts = [*depends, *(inspect.getsource(f) for f in code)]
    return f"{stem}-{hashlib.sha256(chr(0).join(parts).encode()).hexdigest()[:16]}.npz"


def load(path: Path, names: tuple[str, ...]) -> dict[str, np.ndarray] | None:
    """The named arrays of an .npz file; None if it is absent, damaged or lacks one."""
    try:
        import numpy as np

        with np.load(path, allow_pickle=False) as data:
            return {n: data[n] for n in names}
    except (OSError, KeyError, ValueError, EOFError):
        return None


def store(folder: Path, name: str, arrays: dict[str, np.ndarray]) -> bool:
    """Write atomically (a temporary file renamed into place: workers may race); False if the
    folder cannot be written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as fh:
            import numpy as np

            np.savez_compressed(fh, **arrays)  # type: ignore[arg-type]
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would hide it from other users of a shared cache
        os.replace(tmp, folder / name)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


def cached(
    name: str, names: tuple[str, ...], build: Callable[[], dict[str, np.ndarray]], valid: Callable[[dict[str, np.ndarray]], bool]
) -> dict[str, np.ndarray]:
    """The arrays from the first cache folder holding a valid copy, else build() stored in the
    first writable folder (and still returned when none is)."""
    dirs = cache_dirs()
    for folder in dirs:
        found = load(folder / name, names)
        if found is not None and valid(found):
            return found
    arrays = build()
    for folder in dirs:
        if store(folder, name, arrays):
            break
    return arrays
