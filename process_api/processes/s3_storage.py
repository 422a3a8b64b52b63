"""s3fs whose client connects only to allowed addresses: every connection, the endpoint's
and any a redirect or a region redirect leads to (`outbound.allowed_socket`).

A class rather than an option: zarr re-creates the filesystem from its JSON form (its
constructor's arguments), which a socket factory cannot be part of. Imported only where a
job opens S3 storage (s3fs is heavy).
"""

from __future__ import annotations

from typing import Any

import s3fs

from process_api.processes.outbound import allowed_socket


class AllowedS3FileSystem(s3fs.S3FileSystem):
    def __init__(self, *args: Any, config_kwargs: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        config = dict(config_kwargs or {})
        config["connector_args"] = {**config.get("connector_args", {}),
                                    "socket_factory": allowed_socket}
        super().__init__(*args, config_kwargs=config, **kwargs)
