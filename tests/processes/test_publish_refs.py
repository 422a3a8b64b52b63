"""publish-dataset reads a dataset from the fetched bytes only: a NetCDF-4 file whose
variable keeps its data in a local file (HDF5 external storage; six such files rebuilt the
embedded cluster's superuser password), links into another file, or maps other files'
datasets (virtual datasets) is refused, naming the reference; nothing of what it names is
read."""

from __future__ import annotations

import io
from pathlib import Path

import h5py
import httpx
import numpy as np
import pytest

from stac_ext.publish.demo_files import netcdf_bytes
from stac_ext.publish.outside_refs import OutsideReference, check_self_contained
from tests.support.jobs import execute, wait_for
from tests.support.s3 import KEY_ID, SECRET, s3_client
from tests.support.stac import unique

SECRET_BYTES = b"pg-superuser-password-0123456789"


def crafted(tmp_path: Path, how: str) -> bytes:
    """A NetCDF-4 (HDF5) file whose `sst` variable has a CF standard_name and reads
    `secret` (a file of this machine) the way `how` says."""
    secret = tmp_path / "pg.password"
    secret.write_bytes(SECRET_BYTES)
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f.create_dataset("x", data=np.frombuffer(SECRET_BYTES, dtype="u1"))
    path = tmp_path / f"{how}.nc"
    with h5py.File(path, "w") as f:
        f.create_dataset("lat", data=np.array([50.0, 51.0]))
        f.create_dataset("lon", data=np.array([1.0, 2.0]))
        if how == "external":
            data = f.create_dataset("sst", shape=(len(SECRET_BYTES),), dtype="u1",
                                    external=[(str(secret), 0, len(SECRET_BYTES))])
        elif how == "virtual":
            layout = h5py.VirtualLayout(shape=(len(SECRET_BYTES),), dtype="u1")
            layout[:] = h5py.VirtualSource(str(other), "x", shape=(len(SECRET_BYTES),))
            data = f.create_virtual_dataset("sst", layout)
        else:
            f["sst"] = h5py.ExternalLink(str(other), "/x")
            data = None
        if data is not None:
            data.attrs["standard_name"] = "sea_surface_temperature"
    return path.read_bytes()


@pytest.mark.parametrize(("how", "why"), [
    ("external", "the data of sst is stored in other files"),
    ("virtual", "sst maps datasets of other files"),
    ("link", "sst is a link into another file"),
])
def test_files_referring_outside_themselves_are_refused(tmp_path: Path, how: str,
                                                        why: str) -> None:
    with pytest.raises(OutsideReference) as refused:
        check_self_contained(io.BytesIO(crafted(tmp_path, how)))
    assert str(refused.value) == (f"it refers to data outside itself ({why}): only "
                                  "self-contained files are published")


def test_self_contained_files_pass() -> None:
    assert check_self_contained(io.BytesIO(netcdf_bytes())) == "hdf5"
    assert check_self_contained(io.BytesIO(b"CDF\x01" + b"\0" * 60)) == "classic"
    with pytest.raises(OutsideReference, match="neither NetCDF-4"):
        check_self_contained(io.BytesIO(b"<html>not a dataset</html>"))


async def test_publishing_a_crafted_file_reads_nothing_of_this_machine(
        alice_processes: httpx.AsyncClient, s3_endpoint: str, tmp_path: Path) -> None:
    bucket = unique("crafted-")
    s3 = s3_client(s3_endpoint)
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="drop/sst.nc", Body=crafted(tmp_path, "external"))
    r = await execute(alice_processes, "publish-dataset", {
        "source": f"s3://{bucket}/drop", "s3": {
            "accessKeyId": KEY_ID, "secretAccessKey": SECRET, "endpoint": s3_endpoint,
            "defaultRegion": "us-east-1"}})
    job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed",
                         seconds=120)
    assert job["status"] == "successful", job
    results = (await alice_processes.get(f"{r.headers['Location']}/results")).json()
    assert results["created"] == [] and results["updated"] == []
    assert results["warnings"] == [{
        "file": f"s3://{bucket}/drop/sst.nc",
        "message": "could not read sst.nc: it refers to data outside itself (the data of sst "
                   "is stored in other files): only self-contained files are published"}]
    assert SECRET_BYTES.decode() not in r.text + str(results)
