//! One chunk of the mesh from the grid: the outline of its free cells, a constrained Delaunay triangulation of it, triangles merged into convex polygons.
//!
//! The outline is made of maximal straight runs of cell edges between a
//! free cell of the chunk and a cell that is blocked or outside the chunk.
//! On the chunk's border the runs are also cut wherever a cell on either
//! side of the border changes state, and at every multiple of the chunk
//! slot's side (a chunk may cover several slots), so that two neighbouring
//! chunks cut their common border at the same points and their polygons
//! meet edge to edge. Where two blocked cells touch only at a corner the outline passes
//! through that point twice, and the free cells on either side meet only
//! there: no polygon edge joins them, so no path squeezes through.
//!
//! The triangulation is `spade`'s constrained Delaunay triangulation of the
//! outline's vertices with the runs as constraints; its triangles inside
//! free cells are then merged greedily, longest shared edge first, as long
//! as the union stays convex.

use crate::fast_hash::FastMap;

use super::NONE;

use spade::{ConstrainedDelaunayTriangulation, Point2, Triangulation};

use crate::grid::Grid;

/// The cells `x0..x1` x `y0..y1` of one chunk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ChunkRect {
    pub x0: i64,
    pub y0: i64,
    pub x1: i64,
    pub y1: i64,
}

/// Which border of its chunk an edge lies on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Side {
    /// `y = y0`.
    North = 0,
    /// `y = y1`.
    South = 1,
    /// `x = x0`.
    West = 2,
    /// `x = x1`.
    East = 3,
}

impl Side {
    /// The side of the neighbouring chunk that lies on this one.
    pub(crate) fn opposite(self) -> Side {
        match self {
            Side::North => Side::South,
            Side::South => Side::North,
            Side::West => Side::East,
            Side::East => Side::West,
        }
    }
}

/// A polygon edge on the chunk's border with a free cell beyond it: its
/// neighbour is a polygon of the next chunk, found when chunks are linked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Portal {
    pub side: Side,
    /// The smaller coordinate of the edge's ends along the border.
    pub lo: i32,
    /// The edge's slot in [`Built::neigh`].
    pub slot: u32,
    /// The polygon it belongs to.
    pub poly: u32,
}

/// A chunk's polygons, before they are linked to other chunks.
#[derive(Clone, Debug, Default)]
pub(crate) struct Built {
    /// Polygon `p` has the vertex slots `start[p]..start[p + 1]`.
    pub start: Vec<u32>,
    /// Vertices, each polygon's in the order that puts its inside on the
    /// positive side of every edge (see [`crate::geom`]).
    pub verts: Vec<[i32; 2]>,
    /// Per slot `k`: what lies across the edge from `verts[k]` to the next
    /// vertex: a polygon of this chunk (its index), [`super::NONE`] for an
    /// obstacle, [`super::PORTAL`] for a border edge not yet linked.
    pub neigh: Vec<u32>,
    /// Per slot: the index, in the polygon across the edge, of the same edge
    /// (meaningless for obstacle edges).
    pub twin: Vec<u16>,
    /// Per slot: whether a path may turn at the vertex (exactly one of the
    /// four cells around it is blocked or outside the grid).
    pub turn: Vec<bool>,
    /// Border edges with a free cell beyond them, sorted.
    pub portals: Vec<Portal>,
    /// Constraint conflicts the triangulation reported (none when the
    /// outline is right; counted so that tests can say so).
    pub conflicts: u32,
}

