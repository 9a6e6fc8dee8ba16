#!/usr/bin/env bash
# Provision everything swift-pjsua needs to build and test on Debian/Ubuntu:
#   1. Debian packages: build tools, the C libraries pjproject links against, and the
#      real SIP peers the tests talk to (sipp, kamailio, sox, ...), python3 for the
#      benchmark harness and chrt (util-linux) for its real-time diagnostic run.
#   2. pjproject with its pkg-config file and the C `pjsua` app of the same tree
#      (the benchmarks compare against it):
#      - a pjproject >= 2.12 that pkg-config finds and that this script did not build
#        (a distribution package, Homebrew, your own build) is used as it is;
#      - otherwise pjproject 2.17, pinned by version and sha256, is built and installed
#        under /usr/local. The source archive comes from $SWIFT_PJSUA_PJPROJECT_TARBALL,
#        else from the cache folder, else from upstream's release archive; its checksum
#        is verified every time. A pjproject this script installed earlier is rebuilt in
#        place when the pin or the build recipe changes.
#      - only when no 2.17 archive can be had (an offline machine) the 2.12.1 tree
#        inside Debian's `ring` (Jami) source package is built instead, with a warning.
#
#    With --pjproject VERSION (2.17 or 2.12.1) that version is provisioned into its own
#    prefix, /opt/swift-pjsua/pjproject-VERSION, whatever else is installed: this is how
#    `make test PJPROJECT=2.12.1` tests the oldest supported version beside the newest.
#    2.17-noipv6 is 2.17 built without IPv6 (PJ_HAS_IPV6 0), for the test of that case.
#    2.17-ios is 2.17 with the limits and codecs of the pinned iOS xcframework (4 calls,
#    4 accounts, 12 conference ports, no opus/speex/GSM: provision/config_site-ios.h).
#    2.17-asan is 2.17 built with AddressSanitizer by the Swift toolchain's clang (so the
#    test binary and the libraries share one ASan runtime), for `make asan`.
#
# Idempotent: a second run checks and returns in seconds.
# Usage: scripts/provision.sh [--no-peers] [--pjproject VERSION]
# Environment:
#   SWIFT_PJSUA_PJPROJECT_TARBALL  path of pjproject-2.17.tar.gz (upstream's release archive)
#   SWIFT_PJSUA_CACHE              cache folder for source archives (/var/cache/swift-pjsua)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cache=${SWIFT_PJSUA_CACHE:-/var/cache/swift-pjsua}

# The pinned pjproject: upstream's release archive of tag 2.17.
pin_version=2.17
pin_sha256=065fe06c06788d97c35f563796d59f00ce52fe9558a52d7b490a042a966facce
pin_url=https://github.com/pjsip/pjproject/archive/refs/tags/$pin_version.tar.gz
# The fallback: the pjproject 2.12.1 tree inside Debian bookworm's ring source package.
ring_version=20230206.0~ds2-1.1+deb12u1
ring_pj_version=2.12.1

want_peers=1
explicit=""
while [ $# -gt 0 ]; do
    case "$1" in
        --no-peers) want_peers=0 ;;
        --pjproject) [ $# -ge 2 ] || { printf '[provision] error: --pjproject needs a version\n' >&2; exit 64; }
                     explicit=$2; shift ;;
        --pjproject=*) explicit=${1#--pjproject=} ;;
        *) printf '[provision] error: unknown argument %s\n' "$1" >&2; exit 64 ;;
    esac
    shift
done

say() { printf '[provision] %s\n' "$*"; }
warn() { printf '[provision] warning: %s\n' "$*" >&2; }
die() { printf '[provision] error: %s\n' "$*" >&2; exit 1; }

