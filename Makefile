# Two commands run everything on a fresh Debian machine: `make run` and `make test`.
# Missing system packages are installed when root (else one message names the command);
# Python dependencies go into .venv (the service's for `run`, plus the test tools for `test`).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HASH   := $(shell cat pyproject.toml constraints.txt | md5sum | cut -c1-8)
# the versions pyproject.toml's ranges resolved to (see constraints.txt)
LOCK   := -c constraints.txt
# Conformance tools whose pinned dependencies clash with ours: one venv each, from
# tests/conformance/tools/<name>.txt (tests/service/test_conformance_tools.py runs them).
TOOLS  := .tools
CONFORMANCE_TOOLS := $(patsubst tests/conformance/tools/%.txt,$(TOOLS)/%/.installed,$(wildcard tests/conformance/tools/*.txt))
# Earlier releases a database is upgraded from (tests/database/test_upgrade.py), the same way.
UPGRADE_TOOLS := $(patsubst tests/upgrade/tools/%.txt,$(TOOLS)/%/.installed,$(wildcard tests/upgrade/tools/*.txt))
PG_PACKAGES := postgresql postgresql-15-postgis-3
# `make run HOST=0.0.0.0 PORT=8081`; `make demo-s3 S3_PORT=9001`
HOST ?= 127.0.0.1
PORT ?= 8080
S3_PORT ?= 9000
# processes may reach this machine's own services (`make demo-s3`) in development only
OUTBOUND_ALLOW ?= 127.0.0.0/8

# The web face's STAC Browser (npm, built once into a version-keyed folder; `.web/stac-browser`
# points at the current one). OpenLayers: STAC Browser 4.0.1 pins ~10.6, which ol-stac 1.6
# no longer builds with, so its ol-stac is held at the last release that does.
STAC_BROWSER := 4.0.1
OL_STAC      := ~1.5.1
WEB          := .web/stac-browser-$(STAC_BROWSER)
# Swagger UI for both APIs' documentation pages, from npm (served by the service: no CDN)
SWAGGER_UI   := 5.35.0
SWAGGER      := .web/swagger-ui-$(SWAGGER_UI)
# Apache ECharts for the data explorer's charts, from npm (one file; SVG, so a chart's
# labels are in the page)
ECHARTS      := 6.1.0
CHARTS       := .web/echarts-$(ECHARTS)

# $(call debian,COMMANDS,PACKAGES,WHAT FOR): every command present, or the Debian packages
# installed (as root) or asked for.
debian = missing=; for c in $(1); do command -v $$c >/dev/null || missing=1; done; \
  [ -z "$$missing" ] || { if [ "$$(id -u)" = 0 ]; then apt-get update -qq \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2); \
  else echo "missing $(3); run:  sudo apt-get install -y $(2)"; exit 1; fi; }

.PHONY: run test test-fast test-unit lint bench fuzz docs docs-serve screenshots demo-s3 ha-demo system-deps web \
        browser-deps telemetry-deps gis-deps container-deps slurm-deps ha-deps constraints

run: system-deps $(VENV)/.run-$(HASH) web
	OUTBOUND_ALLOW=$(OUTBOUND_ALLOW) $(BIN)/geocatalog serve --host $(HOST) --port $(PORT)

# A local S3 server with demo files for publish-dataset (README "Publishing a dataset").
demo-s3: $(VENV)/.demo-$(HASH)
	$(BIN)/geocatalog demo-s3 --port $(S3_PORT)

# The service on a Patroni cluster of three members on loopback (docs: High availability).
ha-demo: system-deps ha-deps $(VENV)/.run-$(HASH) web
	OUTBOUND_ALLOW=$(OUTBOUND_ALLOW) $(BIN)/geocatalog ha-demo --host $(HOST) --port $(PORT)

test: system-deps browser-deps telemetry-deps gis-deps container-deps slurm-deps ha-deps \
      $(VENV)/.test-$(HASH) $(CONFORMANCE_TOOLS) $(UPGRADE_TOOLS) web
	$(BIN)/pytest

# The loop for an edit: every test but the browser's, the validators' and fuzzers' and the
# slow drills (markers in pyproject.toml); about 2 minutes. `make test` runs them all.
test-fast: system-deps $(VENV)/.test-$(HASH)
	$(BIN)/pytest -m "not browser and not conformance and not slow"

# The tests that need no database and no server (marker `unit`): the rules, in seconds.
test-unit: $(VENV)/.test-$(HASH)
	$(BIN)/pytest -m unit

# The docs' screenshots (docs/img), retaken by the browser and Prometheus tests (a plain
# test run writes them under .artifacts/, leaving the checkout as it was).
screenshots: system-deps browser-deps telemetry-deps container-deps $(VENV)/.test-$(HASH) web
	UPDATE_SCREENSHOTS=1 $(BIN)/pytest tests/web/test_web_browser.py tests/web/test_explorer_browser.py \
	  tests/service/test_prometheus.py "tests/acceptance/test_workflow.py::test_the_workflow[make-run]"

# The documentation site (docs/, mkdocs.yml) into site/, strictly: a broken link fails it.
docs: $(VENV)/.test-$(HASH)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs-serve: $(VENV)/.test-$(HASH)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

lint: $(VENV)/.test-$(HASH)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# geocatalog against stock stac-fastapi-pgstac on one seeded database (~25 min; options:
# `make bench BENCH_ARGS="--seconds 5 --runs 1"`). Results: the table, and .bench/results.json.
bench: system-deps slurm-deps ha-deps $(VENV)/.test-$(HASH) $(VENV)/.bench-$(HASH)
	@command -v wrk >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk; \
	  else echo "missing wrk; run:  sudo apt-get install -y wrk"; exit 1; fi; }
	$(BIN)/python -m tests.bench.run $(BENCH_ARGS)

# schemathesis on both OpenAPI documents, all phases, many examples (before a release;
# `make test` runs a bounded pass). Options: `make fuzz FUZZ_ARGS="--examples 50"`.
fuzz: system-deps $(VENV)/.test-$(HASH)
	$(BIN)/python -m tests.fuzz $(FUZZ_ARGS)

# STAC Browser from npm, built with Node (Debian's nodejs + npm when missing): ~3 min once.
# Assets are linked relatively; the service gives index.html its <base> and config at serve time.
web: .web/stac-browser .web/swagger-ui .web/echarts
.web/stac-browser: $(WEB)/.built
	ln -sfn stac-browser-$(STAC_BROWSER) $@
.web/swagger-ui: $(SWAGGER)/.built
	ln -sfn swagger-ui-$(SWAGGER_UI) $@
.web/echarts: $(CHARTS)/.built
	ln -sfn echarts-$(ECHARTS) $@
$(CHARTS)/.built:
	@$(call debian,npm,nodejs npm,Node.js for ECharts)
	rm -rf $(CHARTS) $(CHARTS).build && mkdir -p $(CHARTS).build $(CHARTS)
	cd $(CHARTS).build && npm pack --silent echarts@$(ECHARTS) >/dev/null && tar xzf *.tgz
	cp $(CHARTS).build/package/dist/echarts.min.js $(CHARTS).build/package/LICENSE $(CHARTS)/
	rm -rf $(CHARTS).build && touch $@
$(SWAGGER)/.built:
	@command -v npm >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm; \
	  else echo "missing Node.js for Swagger UI; run:  sudo apt-get install -y nodejs npm"; exit 1; fi; }
	rm -rf $(SWAGGER) $(SWAGGER).build && mkdir -p $(SWAGGER).build $(SWAGGER)
	cd $(SWAGGER).build && npm pack --silent swagger-ui-dist@$(SWAGGER_UI) >/dev/null && tar xzf *.tgz
	cp $(SWAGGER).build/package/swagger-ui-bundle.js $(SWAGGER).build/package/swagger-ui.css \
	  $(SWAGGER).build/package/LICENSE $(SWAGGER)/
	rm -rf $(SWAGGER).build && touch $@
# Its English texts' customisation (custom.json) is ours: a page it cannot show says to sign in;
# a link section's heading by its relation (a flat key `fields.<rel>`: a URI holds dots).
# So is an asset action (stac_browser_explore.js): "Explore" on Zarr, NetCDF, Parquet and CSV.
$(WEB)/.built: stac_ext/web/stac_browser_texts.json stac_ext/web/stac_browser_explore.js
	@$(call debian,npm,nodejs npm,Node.js for STAC Browser's build)
	rm -rf $(WEB) $(WEB).build && mkdir -p $(WEB).build
	cd $(WEB).build && npm pack --silent @radiantearth/stac-browser@$(STAC_BROWSER) >/dev/null && tar xzf *.tgz
	cp stac_ext/web/stac_browser_texts.json $(WEB).build/package/src/locales/en/custom.json
	cp stac_ext/web/stac_browser_explore.js $(WEB).build/package/src/actions/assets/GeocatalogExplore.js
	cd $(WEB).build/package && { echo "import GeocatalogExplore from './src/actions/assets/GeocatalogExplore.js';"; \
	  sed 's/^export default {/export default {\n  GeocatalogExplore,/' assetActions.config.js; } > actions.js \
	  && mv actions.js assetActions.config.js
	cd $(WEB).build/package && npm pkg set dependencies.ol-stac=$(OL_STAC) \
	  && npm install --no-audit --no-fund --loglevel=error \
	  && SB_pathPrefix=./ npm run --silent build:minimal >/dev/null
	mkdir -p $(WEB) && mv $(WEB).build/package/dist $(WEB)/dist
	rm -rf $(WEB).build && touch $@

# Debian's Chromium for the browser tests (Playwright drives it; its own download is unavailable).
browser-deps:
	@$(call debian,chromium,chromium,chromium for the browser tests)

# Debian's Prometheus for the metrics tests (a real one scrapes a live server) and promtool
# for the shipped alert rules (docker/prometheus/).
telemetry-deps:
	@$(call debian,prometheus promtool,prometheus,prometheus for the metrics tests)

# The clients the scientists' pages use in their examples: Debian's GDAL (`ogrinfo`, an OGC
# API Features client) and CDO (which the catalog-to-job example's tool runs on the worker),
# and pystac-client and OWSLib in .venv. `make run` leaves them out; the pages name this.
gis-deps: | $(BIN)/python
	@$(call debian,ogrinfo,gdal-bin,GDAL for the docs' examples)
	@$(call debian,cdo,cdo,CDO for the catalog-to-job example)
	@$(BIN)/python -c "import owslib, pystac_client" 2>/dev/null \
	  || $(BIN)/pip install --quiet $(LOCK) owslib pystac-client

# podman (with runc) for deployed tools' containers, with the containers.conf line this kind
# of machine needs (podman's default ulimits ask for more than it allows), and the tests'
# CDO image, built offline once (tests/containers/build-image: tagged by its content hash).
CONTAINERS_CONF := /etc/containers/containers.conf
ULIMITS := default_ulimits = ["nofile=1024:1024", "nproc=1000:1000"]
container-deps:
	@$(call debian,podman runc mmdebstrap,podman runc mmdebstrap,podman for deployed tools' containers)
	@grep -qs '^default_ulimits' $(CONTAINERS_CONF) || { if [ "$$(id -u)" = 0 ]; then \
	  mkdir -p $$(dirname $(CONTAINERS_CONF)); \
	  if grep -qs '^\[containers\]' $(CONTAINERS_CONF); then \
	    sed -i '/^\[containers\]/a $(ULIMITS)' $(CONTAINERS_CONF); \
	  else printf '[containers]\n%s\n' '$(ULIMITS)' >> $(CONTAINERS_CONF); fi; \
	  else echo "add to $(CONTAINERS_CONF) under [containers]:  $(ULIMITS)"; exit 1; fi; }
	@tests/containers/build-image >/dev/null

# Slurm and munge for the Slurm executor's tests: the tests start a one-node cluster of
# their own (own ports, own munge socket), never the Debian services.
slurm-deps:
	@$(call debian,sbatch slurmctld slurmd munged,slurm-wlm munge,Slurm for the Slurm executor's tests)

# Patroni, etcd and pgBackRest for the failover and restore drills and `make ha-demo`: the
# tests start a cluster of their own on loopback (own ports, own folders), never the Debian
# services.
ha-deps:
	@$(call debian,patroni etcd pgbackrest,patroni etcd-server pgbackrest,Patroni etcd pgBackRest for the failover drills)

# PostgreSQL + PostGIS for the embedded cluster (not needed with DATABASE_URL), Python's
# venv module, which Debian ships separately, and bubblewrap, the jobs' sandbox.
system-deps:
	@missing=""; \
	if [ -z "$$DATABASE_URL" ] && ! ls /usr/share/postgresql/*/extension/postgis.control >/dev/null 2>&1; then \
	  missing="$(PG_PACKAGES)"; fi; \
	if ! $(PYTHON) -c "import venv, ensurepip" >/dev/null 2>&1; then missing="$$missing python3-venv"; fi; \
	for tool in curl jq; do command -v $$tool >/dev/null || missing="$$missing $$tool"; done; \
	command -v bwrap >/dev/null || missing="$$missing bubblewrap"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else \
	    echo "missing system packages; run:  sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.run-$(HASH): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/pip install --quiet $(LOCK) -e .
	rm -f $(VENV)/.run-* && touch $@

# a tool's venv from its requirements, in tests/conformance/tools or tests/upgrade/tools
.SECONDEXPANSION:
$(TOOLS)/%/.installed: $$(wildcard tests/conformance/tools/$$*.txt tests/upgrade/tools/$$*.txt)
	rm -rf $(TOOLS)/$*
	$(PYTHON) -m venv $(TOOLS)/$*
	$(TOOLS)/$*/bin/pip install --quiet --upgrade pip
	$(TOOLS)/$*/bin/pip install --quiet -r $<
	touch $@

$(VENV)/.demo-$(HASH): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/pip install --quiet $(LOCK) -e ".[demo]"
	rm -f $(VENV)/.demo-* && touch $@

$(VENV)/.bench-$(HASH): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/pip install --quiet $(LOCK) -e ".[bench]"
	rm -f $(VENV)/.bench-* && touch $@

$(VENV)/.test-$(HASH): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/pip install --quiet $(LOCK) -e ".[test]"
	rm -f $(VENV)/.test-* $(VENV)/.run-* && touch $@ $(VENV)/.run-$(HASH)

# constraints.txt anew from pyproject.toml's ranges (after changing a dependency): a fresh
# venv resolves them, and its versions are written down.
constraints:
	rm -rf $(VENV).lock && $(PYTHON) -m venv $(VENV).lock
	$(VENV).lock/bin/pip install --quiet --upgrade pip
	$(VENV).lock/bin/pip install --quiet -e ".[test]"
	{ sed -n '/^#/p' constraints.txt; $(VENV).lock/bin/pip freeze --exclude-editable | grep -v '^-e'; } \
	  > constraints.txt.new && mv constraints.txt.new constraints.txt && rm -rf $(VENV).lock
