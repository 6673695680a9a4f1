//! Narrow phase: parry contact manifolds for every broad-phase pair, once per step.
//!
//! Pairs persist across steps in [`ContactGraph`], sorted by collider entities, so this step's
//! sorted broad-phase pairs are merged with last step's in one pass. Each pair keeps its parry
//! manifolds and workspace; parry's manifold generators match new contact points to old ones by
//! feature id (`ContactManifold::match_contacts`), carrying each point's normal impulse across
//! (and each manifold's [`FrictionImpulse`](super::FrictionImpulse)) so the solver can
//! warm-start. Pairs whose bodies are both asleep or static keep their
//! manifolds untouched and cost nothing.
//!
//! A pair whose colliders moved little relative to each other since its manifolds were built
//! recycles them (see the private `collision::recycling` module). A rebuilt manifold of more
//! than four points is reduced to four (`reduce_manifold`), as Box2D v3 and Box3D do.

use std::sync::atomic::{AtomicBool, Ordering};

use bevy::ecs::entity::EntityHashSet;
use bevy::prelude::*;
use parry3d::math::Pose;
use parry3d::query::{DefaultQueryDispatcher, PersistentQueryDispatcher, QueryDispatcher};

use super::broad_phase::{BroadPhase, ColliderProxy, ProxyKind, prediction_distance};
use super::contacts::{CollisionEnd, ContactGraph, ContactPair};
use super::dispatcher::Dispatcher;
use super::recycling::{Recycling, classify, recycle};
use crate::parallel::{Shared, parallel_for};
use crate::prefetch::{PREFETCH_ABOVE, prefetch};
use crate::settings::SolverConfig;

/// Below this many pairs the narrow phase runs on the calling thread: handing half of the
/// 210-cube pyramid's few hundred pairs to the other core cost more than it saved when the
/// VM's two cores were far apart (a 400 ns cache-line round trip).
const PARALLEL_PAIRS: usize = 1024;

/// How much more, as a fraction of the linear slop, another axis must separate two boxes to
/// replace the preferred one (see [`box_box`](super::box_box)); Box2D's 0.1.
const BOX_FEATURE_BIAS: f32 = 0.1;

/// How many pairs ahead the pair updates prefetch a pair's manifold points (and twice as many
/// its manifolds): see [`crate::prefetch`].
const AHEAD: usize = 4;

/// Merges this step's pairs into the contact graph and updates their manifolds.
pub(crate) fn update_contacts(
    broad: Res<BroadPhase>,
    mut graph: ResMut<ContactGraph>,
    config: Res<SolverConfig>,
    mut warned: Local<EntityHashSet>,
) {
    let graph = &mut *graph;
    graph.lost_support.clear();
    graph.ended.clear();
    merge_pairs(&broad, graph);

    let margin = config.speculative_distance();
    let tolerance = config.linear_slop;
    let any_unsupported = AtomicBool::new(false);
    let update = |pair: &mut ContactPair| {
        let proxies = &broad.proxies;
        let (p1, p2) = (
            &proxies[pair.proxies.0 as usize],
            &proxies[pair.proxies.1 as usize],
        );
        pair.unsupported = update_pair(pair, p1, p2, margin, tolerance).is_err();
        if pair.unsupported {
            any_unsupported.store(true, Ordering::Relaxed);
        }
    };
    // Pairs are independent, so they can be updated on any thread in any order with
    // bit-identical results. Small scenes stay on this thread.
    let len = graph.pairs.len();
    let prefetching = len >= PREFETCH_ABOVE;
    let pairs = Shared::new(&mut graph.pairs);
    parallel_for(len, PARALLEL_PAIRS, |range| {
        for index in range.clone() {
            if prefetching {
                // SAFETY: this call alone touches the pairs of `range`, and holds no reference
                // to them while it reads these.
                let ahead = |distance: usize| {
                    (index + distance < range.end).then(|| unsafe { pairs.get(index + distance) })
                };
                // Pairs ahead in this range: their manifolds, and nearer ones their points.
                if let Some(pair) = ahead(2 * AHEAD) {
                    prefetch(&pair.manifolds);
                }
                for manifold in ahead(AHEAD).into_iter().flat_map(|pair| &pair.manifolds) {
                    prefetch(&manifold.points);
                }
            }
            // SAFETY: every pair is updated by one call, and nothing else reads it now.
            update(unsafe { pairs.get_mut(index) });
        }
    });
    if !any_unsupported.into_inner() {
        return;
    }
    for pair in graph.pairs.iter().filter(|p| p.unsupported) {
        if warned.insert(pair.collider1) {
            warn!(
                "{} and {}: parry cannot compute contacts between these shapes; they will not collide",
                pair.collider1, pair.collider2
            );
        }
    }
}

