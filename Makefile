# sqlfs: `make demo` mounts a workspace and uses it; `make test` runs every
# test. Both install what they need first (Debian packages, Go modules).

SHELL      := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
GO         ?= go
# The Linux mount speaks the FUSE protocol itself (go-fuse). With cgofuse,
# the portable frontend serves instead; fuse3 then makes it use libfuse3
# through the vendored cgofuse fork (third_party/cgofuse).
# seccomp: the container backend's syscall filter (libseccomp).
TAGS       ?= fuse3 seccomp
GOFLAGS_B  := -tags '$(TAGS)'
BIN        := bin
# fuse3 and libfuse3-dev for the mount, busybox-static and libseccomp-dev for
# the container tests, prometheus for promtool and the scrape test, fio for
# make fio, and the reference tools the shell backend's corpus compares with.
# npm is not among them: NodeSource's nodejs (on these machines) ships its own
# and conflicts with Debian's npm; the verdaccio rule below installs Debian's
# npm only where no npm is on PATH.
DEB_PKGS   := fuse3 libfuse3-dev libfuse-dev pkg-config gcc sqlite3 busybox-static \
              libseccomp-dev prometheus fio tar gzip git bash coreutils grep sed mawk \
              diffutils jq file util-linux tree nodejs curl
TEST_TIMEOUT ?= 20m
# The packages with real concurrency (the core's writer and read-ahead, FUSE
# request threads, the store's background writer, exec backends, the API)
# run under the race detector; the commands' tests, which mostly drive child
# processes, and the benchmark harnesses run without it.
RACE_PKGS  := ./sqlstore/... ./fs/... ./sidecar/... ./host/... ./fleet/... ./egress/... ./metrics/... ./internal/... ./replica/...
PLAIN_PKGS := ./cmd/... ./bench/... ./fio/...
# Tools built from the Go module proxy (litestream, an S3 server, helm,
# kubeconform) are installed outside the checkout, one directory per name and
# version, so a clean clone reuses them; $(TOOLS)/bin holds links to the
# pinned versions and is on PATH for the tests.
TOOLS      ?= /var/cache/sqlfs-tools
export PATH := $(PATH):$(TOOLS)/bin
# sidecar/js's real-package corpus: npm ci of its lockfile, once, in here.
export SQLFS_TOOLS := $(TOOLS)
# test-long sets SQLFS_TEST_LONG for the long randomized runs (200 SIGKILL
# rounds of the crash test, the core's long model-based run).
LONG_TIMEOUT ?= 3h

.PHONY: all deps tools build test test-long test-integration tools-integration vet demo bench bench-workloads npm-registry fio rootfs demo-pdf demo-publish clean

all: build

# deps installs only what is missing, so repeated runs cost nothing.
deps: tools
	@missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@test -e /dev/fuse || (modprobe fuse 2>/dev/null || true)
	$(GO) mod download
	$(MAKE) --no-print-directory $(TOOLS)/bin/verdaccio

# litestream replicates stores to S3 (replica/ runs it as a child process:
# embedded as a library it corrupted go-sqlite3 stores, see DESIGN.md).
LITESTREAM_VERSION := v0.5.18
LITESTREAM := $(TOOLS)/litestream-$(LITESTREAM_VERSION)/litestream
tools: $(TOOLS)/bin/litestream
$(TOOLS)/bin/litestream: $(LITESTREAM)
	@mkdir -p $(TOOLS)/bin
	ln -sfn $(LITESTREAM) $@
$(LITESTREAM):
	@mkdir -p $(@D)
	GOBIN=$(@D) GOFLAGS=-buildvcs=false $(GO) install github.com/benbjohnson/litestream/cmd/litestream@$(LITESTREAM_VERSION)

