"""Which block device holds a folder, and whether its write cache is volatile.

Linux reports the cache mode in /sys/block/<disk>/queue/write_cache: "write
back" means the device acknowledges writes from a volatile cache, and a sync
(fdatasync) is durable only because it also sends a FLUSH that the device
honours; "write through" means an acknowledged write is on stable media.
"""
from __future__ import annotations

import dataclasses
import os

WRITE_BACK_WARNING = (
    'The write cache is "write back" (volatile): an acknowledged sync is only as durable as '
    "the device's cache and its flush. fdatasync sends a FLUSH, so the data survives a power "
    "loss only if the device (or the hypervisor behind a virtual disk) really writes its cache "
    "to stable media on FLUSH, or the cache is battery/capacitor backed.")
WRITE_THROUGH_NOTE = ('The write cache is "write through": the device acknowledges a write only '
                      "once it is on stable media.")


@dataclasses.dataclass
class BlockDevice:
    name: str                 # e.g. "vda", "nvme0n1"; "" when there is none
    write_cache: str          # "write back", "write through" or "unknown"
    detail: str               # how it was found, or why it is unknown

    @property
    def volatile(self) -> bool | None:
        return {"write back": True, "write through": False}.get(self.write_cache)

    def explanation(self) -> str:
        if self.volatile:
            return WRITE_BACK_WARNING
        if self.volatile is False:
            return WRITE_THROUGH_NOTE
        return f"The device's write cache mode is unknown ({self.detail})."


def block_device_of(path: str) -> BlockDevice:
    """The disk holding ``path``: st_dev -> /sys/dev/block/MAJ:MIN, then the
    parent disk when that is a partition."""
    st = os.stat(path)
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    link = f"/sys/dev/block/{major}:{minor}"
    if not os.path.exists(link):
        return BlockDevice("", "unknown", f"{path} is on device {major}:{minor}, which is not a block "
                           f"device (tmpfs, overlay, btrfs subvolume or a network file system)")
    device = os.path.realpath(link)
    if os.path.exists(os.path.join(device, "partition")):
        device = os.path.dirname(device)
    name = os.path.basename(device)
    try:
        with open(os.path.join(device, "queue", "write_cache"), encoding="ascii") as handle:
            mode = handle.read().strip()
    except OSError as error:
        return BlockDevice(name, "unknown", f"{device}/queue/write_cache is unreadable ({error.strerror})")
    return BlockDevice(name, mode if mode in ("write back", "write through") else "unknown",
                       f"/sys/block/{name}/queue/write_cache says {mode!r}")