/// Builds the polygons of the chunk `rect` of `grid`, its border cut at
/// every multiple of `slot` too.
pub(crate) fn build_chunk(grid: &Grid, rect: ChunkRect, slot: i64) -> Built {
    let cells = Window::new(grid, rect);
    let (points, edges) = outline(&cells, rect, slot, grid.size());
    // Triangles inside free cells.
    let inside = |x: i64, y: i64| {
        x >= rect.x0 && x < rect.x1 && y >= rect.y0 && y < rect.y1 && cells.free(x, y)
    };
    let keep = |p: [[i32; 2]; 3]| {
        let sx = i64::from(p[0][0]) + i64::from(p[1][0]) + i64::from(p[2][0]);
        let sy = i64::from(p[0][1]) + i64::from(p[1][1]) + i64::from(p[2][1]);
        inside(sx.div_euclid(3), sy.div_euclid(3))
    };
    let turnable = |v: [i32; 2]| {
        let (x, y) = (i64::from(v[0]), i64::from(v[1]));
        let blocked = [(x - 1, y - 1), (x, y - 1), (x - 1, y), (x, y)]
            .into_iter()
            .filter(|&(cx, cy)| !cells.free(cx, cy))
            .count();
        blocked == 1
    };
    polygons_of(&points, edges, keep, turnable, |a, b| {
        portal_side(&cells, rect, a, b)
    })
}

/// The free cells of a chunk and of the ring of cells around it, a bit
/// each: read from the grid once, row by row, then asked many times.
struct Window {
    /// The north-west cell of the ring.
    x0: i64,
    y0: i64,
    /// Words per row.
    stride: usize,
    /// Bit `i` of row `j` (word `j * stride + i / 64`) is cell
    /// `(x0 + i, y0 + j)`, set when free.
    words: Vec<u64>,
}

impl Window {
    fn new(grid: &Grid, rect: ChunkRect) -> Self {
        let (x0, y0) = (rect.x0 - 1, rect.y0 - 1);
        let width = (rect.x1 - x0 + 1) as usize;
        let stride = width.div_ceil(64);
        let rows = grid.rows();
        let mut words = Vec::with_capacity(stride * (rect.y1 - y0 + 1) as usize);
        for y in y0..=rect.y1 {
            // (Stored bit `x + 1` is cell `x`; the ring's cells beyond the
            // grid are padding, which reads as blocked.)
            words.extend((0..stride).map(|w| rows.bits_at(y, (x0 + 1) as usize + 64 * w)));
        }
        Window {
            x0,
            y0,
            stride,
            words,
        }
    }

    /// Whether cell `(x, y)` (in the chunk or its ring) is free.
    #[inline]
    fn free(&self, x: i64, y: i64) -> bool {
        let (i, j) = ((x - self.x0) as usize, (y - self.y0) as usize);
        self.words[j * self.stride + i / 64] >> (i % 64) & 1 == 1
    }
}

