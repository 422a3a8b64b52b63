"""Tests of the database layer (`stac_ext.database`): roles, migrations, scale."""
