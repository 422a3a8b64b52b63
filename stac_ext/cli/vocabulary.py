"""`geocatalog vocabulary`: the conventions' vocabularies, for admins: listed, a
convention's table loaded, and a newer table loaded in its place (its retired names become
aliases; no collection or item changes)."""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Annotated

import typer

from stac_ext.governance.loading import Loaded, Mode, load
from stac_ext.governance.queries import CONVENTIONS
from stac_ext.governance.tables import TableError, read_table, shipped_cf_table

vocabulary_app = typer.Typer(help="The standard names collections are checked against.",
                             no_args_is_help=True)

ConventionOption = Annotated[str | None, typer.Option(
    metavar="NAME", help="the convention of a CF-style XML table [default: climate_forecast]")]


def _loaded(path: Path, convention: str | None, mode: Mode) -> Loaded:
    """The table loaded into the service's database; one line and exit 1 when it cannot."""
    import psycopg

    from stac_ext.cli.common import _fail, _settings, database_errors, ensure_database

    settings = _settings()
    ensure_database(settings)
    try:
        table = read_table(path, convention)
        with database_errors(settings.dsn), psycopg.connect(settings.dsn,
                                                            autocommit=True) as conn:
            return load(conn, table, getpass.getuser(), mode)
    except TableError as e:
        raise _fail(str(e)) from None


@vocabulary_app.command("list")
def list_vocabularies() -> None:
    """The conventions with a vocabulary: version, names, aliases, when loaded."""
    import psycopg

    from stac_ext.cli.common import _settings, database_errors, ensure_database

    settings = _settings()
    ensure_database(settings)
    with database_errors(settings.dsn), psycopg.connect(settings.dsn) as conn:
        for convention, title, version, loaded, names, aliases in conn.execute(CONVENTIONS):
            typer.echo(f"{convention}  {title}, version {version}: {names} names, "
                       f"{aliases} aliases (loaded {loaded:%Y-%m-%d %H:%M})")


@vocabulary_app.command("load")
def load_vocabulary(
    path: Annotated[Path, typer.Argument(metavar="FILE", help="a CF-style XML table, or "
                                         "a JSON table (docs: moderating)")],
    convention: ConventionOption = None,
) -> None:
    """Load the vocabulary of a convention that has none yet."""
    typer.echo(_loaded(path, convention, "load").summary())


@vocabulary_app.command("update")
def update_vocabulary(
    path: Annotated[Path | None, typer.Argument(
        metavar="[FILE]", help="the newer table [default: the CF table compliance-checker "
        "ships]")] = None,
    convention: ConventionOption = None,
) -> None:
    """Load a newer version of a convention's vocabulary. Names it retires become aliases
    of their successors (or stay known, marked retired); collections and items stay."""
    if path is None:
        try:
            path = shipped_cf_table()
        except TableError as e:
            from stac_ext.cli.common import _fail

            raise _fail(str(e)) from None
    typer.echo(_loaded(path, convention, "update").summary())
