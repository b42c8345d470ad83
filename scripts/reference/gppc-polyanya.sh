#!/usr/bin/env bash
# Times a GPPC 2023 any-angle entry, by default "Polyanya on a merged
# constrained Delaunay mesh" (anyangle/2023/Polyanya_MCDT of
# https://github.com/gppc-dev/algorithm-archive), on the queries exported by
# `cargo run --release --example compare -- --export-queries DIR` and prints a
# reference file in the format `compare --reference` reads. See
# scripts/reference/README.md.
#
# Usage: scripts/reference/gppc-polyanya.sh QUERIES_DIR [MAP_DIR] > reference.txt
#        scripts/reference/gppc-polyanya.sh MAP.map... > reference.txt   (every query of MAP.map.scen)
#
# The entry is cloned at a pinned commit into a cache directory outside this
# repository and built there with gppc/gppc_harness.cpp; nothing is written into
# the repository.
#
# Environment:
#   ENTRY         the entry directory under anyangle/2023: Polyanya_MCDT
#                 (default) or Polyanya_Rec (Polyanya on a mesh of rectangles)
#   GPPC_DIR      an existing checkout of the archive (or of the entry
#                 directory itself) to use instead of the cache; nothing is fetched
#   XDG_CACHE_HOME  cache root (default ~/.cache); the clone is
#                 $XDG_CACHE_HOME/bevy_anyangle/gppc-archive, the build
#                 $XDG_CACHE_HOME/bevy_anyangle/gppc-build/ENTRY-*, and the
#                 entry's preprocessing files go to a temporary directory beside
#                 them, removed at exit
#   R, WARMUP, DUMP, VALIDATE  passed to the harness (see gppc/gppc_harness.cpp)
#   CXX           the C++ compiler cmake uses (default: cmake's choice, c++)
#   JOBS          parallel compile jobs (default: nproc)
#   IDLE_WAIT     seconds to wait, before each map, for the machine to be idle
#                 (default 0: only warn when it is busy)
set -euo pipefail

COMMIT=1a381df772f294cf72654519dcd6b1ce074c9df7
URL=${GPPC_URL:-https://github.com/gppc-dev/algorithm-archive}
ENTRY=${ENTRY:-Polyanya_MCDT}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/bevy_anyangle
ME=$(basename "$0")

die() { echo "$ME: $*" >&2; exit 1; }
usage() {
  echo "usage: $0 QUERIES_DIR [MAP_DIR] > reference.txt" >&2
  echo "       $0 MAP.map... > reference.txt   (every query of MAP.map.scen)" >&2
  echo "       (ENTRY=Polyanya_Rec for the rectangle-mesh variant)" >&2
  exit 2
}

[ $# -ge 1 ] || usage
case $1 in -h|--help) usage ;; esac
case $ENTRY in
  Polyanya_MCDT|Polyanya_Rec) ;;
  *) die "ENTRY=$ENTRY: expected Polyanya_MCDT or Polyanya_Rec" ;;
esac

