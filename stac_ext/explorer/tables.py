"""Parquet and CSV, read with DuckDB through the asset's filesystem: the schema and the row
count, a page of rows, a column's chart and the rows' points. DuckDB reads only the columns
a statement names and, in a Parquet file, only the row groups it needs (the count from the
footer, a page from the row groups that hold it); every byte spends the request's budget."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from stac_ext.content.formats import Format
from stac_ext.explorer.bounds import BoundedFileSystem, Budget
from stac_ext.explorer.pictures import quicklook_chart, quicklook_points
from stac_ext.explorer.problems import ExploreError
from stac_ext.publish.inspect import coordinate_role

#: Rows a page holds at most.
PAGE_ROWS = 500
#: Rows a chart draws one by one at most; a longer table is drawn in as many bins, each
#: its mean, least and greatest.
CHART_POINTS = 2000
#: Points a map draws at most (a larger table: a repeatable sample of as many).
MAP_POINTS = 5000
#: Rows DuckDB reads to tell a CSV's columns and their types.
CSV_SAMPLE = 20_480
_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
            "UINTEGER", "UBIGINT", "FLOAT", "DOUBLE", "REAL")
_TEMPORAL = ("DATE", "TIMESTAMP")


def quoted(name: str) -> str:
    """A column's name as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _numeric(kind: str) -> bool:
    return kind.startswith(_NUMERIC) or kind.startswith("DECIMAL")


def _temporal(kind: str) -> bool:
    return kind.startswith(_TEMPORAL)