# A variant: 2.17-noipv6 is 2.17 built with PJ_HAS_IPV6 0, to test what the engine does
# in a pjproject without IPv6 (as some distributions build it).
variant=""
case "$explicit" in
    "") prefix=/usr/local ;;
    "$pin_version" | "$ring_pj_version") prefix=/opt/swift-pjsua/pjproject-$explicit ;;
    "$pin_version-noipv6") prefix=/opt/swift-pjsua/pjproject-$explicit; variant=noipv6; explicit=$pin_version ;;
    "$pin_version-asan") prefix=/opt/swift-pjsua/pjproject-$explicit; variant=asan; explicit=$pin_version ;;
    "$pin_version-ios") prefix=/opt/swift-pjsua/pjproject-$explicit; variant=ios; explicit=$pin_version ;;
    *) die "--pjproject takes $pin_version, $ring_pj_version, $pin_version-noipv6, $pin_version-asan or $pin_version-ios, not '$explicit'" ;;
esac
pcdir=$prefix/lib/pkgconfig
stamp=$prefix/share/swift-pjsua/pjproject.stamp
manifest=$prefix/share/swift-pjsua/pjproject.files

# --- Debian packages ---------------------------------------------------------
build_pkgs=(build-essential pkg-config libasound2-dev libssl-dev libopus-dev libsrtp2-dev
            libspeex-dev libspeexdsp-dev libgsm1-dev uuid-dev xz-utils ca-certificates curl)
# espeak-ng: the IVR example's --say prompt, which a test exercises.
# baresip-core: baresip 1.0, the real user agent of the interop tests.
peer_pkgs=(sip-tester kamailio kamailio-tls-modules kamailio-presence-modules sox espeak-ng openssl procps iproute2
           python3 util-linux baresip-core tmux)
# dnsmasq-base: the DNS server (A and SRV records) of the DNS tests, without its system service.
peer_pkgs+=(dnsmasq-base)
# nftables: the NAT boxes of the namespace test bed (masquerade, 1:1 NAT, inbound filter).
peer_pkgs+=(nftables)
# coturn: the STUN and TURN server of the ICE tests.
peer_pkgs+=(coturn)
# tshark: captures of RTP on the wire, to show SRTP carries no plaintext.
peer_pkgs+=(tshark)
# tayga and unbound: the NAT64 gateway and the DNS64 resolver of the IPv6-only test bed.
peer_pkgs+=(tayga unbound)

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

# The build recipe: a change to any of these rebuilds a pjproject this script installed.
configure_flags=(--enable-shared --enable-epoll --disable-video
    --disable-libwebrtc --disable-libyuv --with-external-srtp --with-external-gsm
    --with-external-speex --disable-ilbc-codec --disable-g7221-codec
    --disable-sdl --disable-ffmpeg --disable-v4l2 --disable-openh264)
# The ios variant: video compiled in (PJMEDIA_HAS_VIDEO 1 in its config_site, no video
# library), and none of the codecs the pinned xcframework lacks.
if [ "$variant" = ios ]; then
    ios_flags=()
    for f in "${configure_flags[@]}"; do [ "$f" = --disable-video ] || ios_flags+=("$f"); done
    configure_flags=("${ios_flags[@]}" --disable-vpx --disable-bcg729 --disable-opus --disable-speex-codec
        --disable-speex-aec --disable-gsm-codec)
fi
config_site() {
    cat "$here/provision/config_site.h"
    if [ "$variant" = noipv6 ]; then
        printf '\n/* The noipv6 variant, for testing a pjproject built without IPv6. */\n'
        printf '#undef PJ_HAS_IPV6\n#define PJ_HAS_IPV6 0\n'
    fi
    if [ "$variant" = ios ]; then
        printf '\n'
        cat "$here/provision/config_site-ios.h"
    fi
    if [ "$variant" = asan ]; then
        printf '\n/* The asan variant: built with -fsanitize=address (pools as usual). */\n'
    fi
}
# The compiler and flags. The asan variant: ASan instruments pjproject's own code, and the
# libraries leave the runtime to the executable that loads them (swift's -sanitize=address
# links clang's); GCC's libasan would be a second, conflicting runtime, so clang it is.
build_cc=""
build_cxx=""
build_cflags='-O2 -fPIC'
build_ldflags=""
if [ "$variant" = asan ]; then
    build_cc=$(command -v clang || true)
    build_cxx=$(command -v clang++ || true)
    build_cflags='-O1 -g -fPIC -fsanitize=address -fno-omit-frame-pointer'
    build_ldflags='-fsanitize=address'
