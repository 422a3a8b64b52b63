"""`geocatalog results`: the service's results store (`RESULTS_STORE`), for admins: the
files nothing owns found and removed (`gc`)."""

from __future__ import annotations

from typing import Annotated

import typer

from stac_ext.settings import Settings

results_app = typer.Typer(help="The service's results store (RESULTS_STORE).",
                          no_args_is_help=True)

#: Which of the items (collections, ids: two arrays) exist.
EXISTING_ITEMS = "SELECT collection, id FROM geocatalog.existing_items(%s, %s)"


@results_app.command("gc")
def gc(dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="List what would be removed; remove nothing.")] = False) -> None:
    """Remove the files of the results store that nothing owns: those no job record names
    (a worker killed while it stored them), and those of dismissed jobs that no published
    item uses any more. Files of queued and running jobs are never touched."""
    import psycopg

    from process_api import ResultsStore, orphans, records_of, service_filesystem

    settings = Settings()
    fs, root = service_filesystem(settings.results_store_url, settings.results_store_options)
    store = ResultsStore(fs, root, str)
    keys = store.keys()
    with psycopg.connect(settings.dsn, autocommit=True) as conn:
        def existing(items: list[tuple[str, str]]) -> set[tuple[str, str]]:
            rows = conn.execute(EXISTING_ITEMS, ([c for c, _ in items], [i for _, i in items]))
            return {(collection, item) for collection, item in rows}

        removed = orphans(keys, records_of(conn, keys), existing)
    if not dry_run:
        store.remove(removed)
    for key in removed:
        typer.echo(f"{'would remove' if dry_run else 'removed'} {key}")
    typer.echo(f"{len(removed)} of {len(keys)} files {'to remove' if dry_run else 'removed'}"
               f", {len(keys) - len(removed)} kept.")
