"""The Spark session's settings webwinnow chooses itself."""

from __future__ import annotations


def test_a_short_local_run_compiles_with_c1_unless_the_jit_was_chosen():
    from webwinnow.stages._session import short_jvm_options

    assert short_jvm_options("") == "-XX:TieredStopAtLevel=1"
    assert short_jvm_options("-Dlog4j2.level=warn") == "-Dlog4j2.level=warn -XX:TieredStopAtLevel=1"
    assert short_jvm_options("-XX:TieredStopAtLevel=4") == "-XX:TieredStopAtLevel=4"
    assert short_jvm_options("-XX:-TieredCompilation") == "-XX:-TieredCompilation"
