"""Longitudes as a STAC bbox takes them: global grids on 0..360 (CMIP, ERA5, most model
output) could not be published (0..350 became west 0, east -10: "no latitude/longitude
extent")."""

from __future__ import annotations

import numpy as np
import pytest

from stac_ext.publish.longitudes import footprint, lon_extent

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("values", "extent"), [
    (np.arange(0, 360, 10), (-180.0, 180.0)),  # CDO's r36x18, on 0..360
    (np.arange(-180, 180, 2.5), (-180.0, 180.0)),
    (np.arange(0.5, 360, 1.0), (-180.0, 180.0)),  # cell centres
    (np.arange(-10, 41, 1.0), (-10.0, 40.0)),  # Europe
    (np.arange(150, 251, 5.0), (150.0, -110.0)),  # the Pacific, across the antimeridian
    (np.arange(170, 181, 2.0), (170.0, 180.0)),  # up to the antimeridian, not across
    (np.array([200.0]), (-160.0, -160.0)),
    (np.array([np.nan, 10.0, 20.0]), (10.0, 20.0)),
    (np.array([]), None)])
def test_the_smallest_arc_holding_the_longitudes(values, extent) -> None:
    assert lon_extent(values) == extent


def test_a_bbox_across_the_antimeridian_is_two_polygons() -> None:
    assert footprint([150.0, -10.0, -110.0, 10.0]) == {"type": "MultiPolygon", "coordinates": [
        [[[150.0, -10.0], [180.0, -10.0], [180.0, 10.0], [150.0, 10.0], [150.0, -10.0]]],
        [[[-180.0, -10.0], [-110.0, -10.0], [-110.0, 10.0], [-180.0, 10.0],
          [-180.0, -10.0]]]]}
    assert footprint([-10.0, 30.0, 40.0, 70.0])["type"] == "Polygon"
