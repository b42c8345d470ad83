#!/usr/bin/env bash
# Times the authors' Java implementation of Anya on the queries exported by
# `cargo run --release --example compare -- --export-queries DIR` and prints a
# reference file for `compare --reference`. See scripts/reference/README.md.
#
# Usage: scripts/reference/run.sh QUERIES_DIR [MAP_DIR] > reference.txt
#        scripts/reference/run.sh MAP.map... > reference.txt   (every query of MAP.map.scen)
#
# The reference (https://github.com/xiangzebo/Polyanya, MIT) is cloned at a
# pinned commit into a cache directory outside this repository and compiled
# there with the harness; nothing is written into the repository.
#
# Environment:
#   POLYANYA_DIR  an existing checkout of the reference to use instead of the
#                 cache (nothing is fetched)
#   XDG_CACHE_HOME  cache root (default ~/.cache); the clone is
#                 $XDG_CACHE_HOME/bevy_anyangle/Polyanya, classes are compiled
#                 into a temporary directory beside it and removed at exit
#   R, WARMUP, WARM_MS, DUMP  passed to the harness (see Harness.java)
#   JAVA_FLAGS    JVM flags (default: -Xms2g -Xmx2g -XX:+UseParallelGC -XX:+AlwaysPreTouch)
#   IDLE_WAIT     seconds to wait, before each map, for the machine to be idle
#                 (default 0: only warn when it is busy)
set -euo pipefail

COMMIT=14a95d3b63ae7251e1e5d6f42b34f276e3d3f5c7
URL=${POLYANYA_URL:-https://github.com/xiangzebo/Polyanya}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/bevy_anyangle
JAVA_FLAGS=${JAVA_FLAGS:--Xms2g -Xmx2g -XX:+UseParallelGC -XX:+AlwaysPreTouch}

die() { echo "run.sh: $*" >&2; exit 1; }
usage() {
  echo "usage: $0 QUERIES_DIR [MAP_DIR] > reference.txt" >&2
  echo "       $0 MAP.map... > reference.txt   (every query of MAP.map.scen)" >&2
  exit 2
}

[ $# -ge 1 ] || usage
case $1 in -h|--help) usage ;; esac

for tool in java javac; do
  command -v "$tool" > /dev/null ||
    die "'$tool' not found: a JDK is needed (e.g. apt-get install openjdk-17-jdk-headless)"
done

# What to run: one harness invocation (one JVM) per map.
jobs=()
if [ -d "$1" ]; then
  [ $# -le 2 ] || usage
  qdir=$1
  mapdir=${2:-$ROOT/data/maps}
  [ -d "$mapdir" ] || die "$mapdir: no such directory"
  while IFS= read -r f; do jobs+=("$f"); done < <(
    find "$qdir" -maxdepth 1 -type f -name '*.map.queries' | LC_ALL=C sort)
  [ ${#jobs[@]} -gt 0 ] || die "$qdir: no *.map.queries files (write them with compare --export-queries)"
else
  mapdir=
  for m in "$@"; do
    case $m in *.map) ;; *) die "$m: expected a directory of *.map.queries or .map files" ;; esac
    [ -f "$m" ] || die "$m: no such file"
    [ -f "$m.scen" ] || die "$m.scen: no such file"
    jobs+=("$m")
  done
fi

# The reference's sources, at the pinned commit.
if [ -n "${POLYANYA_DIR:-}" ]; then
  src=$POLYANYA_DIR
  [ -d "$src/anyangle/anya" ] || die "POLYANYA_DIR=$src has no anyangle/anya directory"
else
  src=$CACHE/Polyanya
  command -v git > /dev/null || die "'git' not found: needed to fetch the reference"
  if [ ! -d "$src/.git" ]; then
    echo "# fetching $URL at $COMMIT into $src" >&2
    mkdir -p "$CACHE"
    tmp=$(mktemp -d "$CACHE/Polyanya.tmp.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    # Only anyangle/anya is needed (the repository is ~400 MB with its maps):
    # a blobless clone checked out sparsely, or a full one if that fails.
    git clone --quiet --filter=blob:none --no-checkout "$URL" "$tmp" 2> /dev/null ||
      { rm -rf "$tmp"; git clone --quiet --no-checkout "$URL" "$tmp"; }
    git -C "$tmp" sparse-checkout set anyangle/anya 2> /dev/null || true
    git -C "$tmp" -c advice.detachedHead=false checkout --quiet "$COMMIT"
    mv "$tmp" "$src"
    trap - EXIT
  elif [ "$(git -C "$src" rev-parse HEAD)" != "$COMMIT" ]; then
    echo "# moving $src to $COMMIT" >&2
    git -C "$src" cat-file -e "$COMMIT^{commit}" 2> /dev/null || git -C "$src" fetch --quiet origin
    git -C "$src" -c advice.detachedHead=false checkout --quiet "$COMMIT"
  fi
fi
# Provenance: the commit actually used, and whether the .java files compiled
# below (anyangle/anya/*.java in the work tree) are exactly that commit's.
if head=$(git -C "$src" rev-parse HEAD 2> /dev/null); then
  [ "$head" = "$COMMIT" ] || echo "# WARNING: $src is at $head, not the pinned $COMMIT" >&2
  committed=$(git -C "$src" ls-tree HEAD anyangle/anya/ | awk '$4 ~ /\.java$/ {print $3, $4}' | LC_ALL=C sort)
  present=$(cd "$src" && for f in anyangle/anya/*.java; do
    printf '%s %s\n' "$(git hash-object "$f")" "$f"; done | LC_ALL=C sort)
  if [ "$committed" != "$present" ]; then
    echo "# WARNING: $src/anyangle/anya/*.java differ from commit $head" >&2
    head="$head (modified)"
  fi
else
  head="unknown (not a git checkout: $src)"
fi

# Compile the reference and the harness outside the repository.
mkdir -p "$CACHE"
classes=$(mktemp -d "$CACHE/classes.XXXXXX")
trap 'rm -rf "$classes"' EXIT
javac -nowarn -encoding ISO-8859-1 -d "$classes" "$src"/anyangle/anya/*.java > "$classes/javac.log" 2>&1 ||
  { cat "$classes/javac.log" >&2; die "the reference did not compile"; }
javac -encoding UTF-8 -cp "$classes" -d "$classes" "$HERE/Harness.java" ||
  die "the harness did not compile"

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

jvm=$(java -XshowSettings:properties -version 2>&1 |
  awk -F' = ' '/^ *java\.vm\.name =/ {n=$2} /^ *java\.runtime\.version =/ {v=$2} END {print n " " v}')
echo "# Java Anya reference (xiangzebo/Polyanya $head, anyangle/anya), $(date -u '+%Y-%m-%d %H:%M UTC'), $jvm, $JAVA_FLAGS, R=${R:-3}; map n mean_us mean_pops"
for j in "${jobs[@]}"; do
  check_idle "$(basename "$j")"
  # shellcheck disable=SC2086 # JAVA_FLAGS is a list of flags
  if [ -n "$mapdir" ]; then
    java $JAVA_FLAGS -cp "$classes" Harness --maps "$mapdir" "$j"
  else
    java $JAVA_FLAGS -cp "$classes" Harness "$j"
  fi
done
