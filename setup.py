"""Builds the optional C core (sparkjournal._sjnative) and, apart from it, the
benchmarks' C floors (sparkjournal.tools.bench._sjfloors) through cffi
(native/build_native.py), and puts the JVM connector's sources (jvm/src/main) in the package as
sparkjournal/spark/jvm_sources, so an installed copy compiles the connector
at first use as a checkout does (sparkjournal/spark/jvm_build.py).

Everything else is in pyproject.toml. Without a working C compiler the install
still succeeds, with a warning: sparkjournal then runs on its pure-Python codec
and the NIO backend (journalType=ASYNCIO is refused with a clear error), and
the disk benchmarks refuse to run for want of their floors.
"""
import os
import shutil
import warnings

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

JVM_SOURCES = os.path.join("jvm", "src", "main")
PACKAGED_JVM_SOURCES = os.path.join("sparkjournal", "spark", "jvm_sources")


class BuildPyWithJvmSources(build_py):
    def run(self):
        super().run()
        if os.path.isdir(JVM_SOURCES) and not self.editable_mode:
            target = os.path.join(self.build_lib, PACKAGED_JVM_SOURCES)
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(JVM_SOURCES, target)


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
      cmdclass={"build_ext": OptionalBuildExt, "build_py": BuildPyWithJvmSources})
