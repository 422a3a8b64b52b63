"""What a NetCDF file would read beyond its own bytes, found before anything reads it.

HDF5 (NetCDF-4) can keep a dataset's bytes in other files (external storage), link to
objects of other files (external links) and map other files' datasets (virtual
datasets); the library resolves those paths on the machine that opens the file. A
published file is read from the fetched object only: such a file is refused, naming the
first reference. NetCDF classic files hold no references.
"""

from __future__ import annotations

from typing import Any, BinaryIO

#: Where HDF5 looks for its signature (a user block may precede it).
_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
_HDF5_OFFSETS = (0, 512, 1024, 2048, 4096)


class OutsideReference(ValueError):
    """The file refers to data outside itself; the message names what and where."""


def kind(stream: BinaryIO) -> str | None:
    """"hdf5" (NetCDF-4), "classic" (NetCDF 3), or None."""
    for offset in _HDF5_OFFSETS:
        stream.seek(offset)
        if stream.read(8) == _HDF5_SIGNATURE:
            stream.seek(0)
            return "hdf5"
    stream.seek(0)
    head = stream.read(4)
    stream.seek(0)
    return "classic" if head[:3] == b"CDF" and head[3:4] in (b"\x01", b"\x02", b"\x05") \
        else None


def outside_reference(h5file: Any) -> str | None:
    """The first reference of an open h5py file to another file, described, or None.
    External links are not followed; only hard links' objects are opened."""
    import h5py

    def visit(name: str) -> str | None:
        link = h5file.get(name, getlink=True)
        if isinstance(link, h5py.ExternalLink):
            return f"{name} is a link into another file"
        if not isinstance(link, h5py.HardLink):
            return None  # a soft link: its target is visited as the hard link it is
        node = h5file.get(name)
        if isinstance(node, h5py.Dataset):
            if node.external:
                return f"the data of {name} is stored in other files"
            if node.is_virtual:
                return f"{name} maps datasets of other files"
        return None

    return h5file.visit_links(visit)


def check_self_contained(stream: BinaryIO) -> str:
    """The file's kind, once it is known to refer to nothing outside itself; else
    OutsideReference."""
    import h5py

    found = kind(stream)
    if found == "hdf5":
        with h5py.File(stream, "r") as h5file:
            if why := outside_reference(h5file):
                raise OutsideReference(f"it refers to data outside itself ({why}): "
                                       "only self-contained files are published")
        stream.seek(0)
    elif found is None:
        raise OutsideReference("it is neither NetCDF-4 (HDF5) nor NetCDF classic")
    return found
