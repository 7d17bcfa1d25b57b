#!/usr/bin/env bash
# simgrid-newest.sh: strata built against the newest SimGrid Debian offers, and
# its outputs compared with those of the tested build. A report, never a
# failure: it exits 0 whatever it finds (2 on bad usage only), and prints
# "simgrid-newest: SKIP: REASON" when it cannot try (no network, not Debian).
#
#   scripts/simgrid-newest.sh [TESTED_BIN]     (default: build/strata)
#
# How it gets SimGrid: Debian's own binary packages of the newest suite
# (unstable; STRATA_SG_SUITE=trixie etc. to pick another, STRATA_SG_MIRROR for
# another mirror), fetched with apt-get through a private configuration (its
# own source list, package lists and cache under the work folder; the
# system's apt state is not touched, nothing is installed), unpacked with
# dpkg-deb into a folder: libsimgrid-dev (headers, simgrid.pc), the library
# and every library it needs, recursively, down to that suite's C library and
# dynamic loader. A newer suite's SimGrid needs a newer glibc and libstdc++
# than Debian 12's, so strata is linked to run under that suite's loader
# (--dynamic-linker, and an RPATH to the unpacked libraries): nothing to
# compile but strata itself, about 20 MB to fetch. (Building SimGrid from
# Debian's source package is the other way; it takes far longer, and the
# source packages were not reachable from the machine this was written on.)
#
# What it does, in the work folder (STRATA_SG_WORK, default build-simgrid-newest):
#   1. fetch and unpack SimGrid (kept for the next run while the version holds)
#   2. configure and build strata with -DSTRATA_SIMGRID_UNTESTED=ON
#      -DSTRATA_WERROR=OFF (an untested SimGrid may deprecate what strata
#      uses: the warnings are counted and the first few shown)
#   3. run the route-agreement test (test_engine_sg_build) with it
#   4. run scripts/golden.sh with TESTED_BIN and with the new binary, and
#      compare: how many files differ, and for the first few, how
# Each step reports and the script goes on where it can; times are printed.
# On the 2-core development machine: about 4.5 minutes in all (10 s to fetch
# and unpack, 1 min to build without ccache, 3 to 4 min for the two golden
# runs), about 450 MB of disk in the work folder.
# scripts/simgrid-newest.sh --report TESTED_DIR NEWEST_DIR reports on two
# golden folders already made (step 4's report alone).
set -u -o pipefail
export LC_ALL=C
SELF=$(readlink -f "$0")
ROOT=$(cd "$(dirname "$SELF")/.." && pwd)
TESTED=${1:-$ROOT/build/strata}
SUITE=${STRATA_SG_SUITE:-unstable}
MIRROR=${STRATA_SG_MIRROR:-http://deb.debian.org/debian}
WORK=${STRATA_SG_WORK:-$ROOT/build-simgrid-newest}
SHOW=5   # differing files shown in detail

case $TESTED in -h|--help) sed -n '2,36p' "$SELF" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
[ $# -le 1 ] || [ "$1" = --report ] || { echo "usage: scripts/simgrid-newest.sh [TESTED_BIN]" >&2; exit 2; }

say() { echo "simgrid-newest: $*"; }
skip() { say "SKIP: $*"; exit 0; }
t0=$SECONDS   # the start of the current step

# report_goldens TESTED NEWEST: jobs whose exit status changed (with their
# commonest first error line), then the files that differ among the jobs
# that kept theirs: by kind of job, and the first few line by line.
report_goldens() {
    local t=$1 n=$2 f job
    : >"$WORK/status-changed.txt"; : >"$WORK/differ.txt"
    for f in "$t"/*.rc; do
        job=$(basename "$f" .rc)
        cmp -s "$f" "$n/$job.rc" || echo "$job $(cat "$f") -> $(cat "$n/$job.rc" 2>/dev/null || echo none)" \
            >>"$WORK/status-changed.txt"
    done
    if [ -s "$WORK/status-changed.txt" ]; then
        say "$(wc -l <"$WORK/status-changed.txt") jobs changed exit status (tested -> newest: how many):"
        cut -d' ' -f2- "$WORK/status-changed.txt" | sort | uniq -c | sort -rn | head -"$SHOW" | sed 's/^/    /'
        say "their commonest first error lines (file names as X):"
        while read -r job _; do head -1 "$n/$job.err" 2>/dev/null; done <"$WORK/status-changed.txt" |
            sed -E 's#configs/hw/[^ :]*#X#g; s#out/[^ :]*#X#g' | cut -c1-200 | sort | uniq -c | sort -rn |
            head -3 | sed 's/^/    /'
    fi
    grep -E '^differs: ' "$WORK/compare.log" | sed 's/^differs: //' | while IFS= read -r f; do
        job=$(sed -E 's#\.(rc|out|err|json|timeline\.json|trace|sweep/.*)$##' <<<"$f")
        awk -v j="$job" '$1 == j {found = 1} END {exit !found}' "$WORK/status-changed.txt" || echo "$f"
    done >"$WORK/differ.txt"
    [ -s "$WORK/differ.txt" ] || { say "no other file differs"; return; }
    say "$(wc -l <"$WORK/differ.txt") files differ among the jobs that kept their exit status, by kind of job:"
    cut -d. -f1,2 "$WORK/differ.txt" | sort | uniq -c | sort -rn | head -12 | sed 's/^/    /'
    say "the first $SHOW, line by line:"
    head -"$SHOW" "$WORK/differ.txt" | while IFS= read -r f; do
        echo "  $f: $(diff "$t/$f" "$n/$f" | grep -c '^[<>]') lines differ; the first:"
        diff "$t/$f" "$n/$f" | grep '^[<>]' | head -4 | cut -c1-160 | sed 's/^/    /'
    done
}

if [ "$TESTED" = --report ]; then
    [ $# -eq 3 ] && [ -d "$2" ] && [ -d "$3" ] || { echo "usage: scripts/simgrid-newest.sh --report DIR DIR" >&2; exit 2; }
    mkdir -p "$WORK" && bash "$ROOT/scripts/golden.sh" --compare "$2" "$3" >"$WORK/compare.log"
    say "REPORT: $(head -1 "$WORK/compare.log")"
    report_goldens "$2" "$3"
    exit 0
fi

[ -x "$TESTED" ] || skip "no tested build at $TESTED (build strata first)"
for tool in apt-get apt-cache dpkg-deb dpkg cmake; do
    command -v "$tool" >/dev/null || skip "$tool not found (a Debian machine is needed)"
done
ARCH=$(dpkg --print-architecture)
TRIPLET=$(gcc -print-multiarch 2>/dev/null || echo "")
[ -n "$TRIPLET" ] || skip "gcc -print-multiarch gave nothing"
mkdir -p "$WORK" || skip "cannot make $WORK"
WORK=$(cd "$WORK" && pwd)

# ---- 1. SimGrid from Debian -------------------------------------------------
APT=$WORK/apt
mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/etc/preferences.d" "$WORK/debs"
echo "deb [arch=$ARCH] $MIRROR $SUITE main" >"$APT/etc/sources.list"
APT_OPTS=(-o "Dir::Etc::SourceList=$APT/etc/sources.list" -o "Dir::Etc::SourceParts=-"
          -o "Dir::Etc::PreferencesParts=$APT/etc/preferences.d" -o "Dir::State::Lists=$APT/lists"
          -o "Dir::Cache=$APT/cache" -o "Dir::State::Status=/dev/null" -o "APT::Sandbox::User=$(id -un)"
          -o "Acquire::Retries=2")
say "fetching the package lists of Debian $SUITE from $MIRROR"
if ! out=$(timeout 600 apt-get "${APT_OPTS[@]}" update 2>&1) || grep -q '^[EW]: Failed to fetch' <<<"$out"; then
    skip "apt-get update of $MIRROR $SUITE failed (network?): $(grep -m1 -A1 -E '^(E|W|Err)' <<<"$out" | tr -s ' \n' ' ')"
fi
dev=$(apt-cache "${APT_OPTS[@]}" show --no-all-versions libsimgrid-dev 2>/dev/null)
version=$(sed -n 's/^Version: //p' <<<"$dev")
lib=$(grep -o 'libsimgrid[0-9][0-9.]*' <<<"$(sed -n 's/^Depends: //p' <<<"$dev")" | head -1)
[ -n "$version" ] && [ -n "$lib" ] || skip "Debian $SUITE has no libsimgrid-dev for $ARCH"
say "Debian $SUITE offers SimGrid $version (libsimgrid-dev, $lib); tested build: $("$TESTED" --version 2>&1 | head -1), SimGrid $(pkg-config --modversion simgrid 2>/dev/null || echo '?')"
SG=$WORK/simgrid-$version
if [ ! -f "$SG/.complete" ]; then
    rm -rf "$SG" "$WORK/debs" && mkdir -p "$SG" "$WORK/debs"
    # the library and everything it needs, down to the C library and its loader
    mapfile -t pkgs < <(apt-cache "${APT_OPTS[@]}" depends --recurse --no-recommends --no-suggests \
        --no-conflicts --no-breaks --no-replaces --no-enhances "$lib" 2>/dev/null | grep -E '^[a-z0-9]' | sort -u)
    (cd "$WORK/debs" && timeout 900 apt-get "${APT_OPTS[@]}" download libsimgrid-dev "${pkgs[@]}" >"$WORK/download.log" 2>&1) ||
        skip "apt-get download failed (network?): $(grep -m1 -E '^(E|Err)' "$WORK/download.log")"
    for deb in "$WORK"/debs/*.deb; do dpkg-deb -x "$deb" "$SG" || skip "dpkg-deb -x $deb failed"; done
    touch "$SG/.complete"
    say "fetched and unpacked $(find "$WORK/debs" -name "*.deb" | wc -l) packages ($(du -sh "$WORK/debs" | cut -f1)) in $((SECONDS - t0)) s"
else
    say "SimGrid $version already unpacked in $SG"
fi
LIBDIR=$SG/usr/lib/$TRIPLET
LOADER=$(find "$SG" -name 'ld-linux*.so.*' -type f -o -name 'ld-linux*.so.*' -type l | head -1)
[ -f "$LIBDIR/pkgconfig/simgrid.pc" ] && [ -n "$LOADER" ] || skip "the unpacked packages lack simgrid.pc or a loader"
mkdir -p "$WORK/pkgconfig"
sed -e "s|^prefix=.*|prefix=$SG/usr|" -e "s|^libdir=.*|libdir=$LIBDIR|" -e "s|^includedir=.*|includedir=$SG/usr/include|" \
    "$LIBDIR/pkgconfig/simgrid.pc" >"$WORK/pkgconfig/simgrid.pc"

# ---- 2. strata against it ----------------------------------------------------
B=$WORK/build
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
say "building strata against SimGrid $version (untested: the pin's override)"
t0=$SECONDS
if ! PKG_CONFIG_PATH=$WORK/pkgconfig cmake -S "$ROOT" -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_CUDA=OFF \
        -DSTRATA_SIMGRID_UNTESTED=ON -DSTRATA_WERROR=OFF "${launcher[@]}" \
        "-DCMAKE_EXE_LINKER_FLAGS=-Wl,--dynamic-linker=$LOADER -Wl,--disable-new-dtags -Wl,-rpath,$LIBDIR -Wl,--allow-shlib-undefined" \
        >"$WORK/configure.log" 2>&1; then
    say "REPORT: configuring against SimGrid $version failed; the end of $WORK/configure.log:"
    tail -15 "$WORK/configure.log"; exit 0
fi
if ! cmake --build "$B" -j"$(nproc)" --target strata test_engine_sg_build >"$WORK/build.log" 2>&1; then
    say "REPORT: strata does not build against SimGrid $version; the first errors ($WORK/build.log):"
    grep -E 'error' "$WORK/build.log" | head -10; exit 0
fi
warnings=$(grep -c 'warning:' "$WORK/build.log")
say "built in $((SECONDS - t0)) s; $warnings compiler warnings; the first distinct ones:"
grep -oE '[^ /]+\.(c|cpp|h):[0-9]+:[0-9]+: warning: .{0,110}' "$WORK/build.log" | awk '!seen[$0]++' | head -"$SHOW" | sed 's/^/    /'

# ---- 3. routes ------------------------------------------------------------------
if "$B/test_engine_sg_build" >"$WORK/routes.log" 2>&1; then
    say "route agreement (test_engine_sg_build): PASS"
else
    say "route agreement (test_engine_sg_build): FAIL: $(grep -c ':F:\|:E:' "$WORK/routes.log") checks; the first:"
    grep -m3 ':F:\|:E:' "$WORK/routes.log" | sed 's/^/    /'
fi

# ---- 4. goldens -------------------------------------------------------------------
for side in tested newest; do rm -rf "$WORK/golden-$side"; done
t0=$SECONDS
say "goldens with the tested build ($TESTED)"
bash "$ROOT/scripts/golden.sh" "$TESTED" "$WORK/golden-tested" >"$WORK/golden-tested.log" 2>&1
say "goldens with SimGrid $version ($B/strata)"
bash "$ROOT/scripts/golden.sh" "$B/strata" "$WORK/golden-newest" >"$WORK/golden-newest.log" 2>&1
say "both golden runs took $((SECONDS - t0)) s"
bash "$ROOT/scripts/golden.sh" --compare "$WORK/golden-tested" "$WORK/golden-newest" >"$WORK/compare.log"
say "REPORT: SimGrid $version against the tested build: $(head -1 "$WORK/compare.log")"
report_goldens "$WORK/golden-tested" "$WORK/golden-newest"
say "outputs kept in $WORK/golden-tested and $WORK/golden-newest (compare.log lists every file)"
exit 0
