"""Tests of the data API (`stac_ext.data_api`): items, collections, search, visibility."""
