//! impetus3d: `PhysicsPlugin::default()`, stepping in `FixedPostUpdate`, 4 substeps.

use bevy::prelude::*;
use impetus3d::prelude as ip;
use impetus3d::prelude::Joint as _;

use super::{BevyEngine, transform};
use crate::{BodyDef, JointDef, JointKind, Motion, Shape};

/// The impetus3d engine.
pub(super) struct Impetus;

avian_names!(ip);

impl BevyEngine for Impetus {
    fn add_plugin(app: &mut App) {
        app.add_plugins(ip::PhysicsPlugin::default());
    }

    fn spawn(world: &mut World, body: &BodyDef) -> Entity {
        spawn_body(world, body)
    }

    fn joint(world: &mut World, joint: &JointDef, a: Entity, b: Entity) {
        match joint.kind {
            JointKind::Spherical => world.spawn(
                ip::SphericalJoint::new(a, b)
                    .with_local_anchor1(joint.anchor_a)
                    .with_local_anchor2(joint.anchor_b),
            ),
            JointKind::Revolute(axis) => world.spawn(
                ip::RevoluteJoint::new(a, b)
                    .with_hinge_axis(axis)
                    .with_local_anchor1(joint.anchor_a)
                    .with_local_anchor2(joint.anchor_b),
            ),
        };
    }

    /// The medians of 21 captures and 21 restores of a `PhysicsSnapshot`.
    fn snapshot_cost(world: &mut World) -> Option<crate::SnapshotCost> {
        use std::time::Instant;
        let median = |mut times: Vec<f64>| {
            times.sort_by(f64::total_cmp);
            times[times.len() / 2]
        };
        let mut snapshot = ip::PhysicsSnapshot::capture(world);
        let mut captures = Vec::new();
        for _ in 0..21 {
            let start = Instant::now();
            snapshot = std::hint::black_box(ip::PhysicsSnapshot::capture(world));
            captures.push(start.elapsed().as_secs_f64() * 1e3);
        }
        let mut restores = Vec::new();
        for _ in 0..21 {
            let start = Instant::now();
            snapshot.restore(world);
            restores.push(start.elapsed().as_secs_f64() * 1e3);
        }
        Some(crate::SnapshotCost {
            bodies: snapshot.body_count(),
            bytes: snapshot.size_in_bytes(),
            capture_ms: median(captures),
            restore_ms: median(restores),
        })
    }
}
