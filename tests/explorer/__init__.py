"""Tests of the data explorer and quicklooks."""
