#!/bin/sh
# mkrootfs.sh DIR — build the container backend's full root filesystem: a
# minimal Debian from Debian's own packages (debootstrap), then with apt in
# it what agents need: node and npm, git, python3, pandoc, and groff with
# ghostscript for pandoc's PDF output through `-t ms`.
#
# The suite and mirror default to the host's apt configuration; set SUITE or
# MIRROR to override. The rootfs is built beside DIR and renamed into place
# at the end, so an interrupted build never leaves a half rootfs at DIR.
# Needs root and the debootstrap package.
set -eu

dir=${1:?usage: mkrootfs.sh DIR}
packages="nodejs npm git python3 pandoc groff ghostscript ca-certificates procps less xz-utils bzip2 unzip curl"

if [ -z "${SUITE:-}" ]; then
	SUITE=$(. /etc/os-release && echo "$VERSION_CODENAME")
fi
if [ -z "${MIRROR:-}" ]; then
	# The first archive URI the host's apt uses (deb822, then one-line form).
	MIRROR=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
	if [ -z "$MIRROR" ]; then
		MIRROR=$(awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i !~ /^\[/) {print $i; exit}}' /etc/apt/sources.list 2>/dev/null || true)
	fi
fi
if [ -z "$MIRROR" ]; then
	echo "mkrootfs.sh: no Debian mirror in the host's apt configuration; set MIRROR" >&2
	exit 1
fi
command -v debootstrap >/dev/null || {
	echo "mkrootfs.sh: debootstrap missing (apt-get install debootstrap)" >&2
	exit 1
}

tmp="$dir.tmp.$$"
cleanup() {
	umount "$tmp/proc" 2>/dev/null || true
	umount "$tmp/dev" 2>/dev/null || true
	# --one-file-system: never follow a mount that failed to come off into the host.
	rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

if ! debootstrap --variant=minbase "$SUITE" "$tmp" "$MIRROR"; then
	tail -n 40 "$tmp/debootstrap/debootstrap.log" >&2 || true
	exit 1
fi

# Package scripts want /proc and /dev; nothing may start as a service.
mount -t proc proc "$tmp/proc"
mount --bind /dev "$tmp/dev"
printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
chmod +x "$tmp/usr/sbin/policy-rc.d"
echo "deb $MIRROR $SUITE main" >"$tmp/etc/apt/sources.list"
chroot "$tmp" apt-get update
# shellcheck disable=SC2086 # word splitting of the package list is wanted
DEBIAN_FRONTEND=noninteractive chroot "$tmp" apt-get install -y --no-install-recommends $packages
rm "$tmp/usr/sbin/policy-rc.d"

# The user commands run as by default (uid:gid 1000:1000); its home is the
# /tmp tmpfs because the rootfs is mounted read-only.
chroot "$tmp" groupadd --gid 1000 agent
chroot "$tmp" useradd --uid 1000 --gid 1000 --home-dir /tmp --no-create-home --shell /bin/bash agent
mkdir -p "$tmp/workspace"
echo sqlfs >"$tmp/etc/hostname"
printf '127.0.0.1 localhost sqlfs\n::1 localhost\n' >"$tmp/etc/hosts"
# Nothing in the container can install packages (read-only, no root): drop
# apt's caches.
chroot "$tmp" apt-get clean
rm -rf "$tmp/var/lib/apt/lists/"*

# Check what the demo needs before the rootfs goes into place.
for tool in node npm git python3 pandoc groff pdfroff gs; do
	chroot "$tmp" sh -c "command -v $tool" >/dev/null || {
		echo "mkrootfs.sh: $tool missing from the rootfs" >&2
		exit 1
	}
done

umount "$tmp/proc" "$tmp/dev"
rm -rf --one-file-system "$dir"
mv "$tmp" "$dir"
trap - EXIT
echo "rootfs ready in $dir"
