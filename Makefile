# sqlfs: `make demo` mounts a workspace and uses it; `make test` runs every
# test. Both install what they need first (Debian packages, Go modules).

SHELL      := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
GO         ?= go
# libfuse3 through the vendored cgofuse fork (third_party/cgofuse): kernel
# cache invalidation, partial utimens, nullpath for unlinked open files.
TAGS       ?= fuse3
GOFLAGS_B  := -tags $(TAGS)
BIN        := bin
DEB_PKGS   := fuse3 libfuse3-dev libfuse-dev pkg-config gcc sqlite3 runc busybox-static \
              libseccomp-dev prometheus fio tar gzip git
TEST_TIMEOUT ?= 20m

.PHONY: all deps build test vet demo bench fio rootfs demo-pdf clean

all: build

# deps installs only what is missing, so repeated runs cost nothing.
deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@test -e /dev/fuse || (modprobe fuse 2>/dev/null || true)
	$(GO) mod download

build: deps
	@mkdir -p $(BIN)
	$(GO) build $(GOFLAGS_B) -o $(BIN)/ ./cmd/...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' | grep -v '^third_party/'))" || (gofmt -l $$(git ls-files '*.go' | grep -v '^third_party/'); echo "gofmt needed"; exit 1)
	$(GO) vet $(GOFLAGS_B) ./...

# The suite mounts real FUSE filesystems and runs real containers: run as root.
test: deps vet
	$(GO) test $(GOFLAGS_B) -p 2 -timeout $(TEST_TIMEOUT) ./...

# demo mounts a workspace on a fresh store, works in it, unmounts, remounts
# and shows the files are still there.
DEMO ?= /tmp/sqlfs-demo
demo: build
	@set -e; mkdir -p $(DEMO)/mnt; \
	if grep -qs " $(DEMO)/mnt " /proc/mounts; then fusermount3 -u $(DEMO)/mnt; fi; \
	echo "== mounting $(DEMO)/workspace.db at $(DEMO)/mnt"; \
	$(BIN)/sqlfs-mount $(DEMO)/workspace.db $(DEMO)/mnt & pid=$$!; \
	trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null' EXIT; \
	until grep -qs " $(DEMO)/mnt " /proc/mounts; do kill -0 $$pid; sleep 0.1; done; \
	cd $(DEMO)/mnt; set -x; \
	mkdir -p src/app && printf 'print("hello from sqlfs")\n' > src/app/main.py; \
	cp -r /usr/share/doc/fuse3 docs; ln -s src/app/main.py entry; \
	ls -la; cat entry; find . | head; du -sh .; df -h .; \
	set +x; cd /; kill -TERM $$pid; wait $$pid; trap - EXIT; \
	echo "== unmounted; the store holds:"; \
	sqlite3 $(DEMO)/workspace.db "SELECT (SELECT count(*) FROM inodes) AS inodes, (SELECT count(*) FROM chunks) AS chunks, (SELECT count(*) FROM audit) AS audit_events"; \
	echo "== remounted: the files are still there"; \
	$(BIN)/sqlfs-mount $(DEMO)/workspace.db $(DEMO)/mnt & pid=$$!; \
	until grep -qs " $(DEMO)/mnt " /proc/mounts; do kill -0 $$pid; sleep 0.1; done; \
	cat $(DEMO)/mnt/entry; kill -TERM $$pid; wait $$pid

bench: build
	$(GO) run $(GOFLAGS_B) ./bench -mount-bin $(BIN)/sqlfs-mount

fio: build
	$(GO) run $(GOFLAGS_B) ./fio -mount-bin $(BIN)/sqlfs-mount

# rootfs builds the full Debian userland for the container backend.
rootfs:
	./sidecar/container/mkrootfs.sh $(or $(ROOTFS),/var/lib/sqlfs/rootfs)

demo-pdf: build rootfs
	SQLFS_ROOTFS=$(or $(ROOTFS),/var/lib/sqlfs/rootfs) $(GO) test $(GOFLAGS_B) -run TestDemoPDF -v ./sidecar/container/

clean:
	rm -rf $(BIN)
