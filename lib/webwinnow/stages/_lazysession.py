"""A classic session whose Spark SQL side is made when a stage first needs it.

A local run over the driver's paths runs RDD jobs only (stages._tasks): nothing in it plans a
query. Making a SparkSession still costs the JVM 2.3-4.5 CPU-seconds (the SQL engine's session
state, its extensions, listeners and UI tab: classes loaded and compiled), against 3.2-5.7 for
the SparkContext itself (docs/performance.md). `LazySession` holds the SparkContext and makes
the SparkSession the first time anything but the context, the runtime settings or stop() is asked
of it, so a run that needs Spark SQL (a DataFrame, a cluster's sorted shuffles, a date Spark must
parse) pays for it then, and one that does not never does.

Runtime settings set before the session exists are kept and set on it when it is made; read
before, they answer from those kept, then from the SparkConf the context was started with (where
the session's own settings would come from), then the caller's default. Only a key with none of
these makes the session, to ask Spark for its own default.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

_UNSET = object()

#: Each SparkContext's settings, read once (see context_settings).
_CONTEXTS: weakref.WeakKeyDictionary[Any, dict[str, str]] = weakref.WeakKeyDictionary()


def context_settings(sc) -> dict[str, str]:
    """The settings a SparkContext started with, read once per context: they do not change once
    it runs, and SparkContext.getConf() copies the JVM's SparkConf into a new one a setting at
    a time (about seventy py4j calls, 10 ms of CPU between the driver and the JVM), where a run
    on the docs corpus asked for settings some sixty times (docs/performance.md)."""
    held = _CONTEXTS.get(sc)
    if held is None:
        held = _CONTEXTS[sc] = dict(sc.getConf().getAll())
    return held


def release_accumulators(sc) -> threading.Thread | None:
    """Tell the context's accumulator server to end, and close it in a thread of its own: the
    thread that closes it, if it is not done by then. pyspark's SparkContext.stop() waits for the
    server, whose handler polls the JVM's connection once a second: the driver sat idle for up
    to a second (0.85 s, 0.8 s measured on the docs corpus) at the end of every command. No
    accumulator is read after stop(), and the handler still sees the flag within its second."""
    server = getattr(sc, "_accumulatorServer", None)
    if server is None:
        return None
    server.server_shutdown = True
    sc._accumulatorServer = None  # stop() skips its own, waiting, shutdown
    closing = threading.Thread(target=server.shutdown, name="webwinnow-accumulators", daemon=True)
    closing.start()
    return closing


class LazyConf:
    """spark.conf of a LazySession: get, set and unset without making the session."""

    def __init__(self, owner: LazySession) -> None:
        self._owner = owner

    def set(self, key: str, value: Any) -> None:
        made = self._owner._made
        if made is not None:
            made.conf.set(key, value)
        else:
            self._owner._pending[key] = str(value)

    def unset(self, key: str) -> None:
        made = self._owner._made
        if made is not None:
            made.conf.unset(key)
        else:
            self._owner._pending.pop(key, None)
            self._owner._unset.add(key)

    def get(self, key: str, default: Any = _UNSET) -> Any:
        owner = self._owner
        if owner._made is None:
            if key in owner._pending:
                return owner._pending[key]
            conf = context_settings(owner.sparkContext)
            if key not in owner._unset and key in conf:
                return conf[key]
            if default is not _UNSET:
                return default
        made = owner.session()
        return made.conf.get(key) if default is _UNSET else made.conf.get(key, default)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._owner.session().conf, name)


class LazySession:
    """A SparkSession in all but when it is made: attributes other than sparkContext, conf,
    stop and the JVM's handles are the session's, made on first use."""

    def __init__(self, sc, prestarted=None) -> None:
        self._sc = sc
        #: the Python daemon the driver started beside the JVM (stages._prestart), or None
        self.prestarted = prestarted
        self._made = None
        self._pending: dict[str, str] = {}
        self._unset: set[str] = set()
        self.conf = LazyConf(self)

    @property
    def sparkContext(self):
        return self._sc

    @property
    def _jvm(self):
        return self._sc._jvm

    @property
    def _jsc(self):
        return self._sc._jsc

    @property
    def made(self) -> bool:
        """Whether the SparkSession exists (a stage needed Spark SQL)."""
        return self._made is not None

    @property
    def stopped(self) -> bool:
        return self._sc._jsc is None

    def session(self):
        """The SparkSession, made now if it was not: it takes the context's SparkConf as its
        settings, then those set on this object since."""
        if self._made is None:
            from pyspark.sql import SparkSession

            made = SparkSession(self._sc)
            for key in self._unset:
                made.conf.unset(key)
            for key, value in self._pending.items():
                made.conf.set(key, value)
            self._made = made
        return self._made

    def getTags(self) -> set[str]:
        """The session's job tags: none before it exists (pyspark's InheritableThread asks for
        them as it starts a thread)."""
        return self._made.getTags() if self._made is not None else set()

    def stop(self) -> None:
        """Stop Spark without waiting for pyspark's accumulator server (release_accumulators),
        then the daemon the driver started beside it (stages._prestart)."""
        release_accumulators(self._sc)
        try:
            if self._made is not None:
                self._made.stop()
            else:
                self._sc.stop()
        finally:
            if self.prestarted is not None:
                self.prestarted.stop()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.session(), name)

    def __repr__(self) -> str:
        return f"LazySession({'made' if self._made is not None else 'no SQL session yet'}, {self._sc!r})"