# What to run: pairs of (name, map, queries file), one harness process each.
names=() maps=() qfiles=()
tmpfiles=()
cleanup() { [ ${#tmpfiles[@]} -eq 0 ] || rm -rf "${tmpfiles[@]}"; }
trap cleanup EXIT
if [ -d "$1" ]; then
  [ $# -le 2 ] || usage
  qdir=$1
  mapdir=${2:-$ROOT/data/maps}
  [ -d "$mapdir" ] || die "$mapdir: no such directory"
  while IFS= read -r f; do
    name=$(basename "$f" .queries)
    [ -f "$mapdir/$name" ] || die "$f: its map $mapdir/$name does not exist"
    names+=("$name"); maps+=("$mapdir/$name"); qfiles+=("$f")
  done < <(find "$qdir" -maxdepth 1 -type f -name '*.map.queries' | LC_ALL=C sort)
  [ ${#names[@]} -gt 0 ] || die "$qdir: no *.map.queries files (write them with compare --export-queries)"
else
  for m in "$@"; do
    case $m in *.map) ;; *) die "$m: expected a directory of *.map.queries or .map files" ;; esac
    [ -f "$m" ] || die "$m: no such file"
    [ -f "$m.scen" ] || die "$m.scen: no such file"
    names+=("$(basename "$m")"); maps+=("$m"); qfiles+=("$m.scen")
  done
fi

# Build tools, installed with apt-get only when missing.
apt_install() {
  local sudo=
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo > /dev/null && sudo -n true 2> /dev/null; then sudo=sudo; else return 1; fi
  fi
  command -v apt-get > /dev/null || return 1
  echo "# installing $* with apt-get" >&2
  $sudo apt-get install -y -qq "$@" > /dev/null 2>&1 ||
    { $sudo apt-get update -qq > /dev/null 2>&1 && $sudo apt-get install -y -qq "$@" > /dev/null 2>&1; }
}
need_tool() { # need_tool COMMAND PACKAGE
  command -v "$1" > /dev/null && return 0
  if ! { apt_install "$2" && command -v "$1" > /dev/null; }; then
    die "'$1' not found and could not be installed: install $2 (e.g. apt-get install $2)"
  fi
}
need_tool cmake cmake
need_tool make make
case ${CXX:-c++} in *clang*) need_tool "$CXX" clang ;; *) need_tool "${CXX:-c++}" g++ ;; esac
cxx=$(command -v "${CXX:-c++}")
# The entry includes <omp.h> and builds with -fopenmp: GCC ships it, clang
# needs libomp-dev.
omp_ok() { echo '#include <omp.h>
int main() { return omp_get_max_threads() > 0 ? 0 : 1; }' |
  "$cxx" -fopenmp -x c++ - -o /dev/null > /dev/null 2>&1; }
if ! omp_ok && ! { apt_install libomp-dev && omp_ok; }; then
  die "$cxx cannot build OpenMP code (-fopenmp, <omp.h>): install libomp-dev (clang) or use g++"
fi

# The entry's sources, at the pinned commit.
dir=anyangle/2023/$ENTRY
if [ -n "${GPPC_DIR:-}" ]; then
  if [ -f "$GPPC_DIR/$dir/Entry.cpp" ]; then
    src=$GPPC_DIR entry=$GPPC_DIR/$dir
  elif [ -f "$GPPC_DIR/Entry.cpp" ]; then
    src=$GPPC_DIR entry=$GPPC_DIR
  else
    die "GPPC_DIR=$GPPC_DIR has neither $dir/Entry.cpp nor Entry.cpp"
  fi
else
  src=$CACHE/gppc-archive entry=$CACHE/gppc-archive/$dir
  need_tool git git
  if [ ! -d "$src/.git" ]; then
    echo "# fetching $URL at $COMMIT ($dir only) into $src" >&2
    mkdir -p "$CACHE"
    tmp=$(mktemp -d "$CACHE/gppc-archive.tmp.XXXXXX")
    tmpfiles+=("$tmp")
    # Only the entry's directory is needed (the archive holds every entry and
    # its maps): a blobless clone checked out sparsely, or a full one if that fails.
    git clone --quiet --filter=blob:none --no-checkout "$URL" "$tmp" 2> /dev/null ||
      { rm -rf "$tmp"; git clone --quiet --no-checkout "$URL" "$tmp"; }
    git -C "$tmp" sparse-checkout set "$dir" 2> /dev/null || true
    git -C "$tmp" -c advice.detachedHead=false checkout --quiet "$COMMIT"
    mv "$tmp" "$src"
  else
    if [ "$(git -C "$src" rev-parse HEAD)" != "$COMMIT" ]; then
      echo "# moving $src to $COMMIT" >&2
      git -C "$src" cat-file -e "$COMMIT^{commit}" 2> /dev/null || git -C "$src" fetch --quiet origin
      git -C "$src" -c advice.detachedHead=false checkout --quiet "$COMMIT"
    fi
    if [ ! -f "$entry/Entry.cpp" ]; then # a clone made for the other entry
      echo "# adding $dir to the sparse checkout in $src" >&2
      git -C "$src" sparse-checkout add "$dir"
    fi
  fi
  [ -f "$entry/Entry.cpp" ] || die "$entry/Entry.cpp is missing after the checkout"
fi
entry=$(cd "$entry" && pwd)
# Provenance: the commit actually used, and whether the entry's files in the
# work tree are exactly that commit's.
if head=$(git -C "$src" rev-parse HEAD 2> /dev/null) && rel=$(git -C "$entry" rev-parse --show-prefix 2> /dev/null); then
  [ "$head" = "$COMMIT" ] || echo "# WARNING: $src is at $head, not the pinned $COMMIT" >&2
  top=$(git -C "$entry" rev-parse --show-toplevel)
  committed=$(git -C "$top" ls-tree -r HEAD -- "$rel" | awk '{print $3, $4}' | LC_ALL=C sort)
  present=$(cd "$top" && git ls-tree -r --name-only HEAD -- "$rel" | while IFS= read -r f; do
    [ -f "$f" ] && printf '%s %s\n' "$(git hash-object "$f")" "$f"; done | LC_ALL=C sort)
  if [ "$committed" != "$present" ]; then
    echo "# WARNING: files under $entry differ from commit $head" >&2
    head="$head (modified)"
  fi
else
  head="unknown (not a git checkout: $entry)"
fi

# Build the entry with the harness outside the repository (kept between runs:
# make rebuilds what changed).
key=$(printf '%s' "$entry" | cksum | cut -d' ' -f1)
build=$CACHE/gppc-build/$ENTRY-$key
mkdir -p "$build"
echo "# building $ENTRY with the harness in $build" >&2
cmake -S "$HERE/gppc" -B "$build" -DENTRY_DIR="$entry" -DCMAKE_BUILD_TYPE=Release > "$build/cmake.log" 2>&1 ||
  { cat "$build/cmake.log" >&2; die "cmake failed"; }
cmake --build "$build" -j "${JOBS:-$(nproc)}" > "$build/build.log" 2>&1 ||
  { tail -n 60 "$build/build.log" >&2; die "the entry or the harness did not compile (log: $build/build.log)"; }
exe=$build/gppc_harness
compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
compiler_version=$("${compiler:-$cxx}" --version 2> /dev/null | head -n 1)

work=$(mktemp -d "$CACHE/gppc-work.XXXXXX")
tmpfiles+=("$work")

# Whole-machine CPU use over 1 s, in % of one core.
busy() {
  local a b c d e f g t1 i1 t2 i2
  read -r _ a b c d e f g _ < /proc/stat; t1=$((a+b+c+d+e+f+g)); i1=$((d+e))
  sleep 1
  read -r _ a b c d e f g _ < /proc/stat; t2=$((a+b+c+d+e+f+g)); i2=$((d+e))
  echo $(( ((t2-t1) - (i2-i1)) * 100 * $(nproc) / (t2-t1 > 0 ? t2-t1 : 1) ))
}
check_idle() {
  [ -r /proc/stat ] || return 0
  local waited=0 b
  while b=$(busy); [ "$b" -ge 25 ]; do
    if [ "$waited" -ge "${IDLE_WAIT:-0}" ]; then
      echo "# WARNING: the machine is busy (${b}% of a core) before $1; timings may suffer" >&2
      return 0
    fi
    sleep 4; waited=$((waited + 5))
  done
}

if [ -n "${DUMP:-}" ]; then
  mkdir -p "$DUMP"
  DUMP=$(cd "$DUMP" && pwd)
  export DUMP
fi

echo "# GPPC 2023 $ENTRY (gppc-dev/algorithm-archive $head, $dir), $(date -u '+%Y-%m-%d %H:%M UTC'), $compiler_version, -O3 -DNDEBUG, R=${R:-3}; map n mean_us mean_pops (pops: the entry's SearchInstance::nodes_popped)"
failed=0
for i in "${!names[@]}"; do
  name=${names[$i]} q=${qfiles[$i]}
  if [ "${q%.scen}" != "$q" ]; then
    # A scenario: columns 5-8 are the start and goal cells, taken as vertices.
    tq=$work/$name.queries
    awk 'NF >= 9 && $1 != "version" {print $5, $6, $7, $8}' "$q" > "$tq"
    q=$tq
  fi
  check_idle "$name"
  rc=0
  # Results on fd 3; the entry's (and its library's) own output on fd 1 to a log.
  RESULT_FD=3 "$exe" "$name" "${maps[$i]}" "$q" "$work" 3>&1 >> "$work/entry.log" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "# $name: the harness failed (exit status $rc); no line written"
    echo "# WARNING $name: the harness failed (exit status $rc); the entry's last output:" >&2
    tail -n 5 "$work/entry.log" 2> /dev/null | sed 's/^/#   /' >&2 || true
    failed=$((failed + 1))
  fi
  rm -f "$work/${name%.map}".*
done
[ "$failed" -eq 0 ] || die "$failed of ${#names[@]} maps failed"
