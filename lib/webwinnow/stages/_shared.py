"""Arrays that every task of a stage reads (boilerplate hashes, template k-grams, index keys).

A classic session broadcasts them. Spark Connect has no broadcast variables: a small array
travels in the tasks' closure, inside the plan, which the server caps (128 MiB by default); a
larger one is written once to the run's folder, which the tasks reach already (they write their
tables' parts there), and each Python worker reads it once and keeps it while it is in use.
"""

from __future__ import annotations

import io
import os
import secrets
from collections import OrderedDict

import numpy as np

from .. import storage
from ._session import is_connect, setting

#: The folder under a run (or index) folder that holds the arrays of the stage being run.
FOLDER = "_shared"
#: Arrays a worker keeps: a stage reads at most two at a time, and a worker serves one stage.
_KEPT = 4
_loaded: OrderedDict[str, np.ndarray] = OrderedDict()


#: Under Spark Connect, arrays up to this size travel in the plan; the Spark setting
#: spark.webwinnow.connectPlanBytes changes it (a server with a lower message cap).
PLAN_BYTES = 16 << 20
PLAN_BYTES_SETTING = "spark.webwinnow.connectPlanBytes"


class Held:
    """A shared array carried by the closure that uses it: `.value`, like a broadcast's."""

    def __init__(self, array: np.ndarray) -> None:
        self.value = array

    def unpersist(self) -> None:
        pass


class FileShared:
    """A shared array in a file: `.value`, like a broadcast's."""

    def __init__(self, path: str) -> None:
        self.path = path

    @property
    def value(self) -> np.ndarray:
        array = _loaded.get(self.path)
        if array is None:
            data = storage.read_bytes(self.path)
            if data is None:
                raise FileNotFoundError(f"{self.path}: the stage's shared array is gone (was the run folder cleaned?)")
            array = _loaded[self.path] = np.load(io.BytesIO(data), allow_pickle=False)
            while len(_loaded) > _KEPT:
                _loaded.popitem(last=False)
        return array

    def unpersist(self) -> None:
        own = storage.parent(self.path)
        storage.delete_tree(own)
        if storage.is_local(own):  # the folder of the arrays too, when this was its last
            try:
                os.rmdir(storage.parent(own))
            except OSError:
                pass


def share(spark, array: np.ndarray, folder: str):
    """`array` for the tasks of the stage writing into `folder`: a broadcast, or under Spark
    Connect a Held (up to PLAN_BYTES) or a FileShared. Call `.unpersist()` on it when the stage
    is done."""
    if not is_connect(spark):
        return spark.sparkContext.broadcast(array)
    if array.nbytes <= plan_bytes(spark):
        return Held(array)
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    # a folder per array: a name no other run's or retried stage's array has, removed whole
    path = storage.child(folder, FOLDER, secrets.token_hex(8), "array.npy")
    storage.write_bytes(path, buffer.getvalue())
    return FileShared(path)


def plan_bytes(spark) -> int:
    """How large an array may travel in a Connect plan."""
    from ..errors import UserError

    value = setting(spark, PLAN_BYTES_SETTING, str(PLAN_BYTES))
    try:
        return int(value)
    except ValueError:
        raise UserError(f"{PLAN_BYTES_SETTING}={value}: give a number of bytes (e.g. {PLAN_BYTES})") from None
