"""Field prefix -> STAC extension schema URI: pystac's extension classes, plus a data file."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import warnings
from collections.abc import Mapping
from functools import cache
from pathlib import Path

import pystac.extensions
from pystac.extensions.base import ExtensionManagementMixin

_DATA_FILE = Path(__file__).with_name("extension_schemas.json")


@cache
def schema_uris() -> Mapping[str, str]:
    """Built once per process: prefix (without the colon) -> schema URI."""
    uris: dict[str, str] = {}
    for module_info in pkgutil.iter_modules(pystac.extensions.__path__):
        with warnings.catch_warnings():  # some (label) warn that they are deprecated
            warnings.simplefilter("ignore", DeprecationWarning)
            module = importlib.import_module(f"pystac.extensions.{module_info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            name = getattr(cls, "name", None)
            if (issubclass(cls, ExtensionManagementMixin) and cls.__module__ == module.__name__
                    and isinstance(name, str)):
                uris[name] = cls.get_schema_uri()
    extra = json.loads(_DATA_FILE.read_text())
    uris.update({k: v for k, v in extra.items() if not k.startswith("_")})
    return uris