/// The polygons of a chunk from its outline: a constrained Delaunay
/// triangulation of `points` with `edges` as constraints, the triangles
/// `keep` accepts merged into convex polygons, with `turn` telling at which
/// vertices a path may turn and `portal` which edges lie on the chunk's
/// border with the next chunk's polygons beyond (its side, and the edge's
/// smaller coordinate along it).
pub(crate) fn polygons_of(
    points: &[[i32; 2]],
    edges: Vec<[usize; 2]>,
    keep: impl Fn([[i32; 2]; 3]) -> bool,
    turn: impl Fn([i32; 2]) -> bool,
    portal: impl Fn([i32; 2], [i32; 2]) -> Option<(Side, i32)>,
) -> Built {
    let mut built = Built {
        start: vec![0],
        ..Built::default()
    };
    if edges.is_empty() {
        return built;
    }
    let vertices: Vec<Point2<f64>> = points
        .iter()
        .map(|p| Point2::new(f64::from(p[0]), f64::from(p[1])))
        .collect();
    let mut conflicts = 0;
    let Ok(cdt) =
        ConstrainedDelaunayTriangulation::<Point2<f64>>::try_bulk_load_cdt(vertices, edges, |_| {
            conflicts += 1;
        })
    else {
        // (Only non-finite or enormous coordinates are refused; lattice
        // points are neither.)
        built.conflicts = u32::MAX;
        return built;
    };
    built.conflicts = conflicts;

    // The triangles kept, with their vertices as indices into `points`.
    let mut face_tri = vec![NONE; cdt.num_all_faces()];
    let mut tris: Vec<[u32; 3]> = Vec::new();
    for face in cdt.inner_faces() {
        let ids = face.vertices().map(|v| v.fix().index() as u32);
        let p = ids.map(|i| points[i as usize]);
        let cross = cross3(p[0], p[1], p[2]);
        if cross == 0 || !keep(p) {
            continue;
        }
        face_tri[face.fix().index()] = tris.len() as u32;
        tris.push(if cross > 0 {
            ids
        } else {
            [ids[0], ids[2], ids[1]]
        });
    }
    // Edge `k` of triangle `t` (from its vertex `k` to the next) is node
    // `3 t + k`; `across` holds the same edge's node in the kept triangle
    // beyond it, if any.
    let mut across = vec![NONE; tris.len() * 3];
    // The node of edge `a -> b` in triangle `t`, if it holds it that way.
    let node_of = |t: u32, a: u32, b: u32| -> Option<u32> {
        let tri = tris[t as usize];
        (0..3)
            .find(|&k| tri[k] == a && tri[(k + 1) % 3] == b)
            .map(|k| t * 3 + k as u32)
    };
    for face in cdt.inner_faces() {
        let t = face_tri[face.fix().index()];
        if t == NONE {
            continue;
        }
        for edge in face.adjacent_edges() {
            let Some(beyond) = edge.rev().face().as_inner() else {
                continue;
            };
            let u = face_tri[beyond.fix().index()];
            if u == NONE {
                continue;
            }
            let [a, b] = edge.vertices().map(|v| v.fix().index() as u32);
            // (Kept triangles are all turned the same way: one holds the
            // edge one way, the other the other way.)
            let pair = node_of(t, a, b)
                .zip(node_of(u, b, a))
                .or_else(|| node_of(t, b, a).zip(node_of(u, a, b)));
            if let Some((here, there)) = pair {
                across[here as usize] = there;
            }
        }
    }

    let merged = merge(points, &tris, &across);
    let vertex = |node: u32| points[tris[node as usize / 3][node as usize % 3] as usize];

    // Each node's polygon and position in it.
    let mut place = vec![(NONE, 0u16); tris.len() * 3];
    for (p, &first) in merged.firsts.iter().enumerate() {
        let (mut node, mut k) = (first, 0usize);
        loop {
            place[node as usize] = (
                p as u32,
                u16::try_from(k).expect("polygons have few vertices"),
            );
            k += 1;
            node = merged.next[node as usize];
            if node == first {
                break;
            }
        }
    }
    for (p, &first) in merged.firsts.iter().enumerate() {
        let mut node = first;
        loop {
            let next = merged.next[node as usize];
            let (pa, pb) = (vertex(node), vertex(next));
            let slot = built.verts.len() as u32;
            built.verts.push(pa);
            built.turn.push(turn(pa));
            let twin = across[node as usize];
            let neigh = if twin == NONE {
                match portal(pa, pb) {
                    Some((side, lo)) => {
                        built.portals.push(Portal {
                            side,
                            lo,
                            slot,
                            poly: p as u32,
                        });
                        built.twin.push(0);
                        super::PORTAL
                    }
                    None => {
                        built.twin.push(0);
                        NONE
                    }
                }
            } else {
                let (q, k) = place[twin as usize];
                built.twin.push(k);
                q
            };
            built.neigh.push(neigh);
            node = next;
            if node == first {
                break;
            }
        }
        built.start.push(built.verts.len() as u32);
    }
    built.portals.sort_unstable();
    built
}

/// `(b - a) x (c - a)` of integer points.
#[inline]
fn cross3(a: [i32; 2], b: [i32; 2], c: [i32; 2]) -> i64 {
    let (ax, ay) = (i64::from(a[0]), i64::from(a[1]));
    (i64::from(b[0]) - ax) * (i64::from(c[1]) - ay)
        - (i64::from(b[1]) - ay) * (i64::from(c[0]) - ax)
}

