//! avian3d: `PhysicsPlugins::default()`, stepping in `FixedPostUpdate`, 6 substeps, XPBD
//! joints.

use avian3d::prelude as av;
use bevy::prelude::*;

use super::{BevyEngine, transform};
use crate::{BodyDef, JointDef, JointKind, Motion, Shape};

/// The avian3d engine.
pub(super) struct Avian;

fn collider(shape: &Shape) -> av::Collider {
    match shape {
        Shape::Cuboid(half) => av::Collider::cuboid(2.0 * half.x, 2.0 * half.y, 2.0 * half.z),
        Shape::Ball(radius) => av::Collider::sphere(*radius),
        Shape::Capsule {
            half_height,
            radius,
        } => av::Collider::capsule(*radius, 2.0 * half_height),
        Shape::Cylinder {
            half_height,
            radius,
        } => av::Collider::cylinder(*radius, 2.0 * half_height),
        Shape::Hull(points) => av::Collider::convex_hull(points.clone()).expect("a hull"),
        Shape::Boxes(boxes) => av::Collider::compound(
            boxes
                .iter()
                .map(|&(centre, half)| (centre, Quat::IDENTITY, collider(&Shape::Cuboid(half))))
                .collect(),
        ),
        Shape::Heightfield {
            heights,
            samples,
            size,
        } => av::Collider::heightfield(
            heights.chunks(*samples).map(<[f32]>::to_vec).collect(),
            *size,
        ),
        Shape::Trimesh {
            vertices,
            triangles,
        } => av::Collider::trimesh(vertices.clone(), triangles.clone()),
    }
}

impl BevyEngine for Avian {
    fn add_plugin(app: &mut App) {
        // Avian registers its diagnostics resources in `Plugin::finish`, which the app's
        // set-up runs: without it the first physics step panics.
        app.add_plugins(av::PhysicsPlugins::default());
    }

    fn spawn(world: &mut World, body: &BodyDef) -> Entity {
        let kind = match body.motion {
            Motion::Static => av::RigidBody::Static,
            Motion::Dynamic => av::RigidBody::Dynamic,
            Motion::Kinematic => av::RigidBody::Kinematic,
        };
        let mut entity = world.spawn((
            kind,
            transform(body),
            av::LinearVelocity(body.linear_velocity),
            av::AngularVelocity(body.angular_velocity),
        ));
        if let Some(shape) = &body.shape {
            entity.insert(collider(shape));
        }
        if body.motion == Motion::Dynamic {
            entity.insert(av::SleepingDisabled);
        }
        if !body.collides {
            entity.insert(av::CollisionLayers::NONE);
        }
        entity.id()
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
