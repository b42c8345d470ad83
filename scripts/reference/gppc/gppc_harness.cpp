// Benchmark harness for a Grid-Based Path Planning Competition (GPPC) 2023
// any-angle entry: by default "Polyanya on a merged constrained Delaunay mesh"
// (gppc-dev/algorithm-archive, anyangle/2023/Polyanya_MCDT, by Bojie Shen),
// or the Polyanya entry on a mesh of rectangles (anyangle/2023/Polyanya_Rec).
// The entry's code is not part of this repository:
// scripts/reference/gppc-polyanya.sh fetches it at a pinned commit into a
// cache directory and compiles it, unmodified, with this file (CMakeLists.txt
// beside it). See scripts/reference/README.md.
//
// Usage: gppc_harness NAME MAP_FILE QUERIES_FILE WORK_DIR
//   NAME          the name printed (`<NAME>.map`)
//   MAP_FILE      a Moving AI map; '.', 'G' and 'S' are passable, every other
//                 character is blocked (this crate's rule, and the entry's own
//                 loader's in its main.cpp)
//   QUERIES_FILE  one `sx sy gx gy` line per query (numbers, integer or not),
//                 as `compare --export-queries` writes them; blank and `#`
//                 lines are skipped
//   WORK_DIR      where the entry writes its preprocessing files
//                 (`NAME.poly`, `NAME.mesh`, `NAME.merged-mesh`)
//
// Settings (environment variables):
//   R         timed runs of each query, in a row; its fastest is kept (default 3)
//   WARMUP    untimed passes over all the queries before timing (default 1)
//   DUMP      if set, a directory where `<NAME>.costs` is written, one line
//             per query: `length best_ns pops` (length -1 when no path came
//             back)
//   RESULT_FD the descriptor to write the results to (default: stdout)
//   VALIDATE  0 turns off the check of every path with the GPPC validator
//             shipped in the entry (validator/ValidatePath.hpp); default on
//
// Output on the descriptor RESULT_FD if set, else on stdout (the entry's own
// chatter on fd 1 goes to WORK_DIR/entry.log instead):
//   # preprocess <NAME> <seconds> s
//   <NAME> <n> <mean_us> <mean_pops>
// preprocess: PreprocessMap (grid to polygons, triangulation, merging, files
// written) plus PrepareForSearch (mesh read back, search instance built),
// steady_clock, one run. mean_us: mean over the queries of each query's
// fastest time in microseconds, steady_clock around the entry's
// GetPath(data, s, g, path) only (called again while it returns false, as the
// GPPC harness does; these entries always return true). mean_pops: mean of the
// entry's SearchInstance::nodes_popped, which search() increments once per
// open-list pop (root-level pruned pops and the final pop included); a query
// the entry answers without searching (start == goal) counts 0.
// Diagnostics go to stderr.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "Entry.h"            // the entry's GPPC API
#include "searchinstance.h"   // polyanya::SearchInstance, for nodes_popped
#include "validator/ValidatePath.hpp"