/// If the edge `a -> b` lies on the chunk's border with a free cell beyond
/// it, the border and the edge's smaller coordinate along it.
fn portal_side(cells: &Window, rect: ChunkRect, a: [i32; 2], b: [i32; 2]) -> Option<(Side, i32)> {
    let (ax, ay, bx, by) = (
        i64::from(a[0]),
        i64::from(a[1]),
        i64::from(b[0]),
        i64::from(b[1]),
    );
    if ay == by && (ay == rect.y0 || ay == rect.y1) && ax != bx {
        let lo = ax.min(bx);
        let (side, beyond) = if ay == rect.y0 {
            (Side::North, ay - 1)
        } else {
            (Side::South, ay)
        };
        return cells.free(lo, beyond).then_some((side, lo as i32));
    }
    if ax == bx && (ax == rect.x0 || ax == rect.x1) && ay != by {
        let lo = ay.min(by);
        let (side, beyond) = if ax == rect.x0 {
            (Side::West, ax - 1)
        } else {
            (Side::East, ax)
        };
        return cells.free(beyond, lo).then_some((side, lo as i32));
    }
    None
}

/// The outline of the chunk's free cells: its vertices, and its runs as
/// pairs of vertex indices (see the [module docs](self)).
fn outline(
    cells: &Window,
    rect: ChunkRect,
    slot: i64,
    size: bevy_math::UVec2,
) -> (Vec<[i32; 2]>, Vec<[usize; 2]>) {
    let inside = |x: i64, y: i64| {
        x >= rect.x0 && x < rect.x1 && y >= rect.y0 && y < rect.y1 && cells.free(x, y)
    };
    let free = |x: i64, y: i64| cells.free(x, y);
    let mut index: FastMap<[i32; 2], usize> = FastMap::default();
    let mut points: Vec<[i32; 2]> = Vec::new();
    let mut edges: Vec<[usize; 2]> = Vec::new();
    let mut vertex = |p: [i64; 2], points: &mut Vec<[i32; 2]>| -> usize {
        let key = [p[0] as i32, p[1] as i32];
        *index.entry(key).or_insert_with(|| {
            points.push(key);
            points.len() - 1
        })
    };
    // Horizontal lines y = j, scanned along x, then vertical lines x = i,
    // scanned along y: `at(line, along)` is the cell (or vertex) at
    // `along` on `line`, so the edge of cell `along` lies between
    // `at(line - 1, along)` and `at(line, along)`.
    let horizontal = |line: i64, along: i64| (along, line);
    let vertical = |line: i64, along: i64| (line, along);
    for (lines, alongs, at, extent) in [
        (
            (rect.y0, rect.y1),
            (rect.x0, rect.x1),
            &horizontal as &dyn Fn(i64, i64) -> (i64, i64),
            i64::from(size.y),
        ),
        (
            (rect.x0, rect.x1),
            (rect.y0, rect.y1),
            &vertical,
            i64::from(size.x),
        ),
    ] {
        let is_inside = |line: i64, along: i64| {
            let (x, y) = at(line, along);
            inside(x, y)
        };
        let is_free = |line: i64, along: i64| {
            let (x, y) = at(line, along);
            free(x, y)
        };
        for line in lines.0..=lines.1 {
            let border = line == lines.0 || line == lines.1;
            // (Nothing lies beyond the grid's own border.)
            let slots = border && line > 0 && line < extent;
            let mut run: Option<(i64, bool)> = None;
            for along in alongs.0..=alongs.1 {
                let here = if along < alongs.1 {
                    let (before, after) = (is_inside(line - 1, along), is_inside(line, along));
                    (before != after).then_some(before)
                } else {
                    None
                };
                let cut = border
                    && along > alongs.0
                    && along < alongs.1
                    && ((slots && along % slot == 0)
                        || is_free(line - 1, along - 1) != is_free(line - 1, along)
                        || is_free(line, along - 1) != is_free(line, along));
                if let Some((start, side)) = run {
                    if here == Some(side) && !cut {
                        continue;
                    }
                    let (ax, ay) = at(line, start);
                    let (bx, by) = at(line, along);
                    let a = vertex([ax, ay], &mut points);
                    let b = vertex([bx, by], &mut points);
                    edges.push([a, b]);
                    run = None;
                }
                if let Some(side) = here {
                    run = Some((along, side));
                }
            }
        }
    }
    (points, edges)
}