/// Brings the contact graph's pairs in line with this step's broad-phase pairs (both sorted
/// by the colliders' creation order): pairs found again keep their manifolds, new ones start empty, and
/// those not found end. When the pairs are last step's, as in a settled scene, they stay where
/// they are (moving each 240-byte pair cost the 210-cube pyramid 3 % of its step).
fn merge_pairs(broad: &BroadPhase, graph: &mut ContactGraph) {
    let orders =
        |(a, b): (u32, u32)| (broad.proxies[a as usize].key, broad.proxies[b as usize].key);
    if graph.pairs.len() == broad.pairs.len()
        && (graph.pairs.iter().zip(&broad.pairs)).all(|(pair, &found)| pair.key() == orders(found))
    {
        for (pair, &found) in graph.pairs.iter_mut().zip(&broad.pairs) {
            pair.proxies = found;
        }
        return;
    }
    let mut old = std::mem::take(&mut graph.pairs);
    let mut next = std::mem::take(&mut graph.spare);
    next.clear();
    let mut old_pairs = old.drain(..).peekable();
    for &(a, b) in &broad.pairs {
        let (p1, p2) = (&broad.proxies[a as usize], &broad.proxies[b as usize]);
        let key = (p1.key, p2.key);
        while let Some(stale) = old_pairs.next_if(|o| o.key() < key) {
            end_pair(&stale, graph);
        }
        let mut pair = match old_pairs.next_if(|o| o.key() == key) {
            Some(pair) => pair,
            None => new_pair(p1, p2),
        };
        pair.proxies = (a, b);
        next.push(pair);
    }
    for stale in old_pairs {
        end_pair(&stale, graph);
    }
    graph.spare = old;
    graph.pairs = next;
}

/// A pair that left the broad phase (moved apart, despawned, disabled or filtered out): queue
/// its end for reporting, and remember its bodies so that sleeping ones wake instead of
/// floating where their support was.
fn end_pair(pair: &ContactPair, graph: &mut ContactGraph) {
    if pair.touching {
        graph.ended.push(CollisionEnd {
            collider1: pair.collider1,
            collider2: pair.collider2,
            body1: pair.body1,
            body2: pair.body2,
        });
        graph.lost_support.extend(pair.body1);
        graph.lost_support.extend(pair.body2);
    }
}

fn new_pair(p1: &ColliderProxy, p2: &ColliderProxy) -> ContactPair {
    ContactPair {
        collider1: p1.entity,
        collider2: p2.entity,
        body1: p1.body,
        body2: p2.body,
        keys: (p1.key, p2.key),
        manifolds: Vec::new(),
        workspace: None,
        // NaN poses never compare equal, so a new pair always gets its first manifolds.
        pose1: Pose::from_translation(bevy::math::Vec3::NAN),
        pose2: Pose::from_translation(bevy::math::Vec3::NAN),
        built_at: Pose::from_translation(bevy::math::Vec3::NAN),
        recycling: Recycling::Never,
        touching: false,
        was_touching: false,
        sensor: p1.sensor || p2.sensor,
        friction: 0.0,
        restitution: 0.0,
        proxies: (0, 0),
        unsupported: false,
        modifications: Default::default(),
    }
}

/// Recomputes one pair's manifolds unless both sides are at rest.
fn update_pair(
    pair: &mut ContactPair,
    p1: &ColliderProxy,
    p2: &ColliderProxy,
    margin: f32,
    tolerance: f32,
) -> Result<(), ()> {
    pair.was_touching = pair.touching;
    let resting = |k| matches!(k, ProxyKind::Static | ProxyKind::Sleeping);
    if resting(p1.kind) && resting(p2.kind) && pair.pose1 == p1.pose && pair.pose2 == p2.pose {
        return Ok(());
    }
    pair.body1 = p1.body;
    pair.body2 = p2.body;
    pair.pose1 = p1.pose;
    pair.pose2 = p2.pose;
    pair.sensor = p1.sensor || p2.sensor;
    pair.friction = p1.friction.combine(p2.friction);
    pair.restitution = p1.restitution.combine(p2.restitution);
    let pos12: Pose = p1.pose.inv_mul(&p2.pose);
    if pair.sensor {
        pair.manifolds.clear();
        pair.touching = DefaultQueryDispatcher
            .intersection_test(&pos12, &*p1.shape, &*p2.shape)
            .map_err(|_| ())?;
        return Ok(());
    }
    let prediction = prediction_distance(p1, p2, margin);
    let (shape1, shape2) = (&*p1.shape, &*p2.shape);
    if recycle(pair, &pos12, prediction, shape1, shape2) {
        pair.touching = pair
            .manifolds
            .iter()
            .any(|m| m.points.iter().any(|c| c.dist <= tolerance));
        return Ok(());
    }
    // parry keeps a manifold whose relative rotation changed by under 1° and only updates its
    // distances, measured from the last step rather than from when it was built; a zero
    // `local_n2` fails that shortcut, so the manifold is rebuilt (its points matched to the
    // old ones by feature id) while `local_n1` still seeds the support search.
    for manifold in &mut pair.manifolds {
        manifold.local_n2 = bevy::math::Vec3::ZERO;
    }
    pair.built_at = pos12;
    let dispatcher = Dispatcher {
        box_bias: BOX_FEATURE_BIAS * tolerance,
    };
    let result = dispatcher.contact_manifolds(
        &pos12,
        shape1,
        shape2,
        prediction,
        &mut pair.manifolds,
        &mut pair.workspace,
    );
    if result.is_err() {
        pair.manifolds.clear();
        pair.touching = false;
        return Err(());
    }
    for manifold in &mut pair.manifolds {
        drop_stray_points(manifold, p1, p2, prediction);
        reduce_manifold(manifold);
    }
    pair.recycling = classify(&mut pair.manifolds, &pos12, p1, p2);
    // Empty manifolds stay: parry's compound pairs keep one manifold per pair of parts.
    pair.touching = pair
        .manifolds
        .iter()
        .any(|m| m.points.iter().any(|c| c.dist <= tolerance));
    Ok(())
}

