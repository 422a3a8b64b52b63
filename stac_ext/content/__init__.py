"""Generated item content (SPEC "Rules on generated content" 1-5), computed on the way out.

Nothing here is stored: every item the API returns passes through `ItemDecorator`, so a
change of configuration shows on the next request, however the item entered the catalog.
"""

from stac_ext.content.decorate import ItemDecorator

__all__ = ["ItemDecorator"]
