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
                    .with_local_anchor_1(joint.anchor_a)
                    .with_local_anchor_2(joint.anchor_b),
            ),
            JointKind::Revolute(axis) => world.spawn(
                ip::RevoluteJoint::new(a, b)
                    .with_aligned_axis(axis)
                    .with_local_anchor_1(joint.anchor_a)
                    .with_local_anchor_2(joint.anchor_b),
            ),
        };
    }
}
