"""What says that Spark's JVM died under a command (exit 5), and what does not."""

from __future__ import annotations

from webwinnow.errors import environment_failure, jvm_ending, spark_died


class Py4JError(Exception):
    pass


def test_a_class_of_spark_missing_means_the_gateway_is_gone():
    # Py4J's client answers a class lookup on a killed JVM with "does not exist"
    died = spark_died(Py4JError("SparkConf does not exist in the JVM"))
    assert died is not None and died.exit_code == 5
    assert spark_died(Py4JError("org.apache.spark.api.python.PythonSQLUtils does not exist in the JVM")) is not None


def test_other_errors_are_not_a_dead_jvm():
    assert spark_died(ValueError("a broken invariant")) is None
    assert spark_died(Py4JError("com.example.Missing does not exist in the JVM")) is None  # a user's jar, not Spark


class Py4JJavaError(Exception):
    pass


def test_a_java_heap_exhausted_names_the_setting_to_raise():
    died = spark_died(
        Py4JJavaError(
            "An error occurred while calling o34.collectToPython.\n: java.lang.OutOfMemoryError: Java heap space\n\tat x"
        )
    )
    assert died is not None and died.kind == "out_of_memory" and died.exit_code == 5
    assert "java.lang.OutOfMemoryError: Java heap space" in died.message
    assert "spark.driver.memory" in died.remedy and "spark.executor.memory" in died.remedy
    assert "\n" not in died.message + died.remedy


def test_a_jvm_that_exited_with_spark_s_out_of_memory_status_ran_out_of_memory():
    # a task's OutOfMemoryError makes the executor exit 52; in local mode that is the driver's JVM,
    # and Python sees only a refused connection
    refused = ConnectionRefusedError(111, "Connection refused")
    died = spark_died(refused, jvm_exit=52)
    assert died is not None and died.kind == "out_of_memory"
    assert spark_died(refused, jvm_exit=137).kind == "spark_died"  # killed: not memory
    assert spark_died(refused).kind == "spark_died"


class _JavaErrorOfADeadJvm(Exception):
    """A Py4JJavaError asks the JVM for its text when printed: on a dead JVM that call fails."""

    errmsg = "An error occurred while calling o34.collectToPython.\n"

    def __str__(self):
        raise ConnectionRefusedError(111, "Connection refused")


def test_an_error_whose_text_needs_the_dead_jvm_is_still_read():
    died = spark_died(_JavaErrorOfADeadJvm())
    assert died is not None and died.kind == "spark_died"
    assert spark_died(_JavaErrorOfADeadJvm(), jvm_exit=52).kind == "out_of_memory"
    assert environment_failure(_JavaErrorOfADeadJvm(), "out") is None


def test_a_context_shut_down_under_a_job_waits_for_the_jvm_s_status():
    # an executor's OutOfMemoryError makes the JVM exit 52; its shutdown hook stops the context
    # first, and the job fails with this while the JVM is still exiting
    cancelled = Py4JJavaError(
        "An error occurred while calling o66021.count.\n: org.apache.spark.SparkException: Job 60 cancelled because SparkContext was shut down"
    )
    assert jvm_ending(cancelled) and not jvm_ending(ValueError("a broken invariant"))
    assert spark_died(cancelled, jvm_exit=52).kind == "out_of_memory"
    died = spark_died(cancelled)
    assert died is not None and died.kind == "spark_died" and died.exit_code == 5


def test_a_broadcast_on_a_killed_jvm_or_any_error_once_the_jvm_ended_is_a_dead_jvm():
    # a broadcast looks up PythonRDD first: on a JVM killed as the stage began, Py4J says it is missing
    assert spark_died(Py4JError("PythonRDD does not exist in the JVM")) is not None
    assert spark_died(Py4JError("PythonRDDX does not exist in the JVM")) is None
    # the JVM this process started has exited: whatever the error, Spark died under the run
    died = spark_died(ValueError("an error from a half-answered call"), jvm_exit=-9)
    assert died is not None and died.exit_code == 5 and "exit status -9" in died.message
    assert spark_died(ValueError("an error from a half-answered call"), jvm_exit=None) is None
    assert spark_died(ValueError("a bug after Spark was stopped"), jvm_exit=0) is None
