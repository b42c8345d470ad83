// Benchmark harness for the authors' Java implementation of Anya (Harabor,
// Grastien, Oz & Aksakalli; https://github.com/xiangzebo/Polyanya, directory
// anyangle/anya, MIT). The reference code is used unmodified and is not part of
// this repository: scripts/reference/run.sh fetches and compiles it, then runs
// this class against it. See scripts/reference/README.md.
//
// Usage: java -cp CLASSES Harness SOURCE... [MAP_DIR]
//   SOURCE is one of
//   - a directory of `<NAME>.map.queries` files written by
//     `cargo run --release --example compare -- --export-queries DIR`, each line
//     `sx sy gx gy` (integers: the start and goal lattice points);
//   - one such `<NAME>.map.queries` file;
//   - a map file `<NAME>.map`: every query of the scenario file
//     `<NAME>.map.scen` beside it (columns 5-8).
//   MAP_DIR (a directory holding `*.map` files and no `*.map.queries`, or
//   `--maps DIR`) is where the maps of query files are looked up; default
//   `data/maps`.
//
// Settings (environment variables):
//   R        timed runs of each query, in a row; its fastest is kept (default 3)
//   WARMUP   minimum untimed warm-up passes over a map's queries (default 3)
//   WARM_MS  minimum milliseconds of warm-up work per map (default 2000)
//   DUMP     if set, a directory where `<NAME>.map.costs` is written, one line
//            per query: `cost pops best_ns` (cost -1 when the reference finds none)
//
// Output on stdout, one line per query file / map, in the order given
// (directories sorted by name):
//   <NAME>.map <n> <mean_us> <mean_pops>
// mean_us: mean over the queries of each query's fastest time, microseconds,
// System.nanoTime() around AnyaSearch.search_costonly. mean_pops: mean of
// AnyaSearch.expanded, which search_costonly increments once per open-list pop
// (the start is popped as one node; the pop whose interval holds the goal is
// counted). A query answered with cost -1 still counts (warned on stderr).
// Diagnostics go to stderr.
//
// Passability: '.', 'G', 'S' are passable, everything else is blocked. The
// reference loader only treats '.' as passable, so each map is rewritten to a
// temporary file ('.' or '@', LF line endings) before it is loaded, and the
// loaded grid is checked cell by cell.
//
// Queries are built as the reference's ScenarioRunner.run_anya builds them:
//   new AnyaNode(null, new AnyaInterval(x, x, y), x, y).

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

import pgraph.alg.AnyaSearch;
import pgraph.anya.AnyaExpansionPolicy;
import pgraph.anya.AnyaInterval;
import pgraph.anya.AnyaNode;
import pgraph.grid.BitpackedGrid;

public class Harness {

    static final class Query {
        final int sx, sy, gx, gy;
        final double scenLength; // column 9 of a scenario; NaN for exported queries
        final AnyaNode start, goal;

        Query(int sx, int sy, int gx, int gy, double scenLength) {
            this.sx = sx; this.sy = sy; this.gx = gx; this.gy = gy;
            this.scenLength = scenLength;
            start = new AnyaNode(null, new AnyaInterval(sx, sx, sy), sx, sy);
            goal = new AnyaNode(null, new AnyaInterval(gx, gx, gy), gx, gy);
        }
    }

    /** One map's work: its name (`NAME.map`), the map file and its queries. */
    static final class Job {
        final String name;
        final Path map;
        final Path queries; // a .queries file, or a .scen file when scen is true
        final boolean scen;

        Job(String name, Path map, Path queries, boolean scen) {
            this.name = name; this.map = map; this.queries = queries; this.scen = scen;
        }
    }

    static final class Fail extends Exception {
        private static final long serialVersionUID = 1L;

        Fail(String msg) { super(msg); }
    }

    static String env(String k, String d) {
        String v = System.getenv(k);
        return (v == null || v.isEmpty()) ? d : v;
    }

