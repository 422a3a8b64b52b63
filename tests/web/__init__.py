"""Tests of the web face (`stac_ext.web`), in Chromium too."""
