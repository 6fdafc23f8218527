"""cffi (API mode, out of line) builder of sparkjournal._sjnative, the C core.

setup.py names it in cffi_modules; `python native/build_native.py` builds the
module in place (sparkjournal/_sjnative*.so) for a source checkout. The binary
is portable x86-64: only the CRC fast path is compiled for SSE4.2, and it is
chosen at load time by cpuid.
"""
from __future__ import annotations

import os
import re

from cffi import FFI

NATIVE_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(NATIVE_DIR)
SOURCES = ["sj_crc32c.c", "sj_codec.c", "sj_aio.c", "sj_aio_alone.c", "sj_rawloop.c",
           "sj_group_floor.c", "sj_gate.c", "sj_compact.c"]


def _cdef_text() -> str:
    with open(os.path.join(NATIVE_DIR, "sj_native.h"), encoding="utf-8") as handle:
        header = handle.read()
    match = re.search(r"/\* SJ-CDEF-BEGIN \*/(.*)/\* SJ-CDEF-END \*/", header, re.S)
    if not match:
        raise RuntimeError("native/sj_native.h lacks the SJ-CDEF-BEGIN/END block")
    return match.group(1)


def make_ffibuilder(native_dir: str) -> FFI:
    builder = FFI()
    builder.cdef(_cdef_text())
    builder.set_source(
        "sparkjournal._sjnative",
        '#include "sj_native.h"\n',
        sources=[os.path.join(native_dir, name) for name in SOURCES],
        include_dirs=[native_dir],
        extra_compile_args=["-O2", "-std=gnu11", "-fvisibility=hidden", "-Wall"],
        libraries=["pthread"],
    )
    return builder


# setuptools wants source paths relative to the directory of setup.py
ffibuilder = make_ffibuilder("native")


def build_in_place() -> str:
    """Compiles under build/cffi and copies the module into sparkjournal/."""
    import shutil

    os.chdir(REPO_DIR)
    built = make_ffibuilder(NATIVE_DIR).compile(tmpdir=os.path.join("build", "cffi"), verbose=False)
    target = os.path.join(REPO_DIR, "sparkjournal", os.path.basename(built))
    shutil.copy2(built, target + ".tmp")
    os.replace(target + ".tmp", target)   # a running process keeps its old mapping
    package_dir = os.path.dirname(target)
    for name in os.listdir(package_dir):   # an older build under another suffix would shadow or confuse
        if name.startswith("_sjnative") and name.endswith(".so") and name != os.path.basename(target):
            os.remove(os.path.join(package_dir, name))
    return target


if __name__ == "__main__":
    print(build_in_place())
