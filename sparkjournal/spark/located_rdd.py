"""An RDD whose partitions prefer given executors: what the located read
(locality.py) and the survey of the executors (discovery.py) place their
tasks with."""
from __future__ import annotations


def located_rdd(sc, placed: list[tuple[str, list[str]]]):
    """A PySpark RDD of the strings in ``placed``, one partition each, with the
    given location preferences (SparkContext.makeRDD with preferences)."""
    from pyspark.rdd import RDD
    from pyspark.serializers import UTF8Deserializer
    jvm = sc._jvm
    to_seq = jvm.org.apache.spark.api.python.PythonUtils.toSeq
    pairs = to_seq([jvm.scala.Tuple2(value, to_seq(list(locations))) for value, locations in placed])
    string_tag = jvm.scala.reflect.ClassTag.apply(jvm.java.lang.String._java_lang_class)
    return RDD(sc._jsc.sc().makeRDD(pairs, string_tag).toJavaRDD(), sc, UTF8Deserializer())
