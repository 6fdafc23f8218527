"""cffi (API mode, out of line) builders of sparkjournal's two C extensions.

* ``ffibuilder``: sparkjournal._sjnative, the C core every writer and Spark
  worker loads (CRC-32C, the record codec, the kernel AIO writer, the commit
  gate, compaction's plan and copy; API in native/sj_native.h).
* ``floors_ffibuilder``: sparkjournal.tools.bench._sjfloors, the benchmarks'
  floors (the raw sync loop and the group-commit floor; native/floors/, API in
  sj_floors.h). Only the benchmarks load it; nothing of it is in the core.

setup.py names both in cffi_modules; `python native/build_native.py` builds
both in place (sparkjournal/_sjnative*.so, sparkjournal/tools/bench/_sjfloors*.so)
for a source checkout. The binaries are portable x86-64: only the CRC fast path
is compiled for SSE4.2, and it is chosen at load time by cpuid.
"""
from __future__ import annotations

import os
import re

from cffi import FFI

NATIVE_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(NATIVE_DIR)
CORE = ("sparkjournal._sjnative", "", "sj_native.h",
        ["sj_crc32c.c", "sj_codec.c", "sj_aio.c", "sj_aio_alone.c", "sj_gate.c", "sj_compact.c",
         "sj_bounds.c"])
FLOORS = ("sparkjournal.tools.bench._sjfloors", "floors", "sj_floors.h",
          ["sj_rawloop.c", "sj_group_floor.c"])


def _cdef_text(header_path: str) -> str:
    with open(header_path, encoding="utf-8") as handle:
        header = handle.read()
    match = re.search(r"/\* SJ-CDEF-BEGIN \*/(.*)/\* SJ-CDEF-END \*/", header, re.S)
    if not match:
        raise RuntimeError(f"{header_path} lacks the SJ-CDEF-BEGIN/END block")
    return match.group(1)


def make_ffibuilder(native_dir: str, extension=CORE) -> FFI:
    """The builder of ``extension`` (CORE or FLOORS) from the sources under
    ``native_dir`` (relative for setup.py, absolute for an in-place build)."""
    module, folder, header, sources = extension
    source_dir = os.path.join(native_dir, folder) if folder else native_dir
    builder = FFI()
    builder.cdef(_cdef_text(os.path.join(NATIVE_DIR, folder, header)))
    builder.set_source(
        module,
        f'#include "{header}"\n',
        sources=[os.path.join(source_dir, name) for name in sources],
        include_dirs=[source_dir],
        extra_compile_args=["-O2", "-std=gnu11", "-fvisibility=hidden", "-Wall"],
        libraries=["pthread"],
    )
    return builder


# setuptools wants source paths relative to the directory of setup.py
ffibuilder = make_ffibuilder("native", CORE)
floors_ffibuilder = make_ffibuilder("native", FLOORS)


def build_in_place(extension=CORE) -> str:
    """Compiles ``extension`` under build/cffi and copies the module into its
    package folder (sparkjournal/ or sparkjournal/tools/bench/)."""
    import shutil

    os.chdir(REPO_DIR)
    module = extension[0]
    built = make_ffibuilder(NATIVE_DIR, extension).compile(tmpdir=os.path.join("build", "cffi"),
                                                           verbose=False)
    package_dir = os.path.join(REPO_DIR, *module.split(".")[:-1])
    target = os.path.join(package_dir, os.path.basename(built))
    shutil.copy2(built, target + ".tmp")
    os.replace(target + ".tmp", target)   # a running process keeps its old mapping
    stem = module.rsplit(".", 1)[1]
    for name in os.listdir(package_dir):   # an older build under another suffix would shadow or confuse
        if name.startswith(stem) and name.endswith(".so") and name != os.path.basename(target):
            os.remove(os.path.join(package_dir, name))
    return target


if __name__ == "__main__":
    for built_extension in (CORE, FLOORS):
        print(build_in_place(built_extension))
