"""Builds what pyproject.toml cannot declare:

* the optional C core (sparkjournal._sjnative) and, apart from it, the
  benchmarks' C floors (sparkjournal.tools.bench._sjfloors), through cffi
  (native/build_native.py), with the limited API: one abi3 wheel for every
  CPython from 3.11;
* for a wheel (``pip install .``, ``pip wheel .``), the JVM connector's jar,
  compiled with the JDK's javac against the jars of the pyspark that the build
  requires, into ``sparkjournal/jars/sparkjournal-<version>-spark<x.y>.jar``
  (jvm_build.build_jar), and the spark-submit jobs (``jobs/*.py``) into
  ``sparkjournal/jobs/`` (``sparkjournal job NAME`` prints their paths).
  An editable install builds neither: a checkout's jar is built from
  ``jvm/src/main`` at first use, again whenever the sources change, and its
  jobs are run from ``jobs/``.

Without a C compiler the install still succeeds, with a warning: sparkjournal
then runs on its pure-Python codec and the NIO backend (journalType=ASYNCIO is
refused with a clear error), and the disk benchmarks refuse to run for want of
their floors. Without a JDK the wheel is built without the jar, with a warning
saying so: sessions then read and write through the Python data source.
"""
import glob
import os
import shutil
import sys
import warnings

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildPyWithJarAndJobs(build_py):
    def run(self):
        super().run()
        if self.editable_mode:
            return
        jobs = os.path.join(self.build_lib, "sparkjournal", "jobs")
        shutil.rmtree(jobs, ignore_errors=True)
        os.makedirs(jobs)
        for job in glob.glob(os.path.join(HERE, "jobs", "*.py")):
            shutil.copy(job, jobs)
        self._build_jar(os.path.abspath(os.path.join(self.build_lib, "sparkjournal", "jars")))

    def _build_jar(self, folder: str) -> None:
        """No JDK (or no Java sources): a wheel without the jar, with a warning. A
        compile error fails the build."""
        sys.path.insert(0, HERE)
        from sparkjournal.spark import jvm_build
        shutil.rmtree(folder, ignore_errors=True)
        try:
            jvm_build.javac_path()
            jvm_build.java_sources()
        except jvm_build.JvmUnavailableError as error:
            warnings.warn(f"sparkjournal: the JVM connector's jar was not built ({error}); this "
                          f"package reads and writes through the Python data source only. Install "
                          f"a JDK 17+ (javac on PATH or JAVA_HOME) and build it again")
            return
        jar = jvm_build.build_jar(folder, self.distribution.get_version())
        print(f"sparkjournal: JVM connector built into {jar}")


class OptionalBuildExt(build_ext):
    def run(self):
        try:
            super().run()
        except Exception as error:  # no compiler, missing headers: degrade, don't fail
            self._warn("", error)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as error:
            self._warn(ext.name, error)

    @staticmethod
    def _warn(name, error):
        if name.endswith("_sjfloors"):
            warnings.warn(f"sparkjournal: the benchmarks' C floors were not built ({error}); "
                          f"`sparkjournal bench journal` will refuse to run")
        else:
            warnings.warn(f"sparkjournal: the C core was not built ({error}); installing the "
                          f"pure-Python codec and NIO backend only (slower; no ASYNCIO)")


setup(cffi_modules=["native/build_native.py:ffibuilder", "native/build_native.py:floors_ffibuilder"],
      cmdclass={"build_ext": OptionalBuildExt, "build_py": BuildPyWithJarAndJobs},
      options={"bdist_wheel": {"py_limited_api": "cp311"}})
