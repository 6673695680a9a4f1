//! Keeping the broad phase's tree current for queries between physics steps.

use bevy::prelude::*;
use parry3d::bounding_volume::BoundingVolume;

use crate::body::sync::user_pose;
use crate::body::{CreationOrder, PoseSync, Position, RigidBody, Rotation, Sleeping};
use crate::collision::broad_phase::{BroadPhase, ColliderProxy, ProxyKind};
use crate::collision::collider::{ColliderPose, DisabledCollider, find_body};
use crate::collision::{Collider, ColliderOf, CollisionLayers, Sensor, shape_aabb};
use crate::math::pose;
use crate::settings::SolverConfig;

/// Rebuilds the spatial-query tree from the colliders as they are now, with bodies where the
/// user last put them (a written `Transform` or `Position` counts even before the physics step
/// has seen it). Costs about as much as the broad phase's collection of colliders.
///
/// The engine runs it in `PreUpdate` after colliders are spawned or despawned. Run it yourself
/// between moving bodies and querying in the same frame:
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// # fn teleport() {}
/// # fn shoot() {}
/// App::new().add_systems(Update, (teleport, update_spatial_query_pipeline, shoot).chain());
/// ```
pub fn update_spatial_query_pipeline(world: &mut World) {
    if let Err(err) = world.run_system_cached(rebuild_query_tree) {
        warn!("spatial query tree not updated: {err}");
    }
}

/// Colliders, their layers and sensors, for [`rebuild_query_tree`].
type QueryColliders<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        &'static CreationOrder,
        &'static Collider,
        &'static ColliderPose,
        Option<&'static ColliderOf>,
        Option<&'static CollisionLayers>,
        Has<Sensor>,
    ),
    Without<DisabledCollider>,
>;

/// Bodies with everything that tells where the user put them.
type QueryBodies<'w, 's> = Query<
    'w,
    's,
    (
        &'static RigidBody,
        &'static Position,
        &'static Rotation,
        &'static Transform,
        &'static PoseSync,
        Has<Sleeping>,
    ),
>;

fn rebuild_query_tree(
    mut broad: ResMut<BroadPhase>,
    colliders: QueryColliders,
    bodies: QueryBodies,
    links: Query<(Option<&ChildOf>, Option<&Transform>, Has<RigidBody>)>,
    config: Res<SolverConfig>,
    mut stale: ResMut<QueryTreeStale>,
) {
    let margin = config.speculative_distance();
    broad.proxies.clear();
    for (entity, order, collider, local, collider_of, layers, sensor) in &colliders {
        let layers = layers.copied().unwrap_or_default();
        if layers.is_inert() {
            continue;
        }
        // A collider without a body link has not been seen by a step yet, or belongs to no
        // body: its hierarchy says where it is.
        let (body, local) = match collider_of {
            Some(link) => (Some(link.body), local.pose()),
            None => {
                let (body, local) = find_body(entity, &links);
                (body, local.pose())
            }
        };
        let (kind, world) = match body.and_then(|b| bodies.get(b).ok()) {
            Some((rb, position, rotation, transform, sync, sleeping)) => {
                let parent = crate::body::sync::parent_affine(body.unwrap_or(entity), |e| {
                    let (parent, transform, _) = links.get(e).ok()?;
                    Some((parent.map(ChildOf::parent), transform.copied()))
                });
                let (p, r, from_transform) =
                    user_pose(transform, position, rotation, sync, &parent);
                // A pose the engine wrote is used as it is, to the bits the step's own
                // update of the tree gives (a rollback restore rebuilds the tree here).
                let r = if from_transform { r.normalize() } else { r };
                (ProxyKind::of(*rb, sleeping), pose(p, r) * local)
            }
            None => (ProxyKind::Static, local),
        };
        let aabb = shape_aabb(collider.shape().as_ref(), &world).loosened(margin);
        if !aabb.mins.is_finite() || !aabb.maxs.is_finite() {
            continue;
        }
        broad.proxies.push(ColliderProxy {
            entity,
            // Breaks ties between equally near hits.
            key: order.pair_key(),
            body,
            pose: world,
            local,
            aabb,
            kind,
            sensor,
            layers,
            ..ColliderProxy::new(collider.shape().clone())
        });
    }
    broad.update_tree();
    stale.0 = false;
}

/// After a step, moves the tree leaves of every body that moved in it to its new pose.
pub(crate) fn follow_moved_bodies(
    mut broad: ResMut<BroadPhase>,
    bodies: Query<(&Position, &Rotation)>,
    config: Res<SolverConfig>,
    mut stale: ResMut<QueryTreeStale>,
) {
    // The step's broad phase collected every collider spawned before it.
    stale.0 = false;
    let margin = config.speculative_distance();
    broad.follow_bodies(margin, |body| {
        let (position, rotation) = bodies.get(body).ok()?;
        Some(pose(position.0, rotation.0))
    });
}

/// Colliders were spawned or despawned since the tree was last built.
#[derive(Resource, Default)]
pub(crate) struct QueryTreeStale(pub(crate) bool);

pub(crate) fn tree_is_stale(stale: Res<QueryTreeStale>) -> bool {
    stale.0
}

pub(crate) fn mark_stale_on_add(_: On<Add, Collider>, mut stale: ResMut<QueryTreeStale>) {
    stale.0 = true;
}

pub(crate) fn mark_stale_on_remove(_: On<Remove, Collider>, mut stale: ResMut<QueryTreeStale>) {
    stale.0 = true;
}