namespace {

FILE *out = stdout; // our results; fd 1 itself is given to the entry's log

[[noreturn]] void fail(const std::string &msg) {
    std::fprintf(stderr, "gppc_harness: %s\n", msg.c_str());
    std::exit(1);
}

long env_long(const char *k, long d, long min) {
    const char *v = std::getenv(k);
    if (v == nullptr || *v == '\0') return d;
    char *end = nullptr;
    errno = 0;
    long x = std::strtol(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || x < min)
        fail(std::string(k) + "=" + v + " is not a whole number of at least " + std::to_string(min));
    return x;
}

bool passable(char c) { return c == '.' || c == 'G' || c == 'S'; }

// A Moving AI map: header lines up to `map`, then `height` rows of at least
// `width` characters (a trailing '\r' is ignored).
void read_map(const std::string &path, std::vector<bool> &bits, int &w, int &h) {
    std::ifstream f(path, std::ios::binary);
    if (!f) fail(path + ": cannot open");
    std::string line;
    w = h = -1;
    bool body = false;
    while (std::getline(f, line)) {
        std::istringstream ls(line);
        std::string key;
        ls >> key;
        if (key == "height") ls >> h;
        else if (key == "width") ls >> w;
        else if (key == "map") { body = true; break; }
    }
    if (!body || w <= 0 || h <= 0) fail(path + ": no width/height/map header");
    bits.assign(static_cast<size_t>(w) * h, false);
    for (int y = 0; y < h; y++) {
        if (!std::getline(f, line)) fail(path + ": " + std::to_string(y) + " rows, expected " + std::to_string(h));
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (static_cast<int>(line.size()) < w)
            fail(path + ": row " + std::to_string(y) + " is shorter than width " + std::to_string(w));
        for (int x = 0; x < w; x++) bits[static_cast<size_t>(y) * w + x] = passable(line[x]);
    }
}

struct Query {
    xyLoc s, g;
};

std::vector<Query> read_queries(const std::string &path, int w, int h) {
    std::ifstream f(path);
    if (!f) fail(path + ": cannot open");
    std::vector<Query> qs;
    std::string line;
    for (int k = 1; std::getline(f, line); k++) {
        size_t a = line.find_first_not_of(" \t\r");
        if (a == std::string::npos || line[a] == '#') continue;
        std::istringstream ls(line);
        double v[4];
        std::string extra;
        if (!(ls >> v[0] >> v[1] >> v[2] >> v[3]) || (ls >> extra))
            fail(path + ":" + std::to_string(k) + ": expected `sx sy gx gy`, found: " + line);
        for (double c : v)
            if (!std::isfinite(c)) fail(path + ":" + std::to_string(k) + ": not a finite number: " + line);
        if (v[0] < 0 || v[2] < 0 || v[1] < 0 || v[3] < 0 || v[0] > w || v[2] > w || v[1] > h || v[3] > h)
            fail(path + ":" + std::to_string(k) + ": query outside the " + std::to_string(w) + "x" +
                 std::to_string(h) + " map: " + line);
        qs.push_back(Query{xyLoc{v[0], v[1]}, xyLoc{v[2], v[3]}});
    }
    return qs;
}

double length(const std::vector<xyLoc> &p) {
    double len = 0;
    for (size_t i = 1; i < p.size(); i++) len += std::hypot(p[i].x - p[i - 1].x, p[i].y - p[i - 1].y);
    return len;
}

bool same(const xyLoc &a, const xyLoc &b) { return a.x == b.x && a.y == b.y; }

struct Answer {
    long long ns;
    double length; // -1: no path
    int pops;
};

// One query: GetPath until it says it is done, timed; pops read after.
Answer run(void *data, const Query &q, std::vector<xyLoc> &path) {
    auto *si = static_cast<polyanya::SearchInstance *>(data);
    path.clear();
    si->nodes_popped = -1; // stays -1 if the entry answers without searching
    auto t0 = std::chrono::steady_clock::now();
    while (!GetPath(data, q.s, q.g, path)) {
    }
    auto t1 = std::chrono::steady_clock::now();
    Answer a;
    a.ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
    a.pops = si->nodes_popped < 0 ? 0 : si->nodes_popped;
    if (path.empty()) a.length = same(q.s, q.g) ? 0.0 : -1.0;
    else a.length = length(path);
    return a;
}

double secs(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s NAME MAP_FILE QUERIES_FILE WORK_DIR\n", argv[0]);
        return 2;
    }
    const std::string name = argv[1], map_file = argv[2], queries_file = argv[3], work = argv[4];
    const int reps = static_cast<int>(env_long("R", 3, 1));
    const long warmup = env_long("WARMUP", 1, 0);
    const char *dump = std::getenv("DUMP");
    const char *val = std::getenv("VALIDATE");
    const bool validate = !(val != nullptr && std::strcmp(val, "0") == 0);

