"""What a link in a catalog body points at: a collection, an item, or a catalog of ours.

Hrefs may be absolute URLs of this API or relative ones (resolved against the API root,
`{base}/data/`); anything else is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote, urljoin, urlsplit

from fastapi import HTTPException

from catalogs_ext.models import LinkIn

#: Links the server writes itself: ignored in a body.
GENERATED_RELS = {"self", "root", "parent"}


@dataclass(frozen=True)
class Target:
    kind: Literal["collection", "item", "catalog"]
    collection: str | None = None
    item: str | None = None
    catalog_path: str | None = None
    title: str | None = None


def _bad(link: LinkIn, why: str) -> HTTPException:
    return HTTPException(status_code=400, detail=f"Link {link.rel} -> {link.href}: {why}")


def resolve(link: LinkIn, api_root: str) -> Target:
    """The target of a `child` or `item` link; 400 when it is not one of ours."""
    url = urlsplit(urljoin(api_root, link.href))
    root = urlsplit(api_root)
    if (url.scheme, url.netloc) != (root.scheme, root.netloc) or not url.path.startswith(
        root.path
    ):
        raise _bad(link, f"not a resource of this API ({api_root})")
    parts = [unquote(p) for p in url.path[len(root.path):].strip("/").split("/")]
    if link.rel == "item" and len(parts) == 4 and parts[0] == "collections" \
            and parts[2] == "items":
        return Target("item", collection=parts[1], item=parts[3], title=link.title)
    if link.rel == "child" and len(parts) == 2 and parts[0] == "collections":
        return Target("collection", collection=parts[1], title=link.title)
    if link.rel == "child" and len(parts) >= 2 and parts[0] == "catalogs":
        return Target("catalog", catalog_path="/".join(parts[1:]), title=link.title)
    expected = ("collections/{collectionId}/items/{itemId}" if link.rel == "item"
                else "collections/{collectionId} or catalogs/{path}")
    raise _bad(link, f"a `{link.rel}` link must point at {expected} of this API")


def split_links(links: list[LinkIn], api_root: str) -> tuple[list[Target], list[dict]]:
    """(tree targets, other links to keep as they are) of a body's links."""
    targets, others = [], []
    for link in links:
        if link.rel in ("child", "item"):
            targets.append(resolve(link, api_root))
        elif link.rel not in GENERATED_RELS:
            others.append(link.model_dump(exclude_none=True))
    return targets, others
