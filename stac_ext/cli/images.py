"""`geocatalog images`: the container images of this worker's host, for admins: listed,
and pulled ahead of jobs from a registry the operator allows (`CONTAINER_REGISTRIES`)."""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING, Annotated

import typer

from stac_ext.settings import Settings

if TYPE_CHECKING:
    from process_api import Podman

images_app = typer.Typer(help="Container images of deployed processes (podman, this host).",
                         no_args_is_help=True)


def _podman(settings: Settings) -> Podman:
    from process_api import Podman

    podman = Podman.available(settings.container_registries)
    if podman is None:
        typer.secho("podman is not installed on this host: `apt-get install podman`",
                    fg="red", err=True)
        raise typer.Exit(1)
    return podman


@images_app.command("list")
def list_images(as_json: bool = typer.Option(False, "--json", help="As JSON.")) -> None:
    """The images on this host: id, names, size."""
    found = _podman(Settings()).images()
    if as_json:
        typer.echo(json.dumps(found, indent=2))
        return
    for image in found:
        names = ", ".join(map(str, image["names"])) or "<none>"
        typer.echo(f"{image['id']}  {names}  {int(image['size'] or 0) / 2**20:.0f} MiB")


@images_app.command("pull")
def pull(image: Annotated[str, typer.Argument(metavar="IMAGE")]) -> None:
    """Pull IMAGE from an allowed registry, ahead of the jobs that run it."""
    from process_api import ImageRefused

    podman = _podman(Settings())
    try:
        typer.echo(podman.pull(image))
    except ImageRefused as e:
        typer.secho(str(e), fg="red", err=True)
        raise typer.Exit(1) from None
    except subprocess.CalledProcessError as e:
        typer.secho(f"podman could not pull {image}: {(e.stderr or '').strip()[-500:]}",
                    fg="red", err=True)
        raise typer.Exit(1) from None