# The npm registry the container backend's npm test installs from
# (Verdaccio, on 127.0.0.1 with no uplinks) and the self-contained npm it
# copies into the test rootfs, in one directory outside the checkout;
# installed after the Debian packages (node). 6.8.0 runs on Node 18 and
# 20 (6.10 wants 22) once node-fetch is held at 2.7.0.
VERDACCIO_VERSION := 6.8.0
NPM_VERSION := 10.9.2
VERDACCIO_DIR := $(TOOLS)/verdaccio-$(VERDACCIO_VERSION)
$(TOOLS)/bin/verdaccio: $(VERDACCIO_DIR)/node_modules/.bin/verdaccio
	@mkdir -p $(@D)
	ln -sfn $< $@
$(VERDACCIO_DIR)/node_modules/.bin/verdaccio:
	@command -v npm >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm)
	rm -rf $(VERDACCIO_DIR).tmp && mkdir -p $(VERDACCIO_DIR).tmp
	printf '{"private":true,"dependencies":{"verdaccio":"$(VERDACCIO_VERSION)","npm":"$(NPM_VERSION)"},"overrides":{"node-fetch":"2.7.0"}}\n' >$(VERDACCIO_DIR).tmp/package.json
	cd $(VERDACCIO_DIR).tmp && npm install --no-audit --no-fund --loglevel=error
	rm -rf $(VERDACCIO_DIR) && mv $(VERDACCIO_DIR).tmp $(VERDACCIO_DIR)

# The registry the container backend's npm ci benchmark (BenchmarkNpmCI)
# serves from 127.0.0.1 with no uplink: a Verdaccio storage holding every
# package of bench/npm300's lockfile, fetched once from registry.npmjs.org.
NPM_REGISTRY := $(TOOLS)/npm-registry-npm300
npm-registry: $(NPM_REGISTRY)
$(NPM_REGISTRY): bench/npm300/package-lock.json | $(TOOLS)/bin/verdaccio
	VERDACCIO_DIR=$(VERDACCIO_DIR) ./sidecar/container/seed-npm-registry.sh bench/npm300 $@

# The integration suite's servers and checkers, each built once into
# $(TOOLS) where missing: SeaweedFS's weed (the S3 server; its tools module
# internal/tools/seaweedfs pins it, ~27 min to build on a loaded 2-CPU
# machine), helm and kubeconform (the chart's offline checks).
WEED_VERSION := $(shell grep -o -m1 'github.com/seaweedfs/seaweedfs v[^ ]*' internal/tools/seaweedfs/go.mod | cut -d' ' -f2)
WEED       := $(TOOLS)/seaweedfs-$(WEED_VERSION)/weed
HELM_VERSION := v3.22.0
HELM       := $(TOOLS)/helm-$(HELM_VERSION)/helm
KUBECONFORM_VERSION := v0.8.0
KUBECONFORM := $(TOOLS)/kubeconform-$(KUBECONFORM_VERSION)/kubeconform
tools-integration: $(TOOLS)/bin/weed $(TOOLS)/bin/helm $(TOOLS)/bin/kubeconform
$(TOOLS)/bin/weed: $(WEED)
$(TOOLS)/bin/helm: $(HELM)
$(TOOLS)/bin/kubeconform: $(KUBECONFORM)
$(TOOLS)/bin/weed $(TOOLS)/bin/helm $(TOOLS)/bin/kubeconform:
	@mkdir -p $(@D)
	ln -sfn $< $@
# seaweedfs needs a replace directive, so go install refuses it: built from
# its tools module, under a temporary name so an interrupted build leaves
# nothing that looks finished.
$(WEED):
	@mkdir -p $(@D)
	cd internal/tools/seaweedfs && GOFLAGS='-mod=mod -buildvcs=false' $(GO) build -o $@.tmp github.com/seaweedfs/seaweedfs/weed
	mv $@.tmp $@
$(HELM):
	@mkdir -p $(@D)
	GOBIN=$(@D) GOFLAGS=-buildvcs=false $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
$(KUBECONFORM):
	@mkdir -p $(@D)
	GOBIN=$(@D) GOFLAGS=-buildvcs=false $(GO) install github.com/yannh/kubeconform/cmd/kubeconform@$(KUBECONFORM_VERSION)

