// The data explorer: what a Zarr or NetCDF holds, a variable's map with its time slider and
// colour scale, a time series where the map is clicked; a Parquet or CSV file's schema, row
// count, pages of rows (columns and row groups chosen), a chart and its points. Everything
// comes from the explorer's views, read with the browser's sign-in (`api`); charts are
// Apache ECharts, drawn as SVG.
"use strict";
(() => {
  const { api, message, showError, ready } = window.geocatalog;
  const root = document.getElementById("explorer");
  if (!root) return;
  const views = root.dataset.views;
  const source = root.dataset.source;
  const error = document.getElementById("explore-error");
  const loading = document.getElementById("explore-loading");
  const $ = (id) => document.getElementById(id);
  const text = (id, value) => { $(id).textContent = value == null ? "" : String(value); };

  function url(view, params) {
    const query = new URLSearchParams({ source });
    for (const [key, value] of Object.entries(params || {})) {
      if (value !== null && value !== undefined && value !== "") query.set(key, String(value));
    }
    return views + view + "?" + query.toString();
  }

  async function read(view, params) {
    const result = await api(url(view, params));
    if (!result.ok) {
      showError(error, message(result));
      return null;
    }
    showError(error, "");
    return result.body;
  }

  function cell(row, value, attributes) {
    const td = document.createElement("td");
    td.textContent = value == null ? "" : String(value);
    for (const [key, val] of Object.entries(attributes || {})) td.dataset[key] = String(val);
    row.append(td);
    return td;
  }

  function rowsOf(tbody, rows) {
    tbody.replaceChildren(...rows.map((values) => {
      const tr = document.createElement("tr");
      for (const value of values) cell(tr, value);
      return tr;
    }));
  }

  function size(bytes) {
    const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let value = bytes;
    let unit = 0;
    while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
    return (unit ? value.toPrecision(3) : String(value)) + " " + units[unit];
  }

  const number = (value) => (value == null ? "" : String(Number(value.toPrecision(6))));

  function chart(element, options) {
    element.hidden = false;
    const drawn = echarts.getInstanceByDom(element) || echarts.init(element, null, { renderer: "svg" });
    drawn.setOption(options, true);
    return drawn;
  }

  // ---- Zarr and NetCDF ----
  let described = null;
  let current = null;  // the map shown: its extent, variable, level

  function variableOf(name) {
    return described.variables.find((v) => v.name === name);
  }

  function showDataset(info) {
    described = info;
    $("gridded").hidden = false;
    rowsOf($("variables").tBodies[0], info.variables.map((v) => [
      v.name + (v.long_name ? " (" + v.long_name + ")" : ""), v.dims.join(", "),
      v.shape.join(" × "), v.dtype, v.units || "", v.chunks ? v.chunks.join(" × ") : "contiguous",
      size(v.nbytes)]));
    rowsOf($("dimensions").tBodies[0], Object.entries(info.dims).map(([name, length]) => {
      const coordinate = info.coords[name] || {};
      const times = info.times[name];
      return [name, length, times ? times[0] : number(coordinate.min),
              times ? times[times.length - 1] : number(coordinate.max)];
    }));
    const attributes = $("attributes");
    attributes.replaceChildren();
    for (const [key, value] of Object.entries(info.attrs)) {
      const term = document.createElement("dt");
      term.textContent = key;
      const description = document.createElement("dd");
      description.textContent = String(value);
      attributes.append(term, description);
    }
    const select = $("map-variable");
    select.replaceChildren(...info.variables.filter((v) => v.mappable).map((v) => {
      const option = document.createElement("option");
      option.value = v.name;
      option.textContent = v.long_name ? v.long_name + " (" + v.name + ")" : v.name;
      return option;
    }));
    if (!select.options.length) {
      showError(error, "No variable of this dataset has two dimensions to map.");
      return;
    }
    chooseVariable();
  }

  function chooseVariable() {
    const variable = variableOf($("map-variable").value);
    const time = variable.axes.time;
    const slider = $("time-slider");
    $("time-control").hidden = !time;
    slider.max = time ? String(variable.shape[variable.dims.indexOf(time)] - 1) : "0";
    slider.value = "0";
    const level = variable.axes.levels[0];
    $("level-control").hidden = !level;
    if (level) {
      text("level-name", level);
      const count = variable.shape[variable.dims.indexOf(level)];
      $("map-level").replaceChildren(...Array.from({ length: Math.min(count, 1000) }, (_, n) => {
        const option = document.createElement("option");
        option.value = String(n);
        option.textContent = String(n);
        return option;
      }));
    }
    showTime();
    drawMap();
  }

  function showTime() {
    const variable = variableOf($("map-variable").value);
    const times = variable.axes.time ? described.times[variable.axes.time] : null;
    const index = Number($("time-slider").value);
    text("time-value", times ? times[index] : index);
  }

  let drawing = 0;
  async function drawMap() {
    const asked = ++drawing;
    const variable = $("map-variable").value;
    const params = { variable, time: $("time-control").hidden ? null : $("time-slider").value,
                     level: $("level-control").hidden ? null : $("map-level").value };
    const found = await read("map", params);
    if (!found || asked !== drawing) return;
    current = found;
    const image = $("map-image");
    image.src = found.image;
    image.hidden = false;
    image.dataset.time = found.time ? (found.time.value || "") : "";
    const extent = found.extent;
    text("map-west", number(extent.west));
    text("map-east", number(extent.east));
    text("map-north", number(extent.north));
    text("map-south", number(extent.south));
    for (const name of document.querySelectorAll(".x-name")) name.textContent = found.x.dim;
    for (const name of document.querySelectorAll(".y-name")) name.textContent = found.y.dim;
    const name = found.long_name || found.variable;
    let caption = name + " (" + found.variable + ")" + (found.units ? ", " + found.units : "");
    if (found.time) caption += " at " + found.time.value;
    if (found.level) caption += ", " + found.level.dim + " " + found.level.value;
    text("map-caption", caption);
    $("colorbar").src = found.colorbar;
    text("colorbar-min", number(found.min));
    text("colorbar-max", number(found.max));
    $("colorbar-min").dataset.value = String(found.min);
    $("colorbar-max").dataset.value = String(found.max);
    text("colorbar-units", found.units || "");
    $("colorbar-box").hidden = false;
    text("map-read", size(found.read_bytes) + " read");
    loading.hidden = true;
  }

  async function drawSeries(event) {
    if (!current) return;
    const image = $("map-image");
    const box = image.getBoundingClientRect();
    const fx = (event.clientX - box.left) / box.width;
    const fy = (event.clientY - box.top) / box.height;
    const e = current.extent;
    const x = e.west + fx * (e.east - e.west);
    const y = e.north - fy * (e.north - e.south);
    const marker = $("map-marker");
    marker.style.left = (fx * 100) + "%";
    marker.style.top = (fy * 100) + "%";
    marker.hidden = false;
    const found = await read("series", { variable: current.variable, x, y,
                                         level: current.level ? current.level.index : null });
    if (!found) return;
    const point = $("series-point");
    point.hidden = false;
    point.textContent = "At " + current.x.dim + " " + number(found.x) + ", " + current.y.dim + " "
      + number(found.y) + " (the nearest grid point of the click)";
    point.dataset.x = String(found.x);
    point.dataset.y = String(found.y);
    const tbody = $("series-values").tBodies[0];
    tbody.replaceChildren(...found.times.map((time, n) => {
      const tr = document.createElement("tr");
      cell(tr, time, { time });
      cell(tr, found.values[n], { value: found.values[n] === null ? "" : found.values[n] });
      return tr;
    }));
    $("series-details").hidden = false;
    $("series-hint").hidden = true;
    chart($("series-chart"), {
      animation: false,
      tooltip: { trigger: "axis" },
      grid: { left: 70, right: 20, top: 30, bottom: 50 },
      xAxis: { type: "category", data: found.times, name: "time", nameLocation: "middle", nameGap: 30 },
      yAxis: { type: "value", scale: true, name: (found.long_name || found.variable) + (found.units ? " (" + found.units + ")" : "") },
      series: [{ type: "line", data: found.values, showSymbol: found.values.length < 100 }],
    });
  }

  // ---- Parquet and CSV ----
  let table = null;
  let offset = 0;

  function chosenColumns() {
    return [...document.querySelectorAll("#schema input[type=checkbox]:checked")].map((box) => box.value);
  }

  function option(value, label) {
    const element = document.createElement("option");
    element.value = value;
    element.textContent = label;
    return element;
  }

  function showTable(info) {
    table = info;
    $("table").hidden = false;
    const count = $("row-count");
    count.dataset.rows = info.rows == null ? "" : String(info.rows);
    count.textContent = info.rows == null ? "The row count is not read: the file is larger than the explorer reads at once."
      : info.rows.toLocaleString("en") + " row" + (info.rows === 1 ? "" : "s") + ", "
        + info.columns.length + " columns";
    $("schema").tBodies[0].replaceChildren(...info.columns.map((column) => {
      const tr = document.createElement("tr");
      cell(tr, column.name, { column: column.name });
      cell(tr, column.type + (column.role ? " (" + column.role + ")" : ""), { type: column.type });
      const td = document.createElement("td");
      const box = document.createElement("input");
      box.type = "checkbox";
      box.checked = true;
      box.value = column.name;
      box.setAttribute("aria-label", "Read " + column.name);
      box.addEventListener("change", () => drawRows());
      td.append(box);
      tr.append(td);
      return tr;
    }));
    const groups = info.row_groups || [];
    $("row-group-control").hidden = groups.length < 2;
    let first = 0;
    $("row-group").replaceChildren(...groups.map((rows, n) => {
      const element = option(String(first), "Row group " + n + " (rows " + first + " to " + (first + rows - 1) + ")");
      first += rows;
      return element;
    }));
    const numeric = info.columns.filter((c) => c.numeric && !["lat", "lon"].includes(c.role));
    const ys = numeric.length ? numeric : info.columns.filter((c) => c.numeric);
    $("chart-column").replaceChildren(...ys.map((c) => option(c.name, c.name)));
    const xs = info.columns.filter((c) => c.role === "time" || c.numeric);
    $("chart-by").replaceChildren(option("", "row number"), ...xs.map((c) => option(c.name, c.name)));
    if (info.roles.time) $("chart-by").value = info.roles.time;
    drawRows();
    if (ys.length) drawChart(); else text("chart-summary", "No column of numbers to chart.");
    if (info.roles.lon && info.roles.lat) drawPoints();
    loading.hidden = true;
  }

  async function drawRows() {
    const limit = Number($("page-size").value);
    const found = await read("rows", { offset, limit, columns: chosenColumns().join(",") });
    if (!found) return;
    const head = document.createElement("tr");
    for (const name of found.columns) {
      const th = document.createElement("th");
      th.textContent = name;
      head.append(th);
    }
    $("rows").tHead.replaceChildren(head);
    rowsOf($("rows").tBodies[0], found.rows);
    const last = found.offset + found.rows.length;
    text("rows-range", found.rows.length ? "rows " + (found.offset + 1) + " to " + last
      + (table.rows == null ? "" : " of " + table.rows.toLocaleString("en")) : "no rows here");
    $("rows-prev").disabled = found.offset === 0;
    $("rows-next").disabled = found.rows.length < limit || (table.rows != null && last >= table.rows);
  }

  async function drawChart() {
    const by = $("chart-by").value;
    const found = await read("chart", { column: $("chart-column").value, by });
    if (!found) return;
    const ys = found.points.map((p) => p[1]).filter((v) => v !== null);
    const low = Math.min(...ys);
    const high = Math.max(...ys);
    const summary = $("chart-summary");
    summary.textContent = found.y + " from " + number(low) + " to " + number(high) + ", "
      + found.count.toLocaleString("en") + " rows" + (found.binned ? " in " + found.points.length + " bins (each its mean)" : "")
      + " against " + (found.x || "the row number");
    summary.dataset.min = String(low);
    summary.dataset.max = String(high);
    summary.dataset.count = String(found.count);
    text("chart-x-name", found.x || "row");
    text("chart-y-name", found.y);
    const tbody = $("chart-values").tBodies[0];
    tbody.replaceChildren(...found.points.slice(0, 5000).map(([x, y]) => {
      const tr = document.createElement("tr");
      cell(tr, x, { x });
      cell(tr, y, { value: y === null ? "" : y });
      return tr;
    }));
    const temporal = found.x && /^(DATE|TIMESTAMP)/.test(found.x_type);
    chart($("chart"), {
      animation: false,
      tooltip: { trigger: "axis" },
      grid: { left: 70, right: 20, top: 30, bottom: 50 },
      xAxis: { type: temporal ? "time" : "value", scale: true, name: found.x || "row", nameLocation: "middle", nameGap: 30 },
      yAxis: { type: "value", scale: true, name: found.y },
      series: [{ type: "line", data: found.points, showSymbol: found.points.length < 100 }],
    });
  }

  async function drawPoints() {
    const found = await read("points", {});
    if (!found) return;
    $("points-section").hidden = false;
    const summary = $("points-summary");
    summary.textContent = found.points.length.toLocaleString("en") + " points"
      + (found.sampled ? " (a sample of " + found.count.toLocaleString("en") + " rows)" : "")
      + (found.value ? ", coloured by " + found.value : "");
    summary.dataset.count = String(found.points.length);
    const values = found.value ? found.points.map((p) => p[2]).filter((v) => v !== null) : [];
    chart($("points-chart"), {
      animation: false,
      tooltip: { trigger: "item" },
      grid: { left: 60, right: 80, top: 20, bottom: 50 },
      xAxis: { type: "value", scale: true, name: found.lon, nameLocation: "middle", nameGap: 30 },
      yAxis: { type: "value", scale: true, name: found.lat },
      visualMap: values.length ? { min: Math.min(...values), max: Math.max(...values), dimension: 2,
                                   calculable: true, right: 0, inRange: { color: ["#440154", "#21918c", "#fde725"] } } : undefined,
      series: [{ type: "scatter", symbolSize: 6, data: found.points }],
    });
  }

  // ---- start ----
  $("map-variable").addEventListener("change", () => chooseVariable());
  $("map-level").addEventListener("change", () => drawMap());
  $("time-slider").addEventListener("input", () => showTime());
  $("time-slider").addEventListener("change", () => drawMap());
  $("map-image").addEventListener("click", (event) => drawSeries(event));
  $("rows-prev").addEventListener("click", () => {
    offset = Math.max(0, offset - Number($("page-size").value));
    drawRows();
  });
  $("rows-next").addEventListener("click", () => { offset += Number($("page-size").value); drawRows(); });
  $("page-size").addEventListener("change", () => drawRows());
  $("row-group").addEventListener("change", () => { offset = Number($("row-group").value); drawRows(); });
  $("chart-column").addEventListener("change", () => drawChart());
  $("chart-by").addEventListener("change", () => drawChart());

  ready.then(async () => {
    // an item the caller may not read: the same 404 as a missing item's, nothing to draw
    if (root.dataset.hidden) { loading.hidden = true; return; }
    const info = await read("info", {});
    if (!info) { loading.hidden = true; return; }
    const refused = document.getElementById("explore-refused");
    if (refused) refused.hidden = true;
    if (info.kind === "gridded") showDataset(info); else showTable(info);
  });
})();