    static long envLong(String k, long d, long min) throws Fail {
        String v = env(k, null);
        if (v == null) return d;
        try {
            long x = Long.parseLong(v.trim());
            if (x >= min) return x;
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new Fail(k + "=" + v + " is not a whole number of at least " + min);
    }

    static void err(String fmt, Object... args) {
        System.err.println(String.format(Locale.ROOT, fmt, args));
    }

    static boolean passable(char c) { return c == '.' || c == 'G' || c == 'S'; }

    /** Rows of a Moving AI map's body, each cut to the map's width. */
    static List<String> readMap(Path src, int[] wh) throws IOException, Fail {
        List<String> lines = Files.readAllLines(src, StandardCharsets.ISO_8859_1);
        int i = 0, w = -1, h = -1;
        for (; i < lines.size(); i++) {
            String l = lines.get(i).trim();
            String[] f = l.split("\\s+");
            if (f[0].equals("height") && f.length == 2) h = Integer.parseInt(f[1]);
            else if (f[0].equals("width") && f.length == 2) w = Integer.parseInt(f[1]);
            else if (l.equals("map")) { i++; break; }
        }
        if (w <= 0 || h <= 0) throw new Fail(src + ": no width/height header");
        if (lines.size() < i + h) throw new Fail(src + ": " + (lines.size() - i) + " rows, expected " + h);
        List<String> rows = new ArrayList<>(h);
        for (int y = 0; y < h; y++) {
            String row = lines.get(i + y);
            if (row.endsWith("\r")) row = row.substring(0, row.length() - 1);
            if (row.length() < w) throw new Fail(src + ": row " + y + " is shorter than width " + w);
            rows.add(row.substring(0, w));
        }
        wh[0] = w;
        wh[1] = h;
        return rows;
    }

    /** Loads the map into the reference's own loader, via a converted copy. */
    static AnyaExpansionPolicy loadPolicy(Job job, List<String> rows, int w, int h) throws Exception {
        StringBuilder sb = new StringBuilder(h * (w + 1) + 64);
        sb.append("type octile\nheight ").append(h).append("\nwidth ").append(w).append("\nmap\n");
        for (String row : rows) {
            for (int x = 0; x < w; x++) sb.append(passable(row.charAt(x)) ? '.' : '@');
            sb.append('\n');
        }
        Path tmp = Files.createTempFile("anya-ref-", "-" + job.name);
        try {
            Files.write(tmp, sb.toString().getBytes(StandardCharsets.ISO_8859_1));
            return new AnyaExpansionPolicy(tmp.toString()); // prune = true, as in ScenarioRunner
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    static int parseInt(String s, Path file, int line) throws Fail {
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            throw new Fail(file + ":" + line + ": " + s + " is not an integer"
                + " (the reference only takes queries on lattice points)");
        }
    }

    static List<Query> loadQueries(Job job) throws IOException, Fail {
        List<Query> qs = new ArrayList<>();
        List<String> lines = Files.readAllLines(job.queries, StandardCharsets.ISO_8859_1);
        for (int k = 0; k < lines.size(); k++) {
            String t = lines.get(k).trim();
            if (t.isEmpty() || t.startsWith("#") || (job.scen && t.startsWith("version"))) continue;
            String[] f = t.split("\\s+");
            int at = job.scen ? 4 : 0;
            if (job.scen ? f.length < 9 : f.length != 4)
                throw new Fail(job.queries + ":" + (k + 1) + ": expected "
                    + (job.scen ? "a scenario line (9 fields)" : "`sx sy gx gy`") + ", found: " + t);
            int sx = parseInt(f[at], job.queries, k + 1), sy = parseInt(f[at + 1], job.queries, k + 1);
            int gx = parseInt(f[at + 2], job.queries, k + 1), gy = parseInt(f[at + 3], job.queries, k + 1);
            double len = job.scen ? Double.parseDouble(f[8]) : Double.NaN;
            qs.add(new Query(sx, sy, gx, gy, len));
        }
        return qs;
    }

    static long sink; // keeps results live

    /** One untimed run of every query. */
    static void pass(AnyaSearch s, Query[] qs) {
        double acc = 0;
        for (Query q : qs) {
            acc += s.search_costonly(q.start, q.goal);
            acc += s.expanded;
        }
        sink += (long) acc;
    }

    static void runJob(Job job, int reps, long warmup, long warmMs, Path dump) throws Exception {
        int[] wh = new int[2];
        List<String> rows = readMap(job.map, wh);
        int w = wh[0], h = wh[1];
        if ((w & 31) >= 30)
            err("# WARNING %s: width %% 32 = %d; the reference's row padding may be too small", job.name, w & 31);
        AnyaExpansionPolicy policy = loadPolicy(job, rows, w, h);
        BitpackedGrid g = policy.getGrid();
        int mismatch = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                if (g.get_cell_is_traversable(x, y) != passable(rows.get(y).charAt(x))) mismatch++;
        if (mismatch != 0)
            err("# WARNING %s: %d cells of the loaded grid disagree with the passability rule", job.name, mismatch);

        Query[] qs = loadQueries(job).toArray(new Query[0]);
        int n = qs.length;
        if (n == 0) {
            err("# WARNING %s: no queries in %s; no line written", job.name, job.queries);
            return;
        }
        for (Query q : qs)
            if (q.sx < 0 || q.sy < 0 || q.gx < 0 || q.gy < 0 || q.sx > w || q.gx > w || q.sy > h || q.gy > h)
                throw new Fail(job.queries + ": query " + q.sx + " " + q.sy + " " + q.gx + " " + q.gy
                    + " is outside the " + w + "x" + h + " map");

        AnyaSearch search = new AnyaSearch(policy);

        // Warm-up: at least `warmup` passes and at least `warmMs` of work.
        long w0 = System.nanoTime();
        long passes = 0;
        while (passes < warmup || System.nanoTime() - w0 < warmMs * 1_000_000L) {
            pass(search, qs);
            passes++;
        }
        double warmS = (System.nanoTime() - w0) / 1e9;
        System.gc();

        // Timed: each query `reps` times in a row, fastest kept.
        double[] costs = new double[n];
        int[] pops = new int[n];
        long[] best = new long[n];
        int unstable = 0;
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            Query q = qs[i];
            long b = Long.MAX_VALUE;
            for (int r = 0; r < reps; r++) {
                long c0 = System.nanoTime();
                double c = search.search_costonly(q.start, q.goal);
                long dt = System.nanoTime() - c0;
                int e = search.expanded;
                if (dt < b) b = dt;
                if (r == 0) {
                    costs[i] = c;
                    pops[i] = e;
                } else if (c != costs[i] || e != pops[i]) {
                    unstable++;
                }
            }
            best[i] = b;
        }
        double timedS = (System.nanoTime() - t0) / 1e9;

        long sumNs = 0, sumPops = 0;
        int failed = 0, belowEuclid = 0, aboveScen = 0;
        for (int i = 0; i < n; i++) {
            Query q = qs[i];
            sumNs += best[i];
            sumPops += pops[i];
            double c = costs[i];
            if (!(c >= 0) || Double.isInfinite(c)) {
                failed++;
                continue;
            }
            if (c < Math.hypot(q.gx - q.sx, q.gy - q.sy) - 1e-6) belowEuclid++;
            // A scenario's length is an octile (8-connected) optimum, an upper
            // bound on the any-angle one (up to its rounding).
            if (!Double.isNaN(q.scenLength) && c > q.scenLength + 1e-2) aboveScen++;
        }
        err("# %s: %dx%d, %d queries from %s, warm-up %d passes %.1f s, R=%d, timed %.2f s",
            job.name, w, h, n, job.queries.getFileName(), passes, warmS, reps, timedS);
        if (failed > 0) {
            err("# WARNING %s: the reference found no path (cost -1) for %d of %d queries;"
                + " they are counted in the means", job.name, failed, n);
            int shown = 0;
            for (int i = 0; i < n && shown < 5; i++)
                if (!(costs[i] >= 0)) {
                    Query q = qs[i];
                    err("#   no path: %d %d %d %d (pops %d)", q.sx, q.sy, q.gx, q.gy, pops[i]);
                    shown++;
                }
        }
        if (belowEuclid > 0)
            err("# WARNING %s: %d costs below the straight-line distance", job.name, belowEuclid);
        if (aboveScen > 0)
            err("# WARNING %s: %d costs above the scenario's octile length", job.name, aboveScen);
        if (unstable > 0)
            err("# WARNING %s: %d repetitions gave a different cost or pop count", job.name, unstable);

        if (dump != null) {
            Files.createDirectories(dump);
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < n; i++)
                sb.append(Double.toString(costs[i])).append(' ').append(pops[i]).append(' ')
                  .append(best[i]).append('\n');
            Files.write(dump.resolve(job.name + ".costs"), sb.toString().getBytes(StandardCharsets.US_ASCII));
        }

        System.out.printf(Locale.ROOT, "%s %d %.3f %.3f%n", job.name, n, sumNs / 1000.0 / n, sumPops / (double) n);
        System.out.flush();
    }