VERSION    := $(shell git describe --always --dirty 2>/dev/null || echo dev)
build: deps
	@mkdir -p $(BIN)
	$(GO) build $(GOFLAGS_B) -ldflags "-X github.com/sqlfs/sqlfs/metrics.Version=$(VERSION)" -o $(BIN)/ ./cmd/...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' | grep -v '^third_party/'))" || (gofmt -l $$(git ls-files '*.go' | grep -v '^third_party/'); echo "gofmt needed"; exit 1)
	$(GO) vet $(GOFLAGS_B) ./...

# The suite mounts real FUSE filesystems and runs real containers: run as root.
# The cgofuse fork is a module of its own, so its patch tests run apart.
test: deps vet
	$(TEST_ENV) $(GO) test $(GOFLAGS_B) -race -p 2 -timeout $(TEST_TIMEOUT) $(RACE_PKGS)
	$(TEST_ENV) $(GO) test $(GOFLAGS_B) -p 2 -timeout $(TEST_TIMEOUT) $(PLAIN_PKGS)
	# The portable frontend (cgofuse, libfuse3) through the same mount tests.
	$(TEST_ENV) $(GO) test -tags 'cgofuse fuse3' -timeout $(TEST_TIMEOUT) ./fs/fuse/
	cd third_party/cgofuse && $(GO) test -tags fuse3 -run Fuse3 ./fuse/
	# The gojq fork is a module of its own too: its patch tests.
	cd third_party/gojq && $(GO) test -race .
	# Then the real servers and the Kubernetes chart's checks.
	$(MAKE) test-integration

# The integration suite (build tag integration): real servers on
# 127.0.0.1 (SeaweedFS's S3, started and stopped by each test through
# internal/s3test, also when it fails) and the Helm chart's checks. make
# test runs it after the fast suite; SQLFS_TEST_LONG=1 adds the long modes.
INTEGRATION_TIMEOUT ?= 45m
INTEGRATION_PKGS := ./internal/s3test/ ./internal/integration/ ./deploy/ ./fleet/ ./replica/
test-integration: deps tools-integration
	$(GO) vet -tags '$(TAGS) integration' $(INTEGRATION_PKGS)
	$(TEST_ENV) $(GO) test -tags '$(TAGS) integration' -p 1 -timeout $(INTEGRATION_TIMEOUT) $(INTEGRATION_PKGS)

test-long:
	$(MAKE) test TEST_ENV=SQLFS_TEST_LONG=1 TEST_TIMEOUT=$(LONG_TIMEOUT)

# demo mounts a workspace on a fresh store, works in it, unmounts, remounts
# and shows the files are still there.
DEMO ?= /tmp/sqlfs-demo
demo: build
	@set -e; B=$(CURDIR)/$(BIN); mkdir -p $(DEMO)/mnt; \
	if grep -qs " $(DEMO)/mnt " /proc/mounts; then fusermount3 -u $(DEMO)/mnt; fi; \
	rm -rf $(DEMO)/workspace.db*; \
	echo "== mounting $(DEMO)/workspace.db at $(DEMO)/mnt"; \
	$$B/sqlfs-mount $(DEMO)/workspace.db $(DEMO)/mnt & pid=$$!; \
	trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null' EXIT; \
	until grep -qs " $(DEMO)/mnt " /proc/mounts; do kill -0 $$pid; sleep 0.1; done; \
	cd $(DEMO)/mnt; set -x; \
	mkdir -p src/app && printf 'print("hello from sqlfs")\n' > src/app/main.py; \
	cp -r /usr/share/doc/fuse3 docs; ln -s src/app/main.py entry; \
	ls -la; cat entry; find . | head; du -sh .; df -h .; \
	$$B/sqlfs-exec run --store $(DEMO)/workspace.db -- 'echo "made by the shell backend, through the mount'"'"'s socket" > from-shell'; \
	cat from-shell; \
	set +x; cd /; kill -TERM $$pid; wait $$pid; trap - EXIT; \
	echo "== unmounted; the store holds:"; \
	sqlite3 -header -column $(DEMO)/workspace.db "SELECT (SELECT count(*) FROM inodes) AS inodes, (SELECT count(*) FROM chunks) AS chunks, (SELECT count(*) FROM audit) AS audit_events"; \
	echo "== the shell backend, on the store itself (no mount):"; \
	$$B/sqlfs-exec run --store $(DEMO)/workspace.db -- 'grep -rn hello . && echo made-by-shell > src/app/NOTES'; \
	echo "== remounted: the files are still there"; \
	$$B/sqlfs-mount $(DEMO)/workspace.db $(DEMO)/mnt & pid=$$!; \
	until grep -qs " $(DEMO)/mnt " /proc/mounts; do kill -0 $$pid; sleep 0.1; done; \
	cat $(DEMO)/mnt/entry $(DEMO)/mnt/src/app/NOTES; kill -TERM $$pid; wait $$pid

