"""The one set of Numba options every kernel in webwinnow is compiled with.

cache=True: compiled once per machine and loaded from disk afterwards (about 20 s cold, 0.1 s
cached; executors need a writable NUMBA_CACHE_DIR). nogil=True: kernels release the GIL, so
threads of one Python worker can run them side by side. No fastmath: the hashes are integer
arithmetic mod 2^64 and must be bit-exact everywhere.
"""

from __future__ import annotations

from typing import Any

JIT_OPTIONS: dict[str, Any] = {"cache": True, "nogil": True}
