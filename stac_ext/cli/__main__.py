"""`python -m stac_ext.cli`: the command line."""

from stac_ext.cli import app

app()