/// The representative of `t`'s set (with path halving).
fn find(parent: &mut [u32], mut t: u32) -> u32 {
    while parent[t as usize] != t {
        let up = parent[parent[t as usize] as usize];
        parent[t as usize] = up;
        t = up;
    }
    t
}

/// Convex polygons merged from triangles: each polygon's boundary is a
/// cycle of nodes, node `3 t + k` being edge `k` of triangle `t` (from its
/// vertex `k` to the next).
struct Merged {
    /// The node after each node on its polygon's boundary.
    next: Vec<u32>,
    /// A node of each polygon, its first.
    firsts: Vec<u32>,
}

/// Merges the triangles `tris` (positively oriented, vertex indices into
/// `points`; `across` pairs the nodes of their shared edges) into convex
/// polygons: shared edges are removed longest first whenever the union of
/// the two polygons on either side stays convex.
fn merge(points: &[[i32; 2]], tris: &[[u32; 3]], across: &[u32]) -> Merged {
    let nodes = tris.len() as u32 * 3;
    let vertex = |node: u32| tris[node as usize / 3][node as usize % 3];
    let at = |node: u32| points[vertex(node) as usize];
    let mut next: Vec<u32> = (0..nodes)
        .map(|n| if n % 3 == 2 { n - 2 } else { n + 1 })
        .collect();
    let mut prev: Vec<u32> = (0..nodes)
        .map(|n| if n % 3 == 0 { n + 2 } else { n - 1 })
        .collect();
    // Shared edges a -> b with a < b: the squared length, the vertices and
    // the node holding a -> b.
    let mut shared: Vec<(i64, u32, u32, u32)> = Vec::new();
    for n in 0..nodes {
        if across[n as usize] == NONE {
            continue;
        }
        let (a, b) = (vertex(n), vertex(next[n as usize]));
        if a < b {
            let (pa, pb) = (points[a as usize], points[b as usize]);
            let dx = i64::from(pa[0] - pb[0]);
            let dy = i64::from(pa[1] - pb[1]);
            shared.push((dx * dx + dy * dy, a, b, n));
        }
    }
    // Longest first; ties by vertices, so that the mesh does not depend on
    // the triangulation's order.
    shared.sort_unstable_by(|x, y| y.0.cmp(&x.0).then((x.1, x.2).cmp(&(y.1, y.2))));

    let mut parent: Vec<u32> = (0..tris.len() as u32).collect();
    let mut first: Vec<u32> = (0..tris.len() as u32).map(|t| t * 3).collect();
    for &(_, _, _, na) in &shared {
        let mb = across[na as usize];
        let (p, q) = (find(&mut parent, na / 3), find(&mut parent, mb / 3));
        if p == q {
            continue;
        }
        // p holds a -> b (nodes na -> nb), q holds b -> a (mb -> ma).
        let (nb, ma) = (next[na as usize], next[mb as usize]);
        let (p_after_b, p_before_a) = (next[nb as usize], prev[na as usize]);
        let (q_after_a, q_before_b) = (next[ma as usize], prev[mb as usize]);
        if cross3(at(p_before_a), at(na), at(q_after_a)) < 0
            || cross3(at(q_before_b), at(mb), at(p_after_b)) < 0
        {
            continue;
        }
        // The shared edge's nodes go: b, p's vertices after it up to a
        // (each node keeps its edge), q's from a up to before b.
        next[p_before_a as usize] = ma;
        prev[ma as usize] = p_before_a;
        next[q_before_b as usize] = nb;
        prev[nb as usize] = q_before_b;
        first[p as usize] = nb;
        parent[q as usize] = p;
    }
    let firsts = (0..tris.len())
        .filter(|&t| parent[t] == t as u32)
        .map(|t| first[t])
        .collect();
    Merged { next, firsts }
}
