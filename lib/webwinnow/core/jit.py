"""The one set of Numba options every kernel in webwinnow is compiled with, and the decorator
that defers importing Numba until a kernel is first used.

cache=True: compiled once per machine and loaded from disk afterwards (about 20 s cold, 0.1 s
cached; executors need a writable NUMBA_CACHE_DIR). nogil=True: kernels release the GIL, so
threads of one Python worker can run them side by side. No fastmath: the hashes are integer
arithmetic mod 2^64 and must be bit-exact everywhere.

`njit` is Numba's, made late: a module's kernels are placeholders until any of them is called
(or asked for an attribute); then every kernel of every module imported so far gets its Numba
dispatcher at once, and each module's name for it is rebound to the dispatcher, before Numba
compiles or loads anything (it resolves a kernel's callees by their module globals). The
stages' modules import the kernels' modules for their tasks, so the driver imported Numba
(0.2 CPU-s) in every run without calling a kernel (stages._kernels.kernels_fresh answers from a
file of its own when it can). Kernels decorated once that has happened are Numba's at once.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

JIT_OPTIONS: dict[str, Any] = {"cache": True, "nogil": True}

_LOCK = threading.RLock()
_PENDING: list[LazyKernel] = []
_made = False


class LazyKernel:
    """A kernel whose Numba dispatcher is made on its first use (see the module's docstring):
    called or asked for an attribute, it stands for the dispatcher; pickled, it is its module's
    kernel of that name."""

    def __init__(self, fn: Callable, options: dict[str, Any]) -> None:
        self.py_func, self.options = fn, options
        self.dispatcher: Any = None

    def __call__(self, *args, **kwargs):
        return made(self)(*args, **kwargs)

    def __getattr__(self, name: str):
        if name in ("py_func", "options", "dispatcher"):  # not set yet (copy, unpickle): no recursion
            raise AttributeError(name)
        return getattr(made(self), name)

    def __reduce__(self):
        return _kernel_named, (self.py_func.__module__, self.py_func.__qualname__)

    def __repr__(self) -> str:
        return f"<lazy kernel {self.py_func.__module__}.{self.py_func.__qualname__}>"


def njit(**options: Any) -> Callable[[Callable], Any]:
    """numba.njit(**options), whose dispatcher (and Numba's import) waits for a first use."""

    def decorate(fn: Callable):
        with _LOCK:
            if _made:
                from numba import njit as numba_njit

                return numba_njit(**options)(fn)
            kernel = LazyKernel(fn, options)
            _PENDING.append(kernel)
            return kernel

    return decorate


def made(kernel: LazyKernel | None = None):
    """Make every pending kernel's dispatcher and rebind each module's names for them (once);
    the dispatcher of `kernel`."""
    global _made
    with _LOCK:
        if not _made:
            from numba import njit as numba_njit

            for pending in _PENDING:
                pending.dispatcher = numba_njit(**pending.options)(pending.py_func)
            swap = {id(pending): pending.dispatcher for pending in _PENDING}
            for name, module in list(sys.modules.items()):
                if module is None or not (name == "webwinnow" or name.startswith("webwinnow.")):
                    continue
                for attr, value in list(vars(module).items()):
                    if isinstance(value, LazyKernel) and id(value) in swap:
                        setattr(module, attr, swap[id(value)])
            _made = True
        if kernel is not None and kernel.dispatcher is None:  # one not made by njit (a copy)
            from numba import njit as numba_njit

            kernel.dispatcher = numba_njit(**kernel.options)(kernel.py_func)
    return None if kernel is None else kernel.dispatcher


def is_made() -> bool:
    """Whether the kernels' dispatchers exist (Numba imported for them)."""
    return _made


def _kernel_named(module: str, qualname: str):
    import importlib

    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found