    // Our results go to the descriptor RESULT_FD if set (gppc-polyanya.sh runs
    // `RESULT_FD=3 gppc_harness ... 3>&1 >>LOG`: the triangulation library
    // prints a licence banner on fd 1 before main), else to a copy of fd 1.
    // Then fd 1 goes to WORK_DIR/entry.log, so that whatever the entry prints
    // stays out of the results.
    const int res_fd = std::getenv("RESULT_FD") != nullptr ? static_cast<int>(env_long("RESULT_FD", 1, 0)) : dup(1);
    if (res_fd < 0 || fcntl(res_fd, F_GETFD) == -1 || (out = fdopen(res_fd, "w")) == nullptr)
        fail("cannot open the results' descriptor");
    const std::string log = work + "/entry.log";
    int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log_fd < 0 || dup2(log_fd, 1) < 0) fail(log + ": cannot open");
    close(log_fd);
    std::cout.flush();
    std::fflush(stdout);

    std::vector<bool> bits;
    int w, h;
    read_map(map_file, bits, w, h);
    std::vector<Query> qs = read_queries(queries_file, w, h);
    const int n = static_cast<int>(qs.size());
    if (n == 0) {
        std::fprintf(stderr, "# WARNING %s: no queries in %s; no line written\n", name.c_str(), queries_file.c_str());
        return 0;
    }
    // The entry's own name for its files: WORK_DIR/NAME without ".map".
    std::string base = name;
    if (base.size() > 4 && base.compare(base.size() - 4, 4, ".map") == 0) base.resize(base.size() - 4);
    const std::string datafile = work + "/" + base;

    // Preprocessing: everything the entry does before its first query.
    auto p0 = std::chrono::steady_clock::now();
    PreprocessMap(bits, w, h, datafile);
    auto p1 = std::chrono::steady_clock::now();
    void *data = PrepareForSearch(bits, w, h, datafile);
    auto p2 = std::chrono::steady_clock::now();
    std::cout.flush();
    std::fflush(stdout);
    if (data == nullptr) fail(name + ": PrepareForSearch returned no data");

    std::vector<xyLoc> path;
    path.reserve(1024);

    // Warm-up: untimed passes over every query (caches, page faults, pools).
    auto w0 = std::chrono::steady_clock::now();
    double sink = 0;
    for (long p = 0; p < warmup; p++)
        for (const Query &q : qs) sink += run(data, q, path).length;
    auto w1 = std::chrono::steady_clock::now();

    // Timed: each query `reps` times in a row, fastest kept.
    std::vector<Answer> ans(n);
    int unstable = 0, invalid = 0, failed = 0, below = 0, ends = 0;
    std::vector<int> invalid_ids;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; i++) {
        long long best = -1;
        for (int r = 0; r < reps; r++) {
            Answer a = run(data, qs[i], path);
            if (best < 0 || a.ns < best) best = a.ns;
            if (r == 0) ans[i] = a;
            else if (a.length != ans[i].length || a.pops != ans[i].pops) unstable++;
        }
        ans[i].ns = best;
        // Checks of the last answer, outside the timing.
        const Query &q = qs[i];
        if (ans[i].length < 0) {
            failed++;
            continue;
        }
        if (!path.empty() && (!same(path.front(), q.s) || !same(path.back(), q.g))) ends++;
        if (ans[i].length < std::hypot(q.g.x - q.s.x, q.g.y - q.s.y) - 1e-6) below++;
        if (validate && !path.empty() && inx::ValidatePath(bits, w, h, path) >= 0) {
            invalid++;
            if (invalid_ids.size() < 5) invalid_ids.push_back(i);
        }
    }
    auto t1 = std::chrono::steady_clock::now();
    std::cout.flush();
    std::fflush(stdout);

    long long sum_ns = 0, sum_pops = 0;
    for (const Answer &a : ans) {
        sum_ns += a.ns;
        sum_pops += a.pops;
    }
    std::fprintf(stderr,
                 "# %s: %dx%d, %d queries, preprocess %.3f s (PreprocessMap %.3f s, PrepareForSearch %.3f s), "
                 "warm-up %ld passes %.2f s, R=%d, timed %.2f s\n",
                 name.c_str(), w, h, n, secs(p0, p2), secs(p0, p1), secs(p1, p2), warmup, secs(w0, w1), reps,
                 secs(t0, t1));
    if (failed > 0) {
        std::fprintf(stderr, "# WARNING %s: no path came back for %d of %d queries; they are counted in the means\n",
                     name.c_str(), failed, n);
        int shown = 0;
        for (int i = 0; i < n && shown < 5; i++)
            if (ans[i].length < 0) {
                std::fprintf(stderr, "#   no path: %g %g %g %g (pops %d)\n", qs[i].s.x, qs[i].s.y, qs[i].g.x,
                             qs[i].g.y, ans[i].pops);
                shown++;
            }
    }
    if (ends > 0)
        std::fprintf(stderr, "# WARNING %s: %d paths do not run from the start to the goal\n", name.c_str(), ends);
    if (below > 0)
        std::fprintf(stderr, "# WARNING %s: %d lengths below the straight-line distance\n", name.c_str(), below);
    if (invalid > 0) {
        std::fprintf(stderr, "# WARNING %s: the GPPC validator rejects %d paths, e.g. queries", name.c_str(), invalid);
        for (int i : invalid_ids) std::fprintf(stderr, " %d", i + 1);
        std::fprintf(stderr, " (1-based lines)\n");
    }
    if (unstable > 0)
        std::fprintf(stderr, "# WARNING %s: %d repetitions gave a different length or pop count\n", name.c_str(),
                     unstable);

    if (dump != nullptr && *dump != '\0') {
        const std::string f = std::string(dump) + "/" + name + ".costs";
        FILE *d = std::fopen(f.c_str(), "w");
        if (d == nullptr) fail(f + ": cannot write");
        for (const Answer &a : ans) std::fprintf(d, "%.17g %lld %lld\n", a.length, a.ns, static_cast<long long>(a.pops));
        if (std::fclose(d) != 0) fail(f + ": cannot write");
    }

    std::fprintf(out, "# preprocess %s %.3f s\n", name.c_str(), secs(p0, p2));
    std::fprintf(out, "%s %d %.3f %.3f\n", name.c_str(), n, sum_ns / 1000.0 / n, sum_pops / static_cast<double>(n));
    std::fflush(out);
    if (sink == 42.4242) std::fprintf(stderr, "\n");
    // The entry frees nothing; leave at once rather than run its destructors.
    std::_Exit(0);
}