/// Drops the points of a fresh manifold that cannot be contacts: those farther apart than the
/// prediction distance, and those with a witness outside the other collider's bounding box
/// grown by that distance.
///
/// Clipping reports every corner of the clipped face, also those beyond the prediction
/// distance (the far edge of a tilted box, 13 cm up): they can never act within the step, yet
/// they pulled the friction patch's centre off the touching edge and forced the manifold to be
/// rebuilt every step. Face pairs ([`clip`](super::clip)) leave them out already, parry's
/// clipping of an edge does not. And parry's feature clipping can produce a stray witness
/// when a clipped edge is nearly parallel to the normal (seen: a cylinder landing on its rim
/// got a ground-side witness 39 m away from it). The solver puts the anchor midway between the
/// witnesses, so the far-off one became a lever arm of 20 m: the cylinder's spin read as
/// 160 m/s of approach there, and restitution threw it up at 1,200 m/s.
fn drop_stray_points(
    manifold: &mut crate::collision::contacts::Manifold,
    p1: &ColliderProxy,
    p2: &ColliderProxy,
    prediction: f32,
) {
    let frame1 = manifold.subshape_pos1.map_or(p1.pose, |p| p1.pose * p);
    let frame2 = manifold.subshape_pos2.map_or(p2.pose, |p| p2.pose * p);
    let near = |aabb: &parry3d::bounding_volume::Aabb, point: bevy::math::Vec3| {
        point.cmpge(aabb.mins - prediction).all() && point.cmple(aabb.maxs + prediction).all()
    };
    manifold.points.retain(|c| {
        c.dist <= prediction
            && near(&p2.aabb, frame1 * c.local_p1)
            && near(&p1.aabb, frame2 * c.local_p2)
    });
}

/// Most points a manifold keeps.
const MAX_MANIFOLD_POINTS: usize = 4;

/// Reduces a manifold of more than four points to four, as Box2D v3 and Box3D do: the deepest
/// point, the point farthest from it, and the two that span the largest area with those on
/// either side of the line through them. They support the patch as well as all the points
/// did (a face-face contact's octagon keeps its widest quadrilateral; two exactly coincident
/// faces give each corner twice, and one of each pair is kept), and the solver then works on
/// at most four points per manifold. The kept points stay in their order.
fn reduce_manifold(manifold: &mut crate::collision::contacts::Manifold) {
    let points = &manifold.points;
    if points.len() <= MAX_MANIFOLD_POINTS {
        return;
    }
    let n = manifold.local_n1;
    let deepest = (0..points.len())
        .min_by(|&a, &b| points[a].dist.total_cmp(&points[b].dist))
        .unwrap_or(0);
    let p0 = points[deepest].local_p1;
    let (farthest, _) = points
        .iter()
        .enumerate()
        .fold((deepest, 0.0), |best, (i, c)| {
            let d = c.local_p1.distance_squared(p0);
            if d > best.1 { (i, d) } else { best }
        });
    let edge = points[farthest].local_p1 - p0;
    let area = |i: usize| edge.cross(points[i].local_p1 - p0).dot(n);
    let (mut left, mut right) = ((deepest, 0.0), (deepest, 0.0));
    for i in 0..points.len() {
        let a = area(i);
        if a > left.1 {
            left = (i, a);
        }
        if a < right.1 {
            right = (i, a);
        }
    }
    let keep = [deepest, farthest, left.0, right.0];
    let mut index = 0;
    manifold.points.retain(|_| {
        let kept = keep.contains(&index);
        index += 1;
        kept
    });
}
