"""The Spark tests share one Spark session.

`webwinnow.stages._session.build_session` uses the session already active in the process (a
notebook's) and leaves it running, so every `main([...])` here runs on one JVM context and one
set of Python workers, with their kernels loaded once, instead of paying for a new context per
command. The session is made the way the command makes its own (the project's config and its
Spark properties). A test that needs a session of its own (another master, Spark properties of
its own, spark-submit) is marked `own_spark`: the shared session is stopped before it and made
again, when needed, after it.
"""

from __future__ import annotations

import pytest


def _active():
    from webwinnow.stages._session import active_session

    return active_session()


def _stop_active() -> None:
    active = _active()
    if active is not None:
        active.stop()


@pytest.fixture(autouse=True)
def spark_session(request):
    if request.node.get_closest_marker("own_spark"):
        _stop_active()
        yield None
        _stop_active()  # whatever the test left
        return
    spark = _active()
    if spark is None:
        from webwinnow.config import default_config_files, load_config
        from webwinnow.stages._session import build_session

        spark, _ = build_session(load_config(default_config_files()).spark)
    yield spark


@pytest.fixture(scope="session", autouse=True)
def _stop_at_the_end():
    yield
    _stop_active()
