"""The Spark session's settings webwinnow chooses itself."""

from __future__ import annotations


def test_a_short_local_run_compiles_with_c1_and_collects_serially_unless_chosen():
    from webwinnow.stages._session import short_jvm_options

    both = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
    assert short_jvm_options("") == both
    assert short_jvm_options("-Dlog4j2.level=warn") == f"-Dlog4j2.level=warn {both}"
    # the user's JIT and collector are kept as they are
    assert short_jvm_options("-XX:TieredStopAtLevel=4") == "-XX:TieredStopAtLevel=4 -XX:+UseSerialGC"
    assert short_jvm_options("-XX:-TieredCompilation") == "-XX:-TieredCompilation -XX:+UseSerialGC"
    assert short_jvm_options("-XX:+UseG1GC") == "-XX:+UseG1GC -XX:TieredStopAtLevel=1"
    assert short_jvm_options("-XX:+UseParallelGC -Xss4m") == "-XX:+UseParallelGC -Xss4m -XX:TieredStopAtLevel=1"
    assert short_jvm_options("-XX:+UseZGC -XX:-TieredCompilation") == "-XX:+UseZGC -XX:-TieredCompilation"
    # a flag that merely mentions GC is not a collector
    assert short_jvm_options("-XX:+PrintGCDetails") == f"-XX:+PrintGCDetails {both}"