fi
recipe_hash() {
    { config_site; echo "${configure_flags[*]}"; echo "$prefix"
      [ "$variant" != asan ] || echo "$build_cc $build_cxx $build_cflags $build_ldflags"; } | sha256sum | cut -c1-16
}

# pkg-config as the build will see it (an explicit version looks only in its own prefix).
pc() {
    if [ -n "$explicit" ]; then PKG_CONFIG_PATH=$pcdir PKG_CONFIG_LIBDIR=$pcdir pkg-config "$@"
    else PKG_CONFIG_PATH="${PKG_CONFIG_PATH:+$PKG_CONFIG_PATH:}$pcdir" pkg-config "$@"; fi
}
have_pjproject() { command -v pkg-config >/dev/null && pc --atleast-version=2.12 libpjproject 2>/dev/null; }

# Ours: built by this script (its config_site.h is installed with the headers).
is_ours() {
    local inc
    inc=$(pc --variable=includedir libpjproject 2>/dev/null) || return 1
    grep -qs SWIFT_PJSUA_CONFIG_SITE_H "$inc/pj/config_site.h"
}
stamp_matches() { # version
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$1 $(recipe_hash)" ]
}

if command -v dpkg-query >/dev/null; then
    mapfile -t need < <(missing_pkgs "${build_pkgs[@]}")
    if [ -z "$explicit" ] && have_pjproject && ! is_ours; then need=(); mapfile -t need < <(missing_pkgs pkg-config); fi
    if [ $want_peers = 1 ]; then mapfile -t -O "${#need[@]}" need < <(missing_pkgs "${peer_pkgs[@]}"); fi
    apt_install "${need[@]}"
    # Debian enables kamailio's and unbound's services on install; the tests start their own.
    for service in kamailio unbound; do
        if [ $want_peers = 1 ] && command -v systemctl >/dev/null && systemctl is-active -q $service 2>/dev/null; then
            systemctl stop $service || true
        fi
    done
else
    say "not a Debian system: make sure a C toolchain, pkg-config, sipp, kamailio, sox and espeak-ng are installed"
fi

app_note() {
    [ -x "$(pc --variable=prefix libpjproject)/bin/pjsua" ] \
        || say "note: no C 'pjsua' app in $(pc --variable=prefix libpjproject)/bin; the benchmarks skip it"
}

# --- pjproject: what is there already ----------------------------------------
# Yours: not built by this script, or built by it for another prefix (a --pjproject one
# named on PKG_CONFIG_PATH): used as it is, as the build will find it.
if [ -z "$explicit" ] && have_pjproject && { ! is_ours || [ "$(pc --variable=prefix libpjproject)" != "$prefix" ]; }; then
    say "using your pjproject $(pc --modversion libpjproject) ($(pc --variable=prefix libpjproject)), found by pkg-config"
    app_note
    exit 0
fi
if have_pjproject && is_ours && stamp_matches "$pin_version"; then
    say "pjproject $(pc --modversion libpjproject) in $prefix is current"
    exit 0
fi

# --- pjproject: find the source ----------------------------------------------
# Prints the path of a verified 2.17 archive, or nothing.
verified() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$pin_sha256" ]; }
find_pin_tarball() {
    local given=${SWIFT_PJSUA_PJPROJECT_TARBALL:-} cached=$cache/pjproject-$pin_version.tar.gz
    if [ -n "$given" ]; then
        if verified "$given"; then echo "$given"; return; fi
        warn "SWIFT_PJSUA_PJPROJECT_TARBALL=$given is missing or its sha256 is not $pin_sha256"
    fi
    if verified "$cached"; then echo "$cached"; return; fi
    if command -v curl >/dev/null; then
        say "downloading pjproject $pin_version from $pin_url" >&2
        mkdir -p "$cache"
        if curl -fsSL --connect-timeout 15 --max-time 600 -o "$cached.part" "$pin_url" 2>/dev/null \
            && verified "$cached.part"; then
            mv "$cached.part" "$cached"; echo "$cached"; return
        fi
        rm -f "$cached.part"
        warn "could not download a pjproject $pin_version archive with sha256 $pin_sha256"
    fi
}