    static List<Path> list(Path dir, String glob) throws IOException {
        List<Path> l = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, glob)) {
            for (Path p : ds) if (Files.isRegularFile(p)) l.add(p);
        }
        Collections.sort(l);
        return l;
    }

    static List<Job> jobs(String[] args) throws IOException, Fail {
        Path mapDir = Paths.get("data/maps");
        List<Job> out = new ArrayList<>();
        List<Object> order = new ArrayList<>(); // Path of a .queries file, or a Job
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--maps")) {
                if (++i == args.length) throw new Fail("--maps needs a directory");
                mapDir = Paths.get(args[i]);
                continue;
            }
            Path p = Paths.get(a);
            if (Files.isDirectory(p)) {
                List<Path> qf = list(p, "*.map.queries");
                if (!qf.isEmpty()) order.addAll(qf);
                else if (!list(p, "*.map").isEmpty()) mapDir = p;
                else throw new Fail(p + ": no *.map.queries (nor *.map) files");
            } else if (a.endsWith(".map.queries")) {
                if (!Files.isRegularFile(p)) throw new Fail(p + ": no such file");
                order.add(p);
            } else if (a.endsWith(".map")) {
                Path scen = Paths.get(a + ".scen");
                if (!Files.isRegularFile(p)) throw new Fail(p + ": no such file");
                if (!Files.isRegularFile(scen)) throw new Fail(scen + ": no such file (needed for " + p + ")");
                order.add(new Job(p.getFileName().toString(), p, scen, true));
            } else {
                throw new Fail(a + ": expected a directory of *.map.queries, a .map.queries file or a .map file");
            }
        }
        for (Object o : order) {
            if (o instanceof Job) {
                out.add((Job) o);
                continue;
            }
            Path q = (Path) o;
            String f = q.getFileName().toString();
            String name = f.substring(0, f.length() - ".queries".length());
            Path map = mapDir.resolve(name);
            if (!Files.isRegularFile(map)) throw new Fail(q + ": its map " + map + " does not exist");
            out.add(new Job(name, map, q, false));
        }
        if (out.isEmpty()) throw new Fail("nothing to run");
        return out;
    }

    public static void main(String[] args) {
        try {
            if (args.length == 0 || args[0].equals("-h") || args[0].equals("--help")) {
                System.err.println("usage: java Harness QUERIES_DIR|FILE.map.queries|MAP.map... [MAP_DIR | --maps MAP_DIR]");
                System.exit(2);
            }
            int reps = (int) envLong("R", 3, 1);
            long warmup = envLong("WARMUP", 3, 0);
            long warmMs = envLong("WARM_MS", 2000, 0);
            String d = env("DUMP", null);
            Path dump = d == null ? null : Paths.get(d);
            for (Job job : jobs(args)) runJob(job, reps, warmup, warmMs, dump);
        } catch (Fail e) {
            System.err.println("Harness: " + e.getMessage());
            System.exit(1);
        } catch (Exception e) {
            System.err.print("Harness: ");
            e.printStackTrace();
            System.exit(1);
        }
        if (sink == 42) System.err.println();
    }
}
