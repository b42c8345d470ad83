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
    let (points, edges) = outline(grid, rect, slot);
    // Triangles inside free cells.
    let inside = |x: i64, y: i64| {
        x >= rect.x0 && x < rect.x1 && y >= rect.y0 && y < rect.y1 && grid.is_free_xy(x, y)
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
            .filter(|&(cx, cy)| !grid.is_free_xy(cx, cy))
            .count();
        blocked == 1
    };
    polygons_of(&points, edges, keep, turnable, |a, b| {
        portal_side(grid, rect, a, b)
    })
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
    let mut tris: Vec<[u32; 3]> = Vec::new();
    for face in cdt.inner_faces() {
        let ids = face.vertices().map(|v| v.fix().index() as u32);
        let p = ids.map(|i| points[i as usize]);
        let cross = cross3(p[0], p[1], p[2]);
        if cross == 0 || !keep(p) {
            continue;
        }
        tris.push(if cross > 0 {
            ids
        } else {
            [ids[0], ids[2], ids[1]]
        });
    }

    let polys = merge(points, &tris);

    // Polygon arrays and the edges' neighbours.
    let mut owner: FastMap<(u32, u32), (u32, u16)> =
        crate::fast_hash::with_capacity(tris.len() * 3);
    for (p, poly) in polys.iter().enumerate() {
        assert!(
            u16::try_from(poly.len()).is_ok(),
            "polygons have few vertices"
        );
        for k in 0..poly.len() {
            owner.insert((poly[k], poly[(k + 1) % poly.len()]), (p as u32, k as u16));
        }
    }
    for (p, poly) in polys.iter().enumerate() {
        for k in 0..poly.len() {
            let (a, b) = (poly[k], poly[(k + 1) % poly.len()]);
            let (pa, pb) = (points[a as usize], points[b as usize]);
            let slot = built.verts.len() as u32;
            built.verts.push(pa);
            built.turn.push(turn(pa));
            let across = match owner.get(&(b, a)) {
                Some(&(q, k)) => {
                    built.twin.push(k);
                    q
                }
                None => match portal(pa, pb) {
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
                        super::NONE
                    }
                },
            };
            built.neigh.push(across);
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
fn portal_side(grid: &Grid, rect: ChunkRect, a: [i32; 2], b: [i32; 2]) -> Option<(Side, i32)> {
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
        return grid.is_free_xy(lo, beyond).then_some((side, lo as i32));
    }
    if ax == bx && (ax == rect.x0 || ax == rect.x1) && ay != by {
        let lo = ay.min(by);
        let (side, beyond) = if ax == rect.x0 {
            (Side::West, ax - 1)
        } else {
            (Side::East, ax)
        };
        return grid.is_free_xy(beyond, lo).then_some((side, lo as i32));
    }
    None
}

/// The outline of the chunk's free cells: its vertices, and its runs as
/// pairs of vertex indices (see the [module docs](self)).
fn outline(grid: &Grid, rect: ChunkRect, slot: i64) -> (Vec<[i32; 2]>, Vec<[usize; 2]>) {
    let inside = |x: i64, y: i64| {
        x >= rect.x0 && x < rect.x1 && y >= rect.y0 && y < rect.y1 && grid.is_free_xy(x, y)
    };
    let free = |x: i64, y: i64| grid.is_free_xy(x, y);
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
            i64::from(grid.height()),
        ),
        (
            (rect.x0, rect.x1),
            (rect.y0, rect.y1),
            &vertical,
            i64::from(grid.width()),
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

/// Merges the triangles `tris` (positively oriented, vertex indices into
/// `points`) into convex polygons: shared edges are removed longest first
/// whenever the union of the two polygons on either side stays convex.
fn merge(points: &[[i32; 2]], tris: &[[u32; 3]]) -> Vec<Vec<u32>> {
    // Internal edges: (a, b) with a < b, the triangle holding a -> b and the
    // one holding b -> a.
    let mut half: FastMap<(u32, u32), u32> = crate::fast_hash::with_capacity(tris.len() * 3);
    for (t, tri) in tris.iter().enumerate() {
        for k in 0..3 {
            half.insert((tri[k], tri[(k + 1) % 3]), t as u32);
        }
    }
    let mut shared: Vec<(i64, u32, u32, u32, u32)> = Vec::new();
    for (&(a, b), &t) in &half {
        if a < b
            && let Some(&u) = half.get(&(b, a))
        {
            let (pa, pb) = (points[a as usize], points[b as usize]);
            let dx = i64::from(pa[0] - pb[0]);
            let dy = i64::from(pa[1] - pb[1]);
            shared.push((dx * dx + dy * dy, a, b, t, u));
        }
    }
    // Longest first; ties by vertices, so that the mesh does not depend on
    // the hash map's order.
    shared.sort_unstable_by(|x, y| y.0.cmp(&x.0).then((x.1, x.2).cmp(&(y.1, y.2))));

    let mut parent: Vec<u32> = (0..tris.len() as u32).collect();
    let mut polys: Vec<Vec<u32>> = tris.iter().map(|t| t.to_vec()).collect();
    let at = |i: u32| points[i as usize];
    for &(_, a, b, t, u) in &shared {
        let (p, q) = (find(&mut parent, t), find(&mut parent, u));
        if p == q {
            continue;
        }
        // p holds a -> b, q holds b -> a.
        let (pp, qq) = (&polys[p as usize], &polys[q as usize]);
        let Some(ia) = (0..pp.len()).find(|&k| pp[k] == a && pp[(k + 1) % pp.len()] == b) else {
            continue;
        };
        let Some(ib) = (0..qq.len()).find(|&k| qq[k] == b && qq[(k + 1) % qq.len()] == a) else {
            continue;
        };
        // p rotated to start at b ends at a; q rotated to start at a ends at b.
        let (np, nq) = (pp.len(), qq.len());
        let p_after_b = pp[(ia + 2) % np];
        let p_before_a = pp[(ia + np - 1) % np];
        let q_after_a = qq[(ib + 2) % nq];
        let q_before_b = qq[(ib + nq - 1) % nq];
        if cross3(at(p_before_a), at(a), at(q_after_a)) < 0
            || cross3(at(q_before_b), at(b), at(p_after_b)) < 0
        {
            continue;
        }
        let mut merged = Vec::with_capacity(np + nq - 2);
        for k in 0..np {
            merged.push(pp[(ia + 1 + k) % np]); // b, ..., a
        }
        for k in 1..nq - 1 {
            merged.push(qq[(ib + 1 + k) % nq]); // after a, ..., before b
        }
        polys[p as usize] = merged;
        polys[q as usize] = Vec::new();
        parent[q as usize] = p;
    }
    polys.into_iter().filter(|p| !p.is_empty()).collect()
}
