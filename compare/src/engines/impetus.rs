//! impetus3d: `PhysicsPlugin::default()`, stepping in `FixedPostUpdate`, 4 substeps.

use bevy::prelude::*;
use impetus3d::prelude as ip;
use impetus3d::prelude::Joint as _;

use super::{BevyEngine, transform};
use crate::{BodyDef, JointDef, JointKind, Motion, Shape};

/// The impetus3d engine.
pub(super) struct Impetus;

fn collider(shape: &Shape) -> ip::Collider {
    match shape {
        Shape::Cuboid(half) => ip::Collider::cuboid(2.0 * half.x, 2.0 * half.y, 2.0 * half.z),
        Shape::Ball(radius) => ip::Collider::sphere(*radius),
        Shape::Capsule {
            half_height,
            radius,
        } => ip::Collider::capsule(*radius, 2.0 * half_height),
        Shape::Cylinder {
            half_height,
            radius,
        } => ip::Collider::cylinder(*radius, 2.0 * half_height),
        Shape::Hull(points) => ip::Collider::convex_hull(points.clone()).expect("a hull"),
        Shape::Boxes(boxes) => ip::Collider::compound(
            boxes
                .iter()
                .map(|&(centre, half)| (centre, Quat::IDENTITY, collider(&Shape::Cuboid(half))))
                .collect(),
        ),
        Shape::Heightfield {
            heights,
            samples,
            size,
        } => ip::Collider::heightfield(
            heights.chunks(*samples).map(<[f32]>::to_vec).collect(),
            *size,
        ),
        Shape::Trimesh {
            vertices,
            triangles,
        } => ip::Collider::trimesh(vertices.clone(), triangles.clone()),
    }
}

impl BevyEngine for Impetus {
    fn add_plugin(app: &mut App) {
        app.add_plugins(ip::PhysicsPlugin::default());
    }

    fn spawn(world: &mut World, body: &BodyDef) -> Entity {
        let kind = match body.motion {
            Motion::Static => ip::RigidBody::Static,
            Motion::Dynamic => ip::RigidBody::Dynamic,
            Motion::Kinematic => ip::RigidBody::Kinematic,
        };
        let mut entity = world.spawn((
            kind,
            transform(body),
            ip::LinearVelocity(body.linear_velocity),
            ip::AngularVelocity(body.angular_velocity),
        ));
        if let Some(shape) = &body.shape {
            entity.insert(collider(shape));
        }
        if body.motion == Motion::Dynamic {
            entity.insert(ip::SleepingDisabled);
        }
        if !body.collides {
            entity.insert(ip::CollisionLayers::NONE);
        }
        entity.id()
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
