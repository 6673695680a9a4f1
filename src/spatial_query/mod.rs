//! Spatial queries: ask the world where its colliders are.
//!
//! The [`SpatialQuery`] system parameter casts rays and shapes, projects points and finds
//! overlaps; [`RayCaster`] and [`ShapeCaster`] components repeat a cast from an entity every
//! physics step and keep the hits in [`RayHits`] / [`ShapeHits`].
//!
//! Every query walks the broad phase's bounding volume hierarchy (parry's `Bvh`), so it only
//! tests the colliders whose boxes the ray or swept shape reaches, best first: never a loop
//! over every collider. The exact tests against each shape are parry's ray casts, time of
//! impact (GJK-based conservative advancement) and point projections.
//!
//! ## When the tree sees a body where it is
//!
//! - After each physics step ([`PhysicsStepSet::SpatialQuery`](crate::PhysicsStepSet)), the
//!   tree follows every body that moved in the step, so queries in `Update` see the poses the
//!   step produced.
//! - When colliders are spawned or despawned, the tree is rebuilt in `PreUpdate` (so queries
//!   work before the first physics step), and despawned colliders are never reported.
//! - A body the user moves by writing its `Transform` or `Position` is seen where it now is
//!   after [`update_spatial_query_pipeline`] runs; add that system before a system that moves
//!   bodies and queries in the same frame, or wait for the next step.

mod casters;
mod pipeline;
mod query;

pub use casters::{RayCaster, RayHits, ShapeCaster, ShapeHits};
pub(crate) use pipeline::QueryTreeStale;
pub use pipeline::update_spatial_query_pipeline;
pub use query::{
    PointProjectionHit, RayHitData, ShapeCastConfig, ShapeHitData, SpatialQuery, SpatialQueryFilter,
};

use bevy::prelude::*;

use crate::schedule::{PhysicsSchedule, PhysicsStepSet};

/// Keeps the query tree current and runs the ray and shape casters, in
/// [`PhysicsStepSet::SpatialQuery`] and (after spawns or despawns) in `PreUpdate`.
pub(crate) struct SpatialQueryPlugin;

impl Plugin for SpatialQueryPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<pipeline::QueryTreeStale>()
            .add_observer(pipeline::mark_stale_on_add)
            .add_observer(pipeline::mark_stale_on_remove)
            .add_systems(
                PreUpdate,
                update_spatial_query_pipeline.run_if(pipeline::tree_is_stale),
            )
            .add_systems(
                PhysicsSchedule,
                (
                    pipeline::follow_moved_bodies,
                    casters::update_ray_casters,
                    casters::update_shape_casters,
                )
                    .chain()
                    .in_set(PhysicsStepSet::SpatialQuery),
            );
    }
}
