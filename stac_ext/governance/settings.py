"""Governance's settings: how strictly collections are held to the conventions'
vocabularies."""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict


class GovernanceSettings(BaseSettings):
    """Governance"""

    model_config = SettingsConfigDict(extra="ignore", use_attribute_docstrings=True)

    require_vocabulary: bool = True
    """A collection's convention must have a vocabulary here (`climate_forecast`: CF's
    table, loaded by `migrate`; others: `geocatalog vocabulary load`), else its creation is
    a 400. `false`: collections of a convention without one are checked for their id's
    shape only (those of a convention with one are always checked)."""
