#!/usr/bin/env bash
# Provision everything swift-pjsua needs to build and test on Debian/Ubuntu:
#   1. Debian packages: build tools, C libraries pjproject links against, and the
#      real SIP peers the tests talk to (sipp, kamailio, sox, ...), python3 for the
#      benchmark harness and chrt (util-linux) for its real-time diagnostic run.
#   2. pjproject >= 2.12 with its pkg-config file. If one is already visible to
#      pkg-config (distribution package, Homebrew, your own build) it is used as is;
#      otherwise pjproject 2.12.1 is built from the tree carried inside Debian's
#      `ring` (Jami) source package and installed under /usr/local, together with
#      the C `pjsua` sample application (used by the benchmarks).
#
# Idempotent: a second run checks and returns in seconds.
# Usage: scripts/provision.sh [--no-peers]
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
prefix=/usr/local
cache=${SWIFT_PJSUA_CACHE:-/var/cache/swift-pjsua}
ring_version=20230206.0~ds2-1.1+deb12u1
want_peers=1
[ "${1:-}" = "--no-peers" ] && want_peers=0

say() { printf '[provision] %s\n' "$*"; }
die() { printf '[provision] error: %s\n' "$*" >&2; exit 1; }

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"

# --- Debian packages ---------------------------------------------------------
build_pkgs=(build-essential pkg-config libasound2-dev libssl-dev libopus-dev libsrtp2-dev
            libspeex-dev libspeexdsp-dev libgsm1-dev uuid-dev xz-utils)
peer_pkgs=(sip-tester kamailio kamailio-tls-modules sox openssl procps iproute2 python3 util-linux)

missing_pkgs() {
    local p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
    done
}

