"""What says that Spark's JVM died under a command (exit 5), and what does not."""

from __future__ import annotations

from webwinnow.errors import spark_died


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
