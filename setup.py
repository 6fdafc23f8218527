"""Builds the optional C core (sparkjournal._sjnative) through cffi.

Everything else is in pyproject.toml. Without a working C compiler the install
still succeeds, with a warning: sparkjournal then runs on its pure-Python codec
and the NIO backend (journalType=ASYNCIO is refused with a clear error).
"""
import warnings

from setuptools import setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    def run(self):
        try:
            super().run()
        except Exception as error:  # no compiler, missing headers: degrade, don't fail
            self._warn(error)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as error:
            self._warn(error)

    @staticmethod
    def _warn(error):
        warnings.warn(f"sparkjournal: the C core was not built ({error}); installing the "
                      f"pure-Python codec and NIO backend only (slower; no ASYNCIO)")


setup(cffi_modules=["native/build_native.py:ffibuilder"],
      cmdclass={"build_ext": OptionalBuildExt})