apt_updated=0
apt_install() {
    [ $# -gt 0 ] || return 0
    command -v apt-get >/dev/null || die "missing packages ($*) and no apt-get: install them with your package manager"
    [ "$(id -u)" = 0 ] || die "missing packages ($*): run as root or install them first"
    if [ $apt_updated = 0 ]; then
        say "apt-get update"
        apt-get update -qq || die "apt-get update failed"
        apt_updated=1
    fi
    say "installing: $*"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null \
        || die "apt-get install $* failed"
}

have_pjproject() { pkg-config --atleast-version=2.12 libpjproject 2>/dev/null; }

if command -v dpkg-query >/dev/null; then
    mapfile -t need < <(missing_pkgs "${build_pkgs[@]}")
    if have_pjproject; then need=(); mapfile -t need < <(missing_pkgs pkg-config); fi
    if [ $want_peers = 1 ]; then mapfile -t -O "${#need[@]}" need < <(missing_pkgs "${peer_pkgs[@]}"); fi
    apt_install "${need[@]}"
    # Debian enables kamailio's service on install; the tests start their own.
    if [ $want_peers = 1 ] && command -v systemctl >/dev/null && systemctl is-active -q kamailio 2>/dev/null; then
        systemctl stop kamailio || true
    fi
else
    say "not a Debian system: make sure a C toolchain, pkg-config, sipp, kamailio and sox are installed"
fi

# --- pjproject ---------------------------------------------------------------
if have_pjproject; then
    say "pjproject $(pkg-config --modversion libpjproject) found by pkg-config: nothing to build"
    [ -x "$prefix/bin/pjsua" ] || command -v pjsua >/dev/null \
        || say "note: no C 'pjsua' app on PATH; only the benchmarks need it"
    exit 0
fi

command -v apt-get >/dev/null || die "no pjproject >= 2.12 found by pkg-config; install one (or set PKG_CONFIG_PATH) and run again"
[ "$(id -u)" = 0 ] || die "building pjproject into $prefix needs root"

mkdir -p "$cache"
src_tar=$(ls "$cache"/ring_*.orig.tar.* 2>/dev/null | head -n1 || true)
if [ -z "$src_tar" ]; then
    say "fetching Debian source package ring=$ring_version (carries pjproject 2.12.1)"
    apt_tmp=$(mktemp -d)
    trap 'rm -rf "$apt_tmp"' EXIT
    mkdir -p "$apt_tmp/lists/partial" "$apt_tmp/cache/archives/partial" "$apt_tmp/src"
    # deb-src lines for the mirrors this machine already uses, in a private apt
    # state folder: the machine's own sources and lists stay untouched.
    {
        for f in /etc/apt/sources.list.d/*.sources; do
            [ -f "$f" ] || continue
            awk '
                /^[Tt]ypes:/      { t=$0 }
                /^URIs:/          { u=$2 }
                /^Suites:/        { s=""; for (i=2;i<=NF;i++) s=s" "$i }
                /^Signed-By:/     { k=$2 }
                /^[[:space:]]*$/  { if (u!="" && t ~ /deb/) { n=split(s,a," "); for (i=1;i<=n;i++) print "deb-src [signed-by=" k "] " u " " a[i] " main" } u=""; s=""; k=""; t="" }
                END               { if (u!="" && t ~ /deb/) { n=split(s,a," "); for (i=1;i<=n;i++) print "deb-src [signed-by=" k "] " u " " a[i] " main" } }
            ' "$f"
        done
        for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
            [ -f "$f" ] || continue
            sed -n 's/^deb \(.*\)$/deb-src \1/p' "$f"
        done
    } | grep -E ' (bookworm|bookworm-updates|bookworm-security)( |$)' | sed 's/\[signed-by=\] //' \
      | sort -u > "$apt_tmp/sources.list"
    [ -s "$apt_tmp/sources.list" ] || die "could not derive a bookworm deb-src line from /etc/apt sources"
    apt_opts=(-o APT::Sandbox::User=root -o "Dir::Etc::SourceList=$apt_tmp/sources.list" -o Dir::Etc::SourceParts=/dev/null
              -o "Dir::State::Lists=$apt_tmp/lists" -o "Dir::Cache=$apt_tmp/cache")
    apt-get "${apt_opts[@]}" update -qq || die "apt-get update (deb-src) failed"
    (cd "$apt_tmp/src" && apt-get "${apt_opts[@]}" source --download-only -qq "ring=$ring_version") \
        || (cd "$apt_tmp/src" && apt-get "${apt_opts[@]}" source --download-only -qq ring) \
        || die "apt-get source ring failed"
    src_tar=$(ls "$apt_tmp/src"/ring_*.orig.tar.* 2>/dev/null | head -n1)
    [ -n "$src_tar" ] || die "ring source package has no orig tarball"
    cp "$src_tar" "$cache/" && src_tar="$cache/$(basename "$src_tar")"
fi

build=$(mktemp -d /tmp/pjproject-build.XXXXXX)
say "unpacking pjproject from $(basename "$src_tar")"
tar -xf "$src_tar" -C "$build" --wildcards '*/daemon/contrib/tarballs-unpacked/pjproject-*' \
    || die "no pjproject tree in $src_tar"
pjdir=$(find "$build" -mindepth 1 -maxdepth 8 -type f -name aconfigure -path '*pjproject-*' -printf '%h\n' | head -n1)
[ -n "$pjdir" ] || die "pjproject tree not found after unpacking"

say "building pjproject in $pjdir (about 2-3 minutes on 2 cores)"
cp "$here/provision/config_site.h" "$pjdir/pjlib/include/pj/config_site.h"
log="$build/build.log"
(
    cd "$pjdir"
    chmod +x configure aconfigure 2>/dev/null || true
    ./configure --prefix="$prefix" --enable-shared --enable-epoll --disable-video \
        --disable-libwebrtc --disable-libyuv --with-external-srtp --with-external-gsm \
        --with-external-speex --disable-ilbc-codec --disable-g7221-codec \
        --disable-sdl --disable-ffmpeg --disable-v4l2 --disable-openh264 \
        CFLAGS='-O2 -fPIC' 2>&1
    make dep 2>&1
    make -j"$(nproc)" 2>&1
    make install 2>&1
) >"$log" || { tail -n 40 "$log" >&2; die "pjproject build failed (log: $log)"; }

app=$(ls "$pjdir"/pjsip-apps/bin/pjsua-* 2>/dev/null | head -n1)
if [ -n "$app" ]; then install -m 0755 "$app" "$prefix/bin/pjsua"; else say "warning: C pjsua app was not built"; fi
ldconfig
have_pjproject || die "pjproject installed but pkg-config still does not find libpjproject"
say "installed pjproject $(pkg-config --modversion libpjproject) under $prefix"
rm -rf "$build"