fetch_ring_tarball() {
    local src_tar apt_tmp
    src_tar=$(ls "$cache"/ring_*.orig.tar.* 2>/dev/null | head -n1 || true)
    if [ -n "$src_tar" ]; then echo "$src_tar"; return; fi
    say "fetching Debian source package ring=$ring_version (carries pjproject $ring_pj_version)" >&2
    apt_tmp=$(mktemp -d)
    mkdir -p "$apt_tmp/lists/partial" "$apt_tmp/cache/archives/partial" "$apt_tmp/src" "$cache"
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
    local apt_opts=(-o APT::Sandbox::User=root -o "Dir::Etc::SourceList=$apt_tmp/sources.list"
              -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$apt_tmp/lists" -o "Dir::Cache=$apt_tmp/cache")
    apt-get "${apt_opts[@]}" update -qq >&2 || die "apt-get update (deb-src) failed"
    (cd "$apt_tmp/src" && apt-get "${apt_opts[@]}" source --download-only -qq "ring=$ring_version" >&2) \
        || (cd "$apt_tmp/src" && apt-get "${apt_opts[@]}" source --download-only -qq ring >&2) \
        || die "apt-get source ring failed"
    src_tar=$(ls "$apt_tmp/src"/ring_*.orig.tar.* 2>/dev/null | head -n1)
    [ -n "$src_tar" ] || die "ring source package has no orig tarball"
    cp "$src_tar" "$cache/"
    rm -rf "$apt_tmp"
    echo "$cache/$(basename "$src_tar")"
}

command -v apt-get >/dev/null || [ -n "${SWIFT_PJSUA_PJPROJECT_TARBALL:-}" ] \
    || die "no pjproject >= 2.12 found by pkg-config; install one (or set PKG_CONFIG_PATH) and run again"
[ "$(id -u)" = 0 ] || die "building pjproject into $prefix needs root (or install your own pjproject and set PKG_CONFIG_PATH)"

version=""
tarball=""
if [ "$explicit" != "$ring_pj_version" ]; then
    tarball=$(find_pin_tarball)
    [ -n "$tarball" ] && version=$pin_version
fi
if [ -z "$version" ]; then
    [ "$explicit" = "$pin_version" ] && die "no pjproject $pin_version archive: set SWIFT_PJSUA_PJPROJECT_TARBALL to upstream's pjproject-$pin_version.tar.gz"
    if [ -z "$explicit" ]; then
        warn "no pjproject $pin_version archive could be had: falling back to pjproject $ring_pj_version from Debian's ring package."
        warn "$ring_pj_version lacks a dozen security fixes in the SIP, SDP, STUN, DNS and RTP/SRTP parsers,"
        warn "pjmedia's media-worker stall fix (so RTP runs on the SIP worker) and the APIs of 2.13-2.17;"
        warn "set SWIFT_PJSUA_PJPROJECT_TARBALL to upstream's pjproject-$pin_version.tar.gz to move to $pin_version."
    fi
    if have_pjproject && is_ours && stamp_matches "$ring_pj_version"; then
        say "pjproject $(pc --modversion libpjproject) in $prefix is current"
        exit 0
    fi
    version=$ring_pj_version
fi

# --- pjproject: build and install --------------------------------------------
build=$(mktemp -d /tmp/pjproject-build.XXXXXX)
trap 'rm -rf "$build"' EXIT
if [ "$version" = "$pin_version" ]; then
    say "unpacking pjproject $version from $tarball"
    tar -xzf "$tarball" -C "$build" || die "could not unpack $tarball"
else
    ring_tar=$(fetch_ring_tarball)
    say "unpacking pjproject $version from $(basename "$ring_tar")"
    tar -xf "$ring_tar" -C "$build" --wildcards '*/daemon/contrib/tarballs-unpacked/pjproject-*' \
        || die "no pjproject tree in $ring_tar"
fi
pjdir=$(find "$build" -mindepth 1 -maxdepth 8 -type f -name aconfigure -path '*pjproject-*' -printf '%h\n' | head -n1)
[ -n "$pjdir" ] || die "pjproject tree not found after unpacking"

say "building pjproject $version for $prefix (a minute or two on 2 cores)"
config_site > "$pjdir/pjlib/include/pj/config_site.h"
log="$build/build.log"
stage="$build/stage"
ldflags=$build_ldflags
[ "$prefix" = /usr/local ] || ldflags="$ldflags -Wl,-rpath,$prefix/lib"
if [ "$variant" = asan ]; then
    [ -n "$build_cc" ] && [ -n "$build_cxx" ] || die "the asan variant needs clang and clang++ (the Swift toolchain's) on PATH"
    say "compilers: $build_cc and $build_cxx with $build_cflags"
fi
(
    cd "$pjdir"
    chmod +x configure aconfigure 2>/dev/null || true
    # Both compilers: pjproject links its libraries with the C++ one (for pjsua2), and
    # g++ -fsanitize=address would link GCC's libasan into every libpj*.so.
    ./configure --prefix="$prefix" "${configure_flags[@]}" ${build_cc:+CC="$build_cc"} ${build_cxx:+CXX="$build_cxx"} \
        CFLAGS="$build_cflags" LDFLAGS="$ldflags" 2>&1
    make dep 2>&1
    make -j"$(nproc)" 2>&1
    make install DESTDIR="$stage" 2>&1
) >"$log" || { tail -n 40 "$log" >&2; cp "$log" /tmp/pjproject-build.log; die "pjproject build failed (log: /tmp/pjproject-build.log)"; }

app=$(ls "$pjdir"/pjsip-apps/bin/pjsua-* 2>/dev/null | head -n1)
if [ -n "$app" ]; then install -D -m 0755 "$app" "$stage$prefix/bin/pjsua"; else warn "the C pjsua app was not built"; fi

# Remove what an earlier install of ours left (its manifest, or for installs made before
# manifests existed, pjproject's own names), then copy the new tree in.
if [ -f "$manifest" ]; then
    while IFS= read -r f; do rm -f "$prefix/$f"; done < "$manifest"
elif is_ours 2>/dev/null; then
    rm -rf "$prefix"/include/{pj,pjlib-util,pjmedia,pjmedia-audiodev,pjmedia-codec,pjmedia-videodev,pjnath,pjsip,pjsip-simple,pjsip-ua,pjsua-lib,pjsua2}
    rm -f "$prefix"/include/{pjlib,pjlib-util,pjmedia,pjmedia-codec,pjmedia_audiodev,pjmedia_videodev,pjnath,pjsip,pjsip_auth,pjsip_simple,pjsip_ua,pjsua}.h \
          "$prefix"/include/pjsua2.hpp "$prefix"/lib/libpj*.{so,a} "$prefix"/lib/libpj*.so.* \
          "$prefix"/lib/libresample*.{so,a} "$prefix"/lib/libresample*.so.* "$pcdir/libpjproject.pc" "$prefix/bin/pjsua"
fi
mkdir -p "$prefix/share/swift-pjsua"
(cd "$stage$prefix" && find . -type f -o -type l | sed 's|^\./||' | sort) > "$manifest.new"
cp -a "$stage$prefix/." "$prefix/"
mv "$manifest.new" "$manifest"
echo "$version $(recipe_hash)" > "$stamp"
[ "$prefix" = /usr/local ] && ldconfig
have_pjproject || die "pjproject installed but pkg-config still does not find libpjproject in $pcdir"
say "installed pjproject $(pc --modversion libpjproject) under $prefix"
