"""A job's provenance as a person reads it: the API's PROV-JSON (`/processes/jobs/{id}/prov`)
read back into who ran which process, on which files (each with the item and asset it came
from, its size and checksum), what it wrote, and the items published from that."""

from __future__ import annotations

from typing import Any

#: multihash's prefix of a SHA-256 digest (code 0x12, 32 bytes)
SHA256_MULTIHASH = "1220"


def _plain(value: Any) -> Any:
    """PROV-JSON's typed literal (`{"$": value, "type": ...}`) as its value."""
    return value.get("$") if isinstance(value, dict) and "$" in value else value


def _records(document: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    found = document.get(kind)
    if not isinstance(found, dict):
        return {}
    return {str(name): {k: _plain(v) for k, v in record.items()}
            for name, record in found.items() if isinstance(record, dict)}


def checksum_words(checksum: object) -> str:
    """A stored checksum as read: `sha256:<hex>` for a SHA-256 multihash, else as it is."""
    text = str(checksum or "")
    if text.startswith(SHA256_MULTIHASH) and len(text) == len(SHA256_MULTIHASH) + 64:
        return "sha256:" + text[len(SHA256_MULTIHASH):]
    return text


def _file(record: dict[str, Any], role: str) -> dict[str, Any]:
    return {"href": str(record.get("prov:location") or ""),
            "name": record.get(f"geocatalog:{role}"),
            "item": record.get("geocatalog:item"), "asset": record.get("geocatalog:asset"),
            "type": record.get("geocatalog:mediaType"),
            "size": int(record.get("geocatalog:size") or 0),
            "checksum": checksum_words(record.get("geocatalog:checksum"))}


def _numbered(name: str) -> int:
    tail = name.rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def read_document(document: Any) -> dict[str, Any]:
    """What the page shows of a PROV-JSON document (anything else: nothing)."""
    if not isinstance(document, dict):
        document = {}
    activity = next(iter(_records(document, "activity").values()), {})
    agents = _records(document, "agent")
    people = [name.split(":", 1)[-1] for name, a in agents.items()
              if a.get("prov:type") == "prov:Person"]
    software = [(name.split(":", 1)[-1], a.get("geocatalog:revision"))
                for name, a in agents.items() if a.get("prov:type") == "prov:SoftwareAgent"]
    entities = sorted(_records(document, "entity").items(), key=lambda e: _numbered(e[0]))
    return {
        "owner": people[0] if people else "",
        "process": software[0][0] if software else "",
        "revision": software[0][1] if software else None,
        "status": activity.get("geocatalog:status"),
        "project": activity.get("geocatalog:project"),
        "started": activity.get("prov:startTime"), "ended": activity.get("prov:endTime"),
        "inputs": [_file(e, "input") for n, e in entities if n.startswith("job:inputs/")],
        "outputs": [_file(e, "output") for n, e in entities if n.startswith("job:outputs/")],
        "published": [str(e.get("prov:location") or "") for n, e in entities
                      if n.startswith("job:items/")],
    }
