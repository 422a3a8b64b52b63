"""Pictures, drawn with matplotlib (its Agg canvas, no display): a map's field as a PNG the
page lays its own axes and colour bar around, the colour scale itself, and quicklooks
(a map with its colour bar and units, a point map, a chart), PNG each."""

from __future__ import annotations

import base64
import io
import threading
from collections.abc import Sequence
from functools import cache
from typing import Any

#: The colour scale of every map (perceptually uniform, readable in grey and by most
#: colour-blind readers).
COLORMAP = "viridis"
#: matplotlib's font and figure machinery is not made for threads: one picture at a time
#: (a quicklook takes ~0.1 s; a map's field, drawn without it, ~10 ms).
_FIGURES = threading.Lock()


def data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def _png(rgba: Any) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    # zlib's fastest level: a map of a noisy field took 0.23 s to compress at the default
    # level, for a picture that goes once to one browser
    Image.fromarray(rgba, mode="RGBA").save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def field_png(values: Any, low: float | None, high: float | None) -> bytes:
    """A 2-D field (north up, west left) coloured from `low` to `high`; missing values
    transparent."""
    import numpy as np
    from matplotlib import colormaps

    field = np.asarray(values, dtype="float64")
    finite = np.isfinite(field)
    span = (high - low) if low is not None and high is not None and high > low else 1.0
    scaled = np.where(finite, (field - (low or 0.0)) / span, 0.0)
    rgba = colormaps[COLORMAP](np.clip(scaled, 0, 1), bytes=True)
    rgba[..., 3] = np.where(finite, 255, 0)
    return _png(np.ascontiguousarray(rgba))


@cache
def colorbar_url() -> str:
    """The colour scale, low to high from left to right, as a data URL."""
    import numpy as np
    from matplotlib import colormaps

    ramp = colormaps[COLORMAP](np.tile(np.linspace(0, 1, 256), (12, 1)), bytes=True)
    return data_url(_png(np.ascontiguousarray(ramp)))


def _figure(width: float = 4.8, height: float = 3.6) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _saved(figure: Any) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def _label(name: str, units: str | None) -> str:
    return f"{name} ({units})" if units else name


def quicklook_map(values: Any, extent: Sequence[float], title: str, label: str,
                  units: str | None, axes: tuple[str, str]) -> bytes:
    """A field on its grid (`extent`: west, east, south, north) with its colour bar and
    units."""
    import numpy as np

    field = np.ma.masked_invalid(np.asarray(values, dtype="float64"))
    with _FIGURES:
        figure = _figure()
        ax = figure.add_subplot()
        image = ax.imshow(field, extent=tuple(extent), origin="upper", cmap=COLORMAP,
                          aspect="auto", interpolation="nearest")
        bar = figure.colorbar(image, ax=ax, shrink=0.9)
        bar.set_label(_label(label, units))
        ax.set_xlabel(axes[0])
        ax.set_ylabel(axes[1])
        ax.set_title(title, fontsize=9)
        return _saved(figure)


def quicklook_points(lon: Any, lat: Any, values: Any | None, title: str,
                     label: str | None, units: str | None) -> bytes:
    """Points where a table's rows are, coloured by a value when there is one."""
    with _FIGURES:
        figure = _figure()
        ax = figure.add_subplot()
        drawn = ax.scatter(lon, lat, c=values if values is not None else "#1f77b4", s=14,
                           cmap=COLORMAP if values is not None else None)
        if values is not None and label:
            figure.colorbar(drawn, ax=ax, shrink=0.9).set_label(_label(label, units))
        ax.set_xlabel("longitude")
        ax.set_ylabel("latitude")
        ax.set_title(title, fontsize=9)
        return _saved(figure)


def quicklook_chart(x: Any, y: Any, title: str, x_label: str, y_label: str,
                    units: str | None) -> bytes:
    """A column against time (or another column, or the row number)."""
    with _FIGURES:
        figure = _figure()
        ax = figure.add_subplot()
        ax.plot(x, y, marker="." if len(y) < 200 else None, linewidth=1)
        ax.set_xlabel(x_label)
        ax.set_ylabel(_label(y_label, units))
        ax.set_title(title, fontsize=9)
        figure.autofmt_xdate()
        return _saved(figure)
