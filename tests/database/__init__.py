"""Tests of the database layer (`stac_ext.platform.database`): roles, migrations, scale."""