PUBLISH_ADDR ?= 127.0.0.1:18080

# A JS exec draws a PNG and publishes it; curl fetches it through the link
# and the bytes are checked against the workspace's copy.
demo-publish: build
	@set -e; B=$(CURDIR)/$(BIN); D=$(DEMO)/publish; rm -rf $$D; mkdir -p $$D; \
	$$B/sqlfs-exec serve --store $$D/ws.db --public-addr $(PUBLISH_ADDR) 2>$$D/serve.log & pid=$$!; \
	trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null' EXIT; \
	until [ -e $$D/ws.db.publish-url ]; do kill -0 $$pid; sleep 0.1; done; \
	url=$$($$B/sqlfs-exec run --store $$D/ws.db --backend js -- "$$(cat sidecar/publish/demo.js)"); \
	echo "== the JS exec published: $$url"; \
	curl -sSf -D $$D/headers -o $$D/fetched.png "$$url"; grep -i '^content-type' $$D/headers; \
	$$B/sqlfs-exec export --store $$D/ws.db out $$D/stored; \
	cmp $$D/fetched.png $$D/stored/chart.png && echo "== fetched bytes equal the workspace's out/chart.png"; \
	file $$D/fetched.png; \
	$$B/sqlfs-exec publish --store $$D/ws.db --revoke-all; \
	code=$$(curl -s -o /dev/null -w '%{http_code}' "$$url"); echo "== after --revoke-all the link answers $$code"; test "$$code" = 404; \
	$$B/sqlfs-exec log --store $$D/ws.db | grep -E 'publish|download'

bench: build
	$(GO) run ./bench -tmpfs -mount-bin $(BIN)/sqlfs-mount $(BENCHFLAGS)

fio: build
	$(GO) run ./fio -tmpfs -mount-bin $(BIN)/sqlfs-mount $(FIOFLAGS)

# Real developer tools on the mount, a native directory and tmpfs: rm -rf of a
# node_modules tree, git on a 10k-file tree, make -j2 of a C project, and npm ci
# of bench/npm from a warm cache (NPM= skips it; its first run needs the registry).
NPM ?= bench/npm
bench-workloads: build
	$(GO) run ./bench -tmpfs -mount-bin $(BIN)/sqlfs-mount -files 0 -mem-files 0 -tree-files 10000 \
		-git-files 10000 -build-files 200 -npm "$(NPM)" $(BENCHFLAGS)

# rootfs builds the full Debian userland for the container backend
# (debootstrap, then nodejs npm git python3 pandoc groff; about 10 minutes).
ROOTFS ?= /var/lib/sqlfs/rootfs
rootfs:
	@dpkg-query -W -f='$${Status}\n' debootstrap 2>/dev/null | grep -q 'ok installed' || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap)
	test -x $(ROOTFS)/usr/bin/pandoc || ./sidecar/container/mkrootfs.sh $(ROOTFS)

demo-pdf: build rootfs
	SQLFS_ROOTFS=$(ROOTFS) $(GO) test $(GOFLAGS_B) -count=1 -run TestPandocDemo -v ./sidecar/container/

clean:
	rm -rf $(BIN)
