#!/usr/bin/env bash
# Combines several runs of gppc-polyanya.sh (or run.sh) on the same queries
# into one file for `compare --reference`: per map, the fastest mean time of
# the runs (and the shortest preprocessing). Timings of one run can be slowed
# by a busy machine; the fastest of a few runs minutes apart is the fairer
# figure to compare against.
#
# Usage: scripts/reference/fastest-of.sh RUN.txt RUN.txt... > reference.txt
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 RUN.txt RUN.txt... > reference.txt" >&2; exit 2; }
awk -v runs=$# '
  # The first run header seen names the implementation; the date of one run
  # gives way to how the figures were combined.
  /^# / && header == "" && $0 !~ /^# preprocess / {
    header = $0
    sub(/, 20[0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9] UTC/, ", the fastest of " runs " runs of the script", header)
    next
  }
  /^# preprocess / {
    m = $3; t = $4 + 0
    if (!(m in pre) || t < pre[m]) pre[m] = t
    next
  }
  /^#/ || NF == 0 { next }
  NF >= 4 {
    m = $1
    if (!(m in best)) { order[++maps] = m; count[m] = $2; pops[m] = $4 }
    if (!(m in best) || $3 + 0 < best[m]) best[m] = $3 + 0
  }
  END {
    if (header != "") print header
    for (i = 1; i <= maps; i++) {
      m = order[i]
      if (m in pre) printf "# preprocess %s %.3f s\n", m, pre[m]
      printf "%s %s %.3f %s\n", m, count[m], best[m], pops[m]
    }
  }
' "$@"
