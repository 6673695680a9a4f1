//! avian3d: `PhysicsPlugins::default()`, stepping in `FixedPostUpdate`, 6 substeps, XPBD
//! joints.

use avian3d::prelude as av;
use bevy::prelude::*;

use super::{BevyEngine, transform};
use crate::{BodyDef, JointDef, JointKind, Motion, Shape};

/// The avian3d engine.
pub(super) struct Avian;

avian_names!(av);

impl BevyEngine for Avian {
    fn add_plugin(app: &mut App) {
        // Avian registers its diagnostics resources in `Plugin::finish`, which the app's
        // set-up runs: without it the first physics step panics.
        app.add_plugins(av::PhysicsPlugins::default());
    }

    fn spawn(world: &mut World, body: &BodyDef) -> Entity {
        spawn_body(world, body)
    }

    fn joint(world: &mut World, joint: &JointDef, a: Entity, b: Entity) {
        match joint.kind {
            JointKind::Spherical => world.spawn((
                av::SphericalJoint::new(a, b)
                    .with_local_anchor1(joint.anchor_a)
                    .with_local_anchor2(joint.anchor_b),
                av::JointCollisionDisabled,
            )),
            JointKind::Revolute(axis) => world.spawn((
                av::RevoluteJoint::new(a, b)
                    .with_hinge_axis(axis)
                    .with_local_anchor1(joint.anchor_a)
                    .with_local_anchor2(joint.anchor_b),
                av::JointCollisionDisabled,
            )),
        };
    }
}