def _json(value: Any) -> Any:
    """A cell as JSON says it."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, bytes):
        return value[:64].hex()
    if isinstance(value, uuid.UUID | dt.timedelta):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return value


class Table:
    """One Parquet or CSV file, as DuckDB reads it (a connection of its own, in memory)."""

    def __init__(self, fs: Any, path: str, fmt: Format, budget: Budget) -> None:
        import duckdb

        self.format = fmt
        self.budget = budget
        self.files = BoundedFileSystem(fs, path, budget)
        self.connection = duckdb.connect(":memory:", config={"threads": 2})
        self.connection.register_filesystem(self.files)
        url = _literal(self.files.url)
        self.source = (f"read_parquet({url})" if fmt is Format.parquet else
                       f"read_csv({url}, sample_size={CSV_SAMPLE})")
        self._columns: list[dict[str, Any]] | None = None

    def close(self) -> None:
        self.connection.close()

    def query(self, sql: str, parameters: list[Any] | None = None) -> list[tuple[Any, ...]]:
        """Rows of a statement over the file; a refusal of the budget as itself (DuckDB
        wraps what the filesystem raised)."""
        import duckdb

        try:
            return self.connection.execute(sql, parameters or []).fetchall()
        except duckdb.Error as e:
            if self.budget.refused is not None:
                raise self.budget.refused from None
            raise ExploreError(422, f"The file could not be read as "
                               f"{self.format.value.capitalize()}: "
                               f"{str(e).splitlines()[0][:300]}") from None

    @property
    def columns(self) -> list[dict[str, Any]]:
        """Each column: its name, type, and role (`lat`, `lon`, `time`) if it has one."""
        if self._columns is None:
            found = []
            for name, kind, *_ in self.query(f"DESCRIBE SELECT * FROM {self.source}"):
                role = coordinate_role(str(name), {})
                if role == "time" and not _temporal(str(kind)):
                    role = None
                if role is None and _temporal(str(kind)):
                    role = "time"
                found.append({"name": str(name), "type": str(kind), "role": role,
                              "numeric": _numeric(str(kind))})
            self._columns = found
        return self._columns

    def column(self, name: str) -> dict[str, Any]:
        for each in self.columns:
            if each["name"] == name:
                return each
        raise ExploreError(400, f"There is no column {name!r}.")

    def _role(self, role: str) -> str | None:
        return next((c["name"] for c in self.columns if c["role"] == role), None)

    def row_groups(self) -> list[int]:
        """A Parquet file's row groups' sizes, from its footer."""
        groups = self.query(
            "SELECT row_group_id, any_value(row_group_num_rows) "
            f"FROM parquet_metadata({_literal(self.files.url)}) GROUP BY ALL ORDER BY 1")
        return [int(rows) for _, rows in groups]

    def count(self) -> int | None:
        """The rows: a Parquet file's from its footer; a CSV is read through, when the whole
        file is within the budget (else None)."""
        if self.format is Format.parquet:
            return sum(self.row_groups())
        size = self.files.info(self.files.url).get("size")
        if size is None or int(size) > self.budget.max_bytes - self.budget.read:
            return None
        return int(self.query(f"SELECT count(*) FROM {self.source}")[0][0])

    def describe(self) -> dict[str, Any]:
        """The schema, the row count and (Parquet) the row groups."""
        described: dict[str, Any] = {"kind": "table", "format": self.format.value,
                                     "columns": self.columns}
        if self.format is Format.parquet:
            described["row_groups"] = self.row_groups()
            described["rows"] = sum(described["row_groups"])
        else:
            described["rows"] = self.count()
        lon, lat = self._role("lon"), self._role("lat")
        described["roles"] = {"lon": lon, "lat": lat, "time": self._role("time")}
        return described

    def rows(self, offset: int, limit: int, names: list[str] | None) -> dict[str, Any]:
        """A page of rows, of the columns named (all by default): only those are read."""
        chosen = [self.column(n)["name"] for n in names] if names else \
            [c["name"] for c in self.columns]
        limit = max(1, min(limit, PAGE_ROWS))
        found = self.query(f"SELECT {', '.join(map(quoted, chosen))} FROM {self.source} "
                           "LIMIT ? OFFSET ?", [limit, max(0, offset)])
        return {"columns": chosen, "offset": max(0, offset), "limit": limit,
                "rows": [[_json(v) for v in row] for row in found],
                "read_bytes": self.budget.read}

    def _axis(self, name: str | None) -> tuple[str | None, str]:
        """The x of a chart: the column named, else the time column, else the row number
        (None)."""
        if name:
            column = self.column(name)
            if not (column["numeric"] or _temporal(column["type"])):
                raise ExploreError(400, f"Column {name!r} is neither a number nor a time.")
            return column["name"], column["type"]
        found = self._role("time")
        return (found, self.column(found)["type"]) if found else (None, "BIGINT")

    def _value(self, name: str | None) -> str:
        if name:
            column = self.column(name)
            if not column["numeric"]:
                raise ExploreError(400, f"Column {name!r} holds no numbers to chart.")
            return str(column["name"])
        roles = ("lat", "lon", "time")
        found = next((c["name"] for c in self.columns if c["numeric"] and c["role"]
                      not in roles), None) or next(
            (c["name"] for c in self.columns if c["numeric"]), None)
        if found is None:
            raise ExploreError(422, "The table has no column of numbers to chart.")
        return str(found)

    def chart(self, x_name: str | None, y_name: str | None) -> dict[str, Any]:
        """A numeric column against time (or another column, or the row number), ordered by
        x: every row up to `CHART_POINTS`, else as many bins of x (mean, least, greatest)."""
        x, x_type = self._axis(x_name)
        y = self._value(y_name)
        x_sql = quoted(x) if x else "row_number() OVER ()"
        rows_sql = (f"SELECT {x_sql} AS x, {quoted(y)} AS y FROM {self.source}")
        total = int(self.query(f"SELECT count(*) FROM ({rows_sql}) WHERE x IS NOT NULL "
                               "AND y IS NOT NULL")[0][0])
        said = {"x": x, "x_type": x_type, "y": y, "count": total,
                "y_type": self.column(y)["type"]}
        if total <= CHART_POINTS:
            found = self.query(f"SELECT x, y FROM ({rows_sql}) WHERE x IS NOT NULL AND y IS "
                               "NOT NULL ORDER BY x")
            return {**said, "binned": False,
                    "points": [[_json(a), _json(b)] for a, b in found],
                    "read_bytes": self.budget.read}
        number = "epoch(x)" if _temporal(x_type) else "x::DOUBLE"
        found = self.query(
            f"WITH r AS (SELECT x, {number} AS n, y::DOUBLE AS y FROM ({rows_sql}) "
            "WHERE x IS NOT NULL AND y IS NOT NULL), "
            "b AS (SELECT min(n) AS lo, max(n) AS hi FROM r) "
            "SELECT min(x), avg(y), min(y), max(y) FROM r, b "
            "GROUP BY least(floor((n - lo) / greatest(hi - lo, 1e-300) * ?), ? - 1) "
            "ORDER BY 1", [CHART_POINTS, CHART_POINTS])
        return {**said, "binned": True,
                "points": [[_json(a), _json(m)] for a, m, _, _ in found],
                "ranges": [[_json(a), _json(lo), _json(hi)] for a, _, lo, hi in found],
                "read_bytes": self.budget.read}

    def points(self, value_name: str | None) -> dict[str, Any]:
        """Where the rows are (their longitude and latitude columns), with a value each;
        a repeatable sample of `MAP_POINTS` of a larger table."""
        lon, lat = self._role("lon"), self._role("lat")
        if lon is None or lat is None:
            raise ExploreError(422, "The table has no longitude and latitude columns.")
        value = self._value(value_name) if value_name or any(
            c["numeric"] and c["role"] is None for c in self.columns) else None
        picked = f", {quoted(value)}" if value else ""
        total = self.count()
        sample = f" USING SAMPLE reservoir({MAP_POINTS} ROWS) REPEATABLE (1)" \
            if total is None or total > MAP_POINTS else ""
        found = self.query(f"SELECT {quoted(lon)}, {quoted(lat)}{picked} FROM {self.source} "
                           f"WHERE {quoted(lon)} IS NOT NULL AND {quoted(lat)} IS NOT NULL"
                           f"{sample}")
        return {"lon": lon, "lat": lat, "value": value, "count": total,
                "sampled": bool(sample),
                "points": [[_json(v) for v in row] for row in found],
                "read_bytes": self.budget.read}

    def quicklook(self, title: str, units: str | None) -> bytes:
        """The rows' points coloured by a value when the table has coordinates, else a
        column's chart."""
        if self._role("lon") and self._role("lat"):
            found = self.points(None)
            values = [p[2] for p in found["points"]] if found["value"] else None
            return quicklook_points([p[0] for p in found["points"]],
                                    [p[1] for p in found["points"]], values, title,
                                    found["value"], units)
        chart = self.chart(None, None)
        xs = [p[0] for p in chart["points"]]
        if chart["x_type"].startswith(_TEMPORAL):
            import numpy as np

            xs = list(np.array(xs, dtype="datetime64[s]"))
        return quicklook_chart(xs, [p[1] for p in chart["points"]], title,
                               chart["x"] or "row", chart["y"], units)


@contextmanager
def opened(fs: Any, path: str, fmt: Format, budget: Budget) -> Iterator[Table]:
    table = Table(fs, path, fmt, budget)
    try:
        yield table
    finally:
        table.close()
