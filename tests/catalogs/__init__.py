"""Tests of the catalogs tree (`catalogs_ext`)."""
