"""`geocatalog demo-s3`: a local S3-compatible server holding the demo files."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer

#: The demo data set kept in the repository (`geocatalog demo-data` loads it); its items'
#: assets name data in the bucket `demo`.
DEMO_DIR = Path(__file__).parent.parent / "demo"


def demo_s3(
    port: Annotated[int, typer.Option(metavar="PORT", help="port on 127.0.0.1")] = 9000,
    bucket: Annotated[str, typer.Option(metavar="NAME",
                                        help="bucket holding the demo campaign")] = "demo",
) -> None:
    """Serve demo files from a local S3 server (moto). NetCDF, Zarr, Parquet and CSV files
    under s3://BUCKET/campaign, monthly sea surface temperature under
    s3://BUCKET/sst-monthly, for trying publish-dataset and the loop from the catalog to a
    job, and the data of the demo items (in the bucket demo), which their Python examples
    open (any access key works)."""
    try:
        import boto3
        from moto.server import ThreadedMotoServer
    except ImportError:
        typer.secho("The demo S3 server needs moto: `make demo-s3` installs it.", fg="red",
                    err=True)
        raise typer.Exit(1) from None
    from stac_ext.publish.demo_files import campaign, catalog_data, sst_monthly

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="demo",
                      aws_secret_access_key="demo", region_name="us-east-1")
    s3.create_bucket(Bucket=bucket)
    with (DEMO_DIR / "items.ndjson").open() as lines:  # the data its items name
        for key, data in catalog_data((json.loads(line) for line in lines), bucket):
            s3.put_object(Bucket=bucket, Key=key, Body=data)
    for key, data in campaign():
        s3.put_object(Bucket=bucket, Key=f"campaign/{key}", Body=data)
    for key, data in sst_monthly():  # the last: once it is there, all of it is
        s3.put_object(Bucket=bucket, Key=f"sst-monthly/{key}", Body=data)
    typer.echo(f"demo S3 at {endpoint}: s3://{bucket}/campaign, s3://{bucket}/sst-monthly, "
               "and the demo items' data (Ctrl-C stops it)")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
