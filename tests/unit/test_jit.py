"""core.jit: Numba's dispatchers made on a kernel's first use, so a process that calls no kernel
(a run's driver) never imports Numba."""

from __future__ import annotations

import pickle
import subprocess
import sys


def test_kernels_are_made_on_first_use_and_their_modules_rebound():
    code = (
        "import sys\n"
        "import webwinnow.core.kernel as kernel, webwinnow.analysis.windows as windows\n"
        "import webwinnow.stages.extract, webwinnow.stages.passages, webwinnow.stages.report\n"
        "from webwinnow.core.jit import LazyKernel, is_made\n"
        "assert 'numba' not in sys.modules and not is_made()\n"
        "assert isinstance(kernel._normalize, LazyKernel)\n"
        "from webwinnow.core.winnowing import fingerprint\n"
        "hashes, positions = fingerprint('The quick brown fox jumps over the lazy dog ' * 20, 5, 4)\n"
        "assert len(hashes) and is_made() and 'numba' in sys.modules\n"
        "from numba.core.dispatcher import Dispatcher\n"
        # every module's names for its kernels, and another module's imported names, are Numba's now
        "assert isinstance(kernel._normalize, Dispatcher) and isinstance(windows._batch_windows, Dispatcher)\n"
        "assert not [k for m in list(sys.modules.values()) if m and m.__name__.startswith('webwinnow')\n"
        "            for k, v in vars(m).items() if isinstance(v, LazyKernel)]\n"
        # a module imported afterwards gets dispatchers at once
        "import webwinnow.analysis.components as components\n"
        "assert isinstance(components._union_all, Dispatcher)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


def test_a_lazy_kernel_stands_for_its_dispatcher_and_pickles_as_its_modules_kernel():
    import numpy as np

    from webwinnow.core import kernel
    from webwinnow.core.jit import JIT_OPTIONS, LazyKernel, made

    made()
    lazy = LazyKernel(kernel._kgram_hashes.py_func, JIT_OPTIONS)
    assert pickle.loads(pickle.dumps(lazy)) is kernel._kgram_hashes
    codes = np.arange(20, dtype=np.int32)
    # called, it is a dispatcher of the same function: the same hashes
    assert np.array_equal(lazy(codes, 5), kernel._kgram_hashes(codes, 5))
    assert lazy.py_func is kernel._kgram_hashes.py_func and lazy.signatures
