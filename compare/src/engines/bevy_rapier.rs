//! bevy_rapier3d: `RapierPhysicsPlugin` with `TimestepMode::Fixed { dt: 1/60, substeps: 1 }`
//! in `PostUpdate`, its default schedule.

use bevy::prelude::*;
use bevy::transform::StaticTransformOptimizations;
use bevy_rapier3d::prelude as rp;

use super::{BevyEngine, transform};
use crate::{BodyDef, DT, JointDef, JointKind, Motion, Shape};

/// The bevy_rapier3d engine.
pub(super) struct BevyRapier;

fn collider(shape: &Shape) -> rp::Collider {
    match shape {
        Shape::Cuboid(half) => rp::Collider::cuboid(half.x, half.y, half.z),
        Shape::Ball(radius) => rp::Collider::ball(*radius),
        Shape::Capsule {
            half_height,
            radius,
        } => rp::Collider::capsule_y(*half_height, *radius),
        Shape::Cylinder {
            half_height,
            radius,
        } => rp::Collider::cylinder(*half_height, *radius),
        Shape::Hull(points) => rp::Collider::convex_hull(points).expect("a hull"),
        Shape::Boxes(boxes) => rp::Collider::compound(
            boxes
                .iter()
                .map(|&(centre, half)| (centre, Quat::IDENTITY, collider(&Shape::Cuboid(half))))
                .collect(),
        ),
        Shape::Heightfield {
            heights,
            samples,
            size,
        } => rp::Collider::heightfield(heights.clone(), *samples, *samples, *size),
        Shape::Trimesh {
            vertices,
            triangles,
        } => rp::Collider::trimesh(vertices.clone(), triangles.clone()).expect("a mesh"),
    }
}

impl BevyEngine for BevyRapier {
    fn add_plugin(app: &mut App) {
        // `TimestepMode::Fixed` with one substep makes every update exactly one rapier step of
        // DT. Everything else (IntegrationParameters) is rapier's default.
        app.add_plugins(rp::RapierPhysicsPlugin::<rp::NoUserData>::default())
            .insert_resource(rp::TimestepMode::Fixed {
                dt: DT as f32,
                substeps: 1,
            })
            // bevy_rapier adds Bevy's `propagate_parent_transforms` to its own sets; with
            // `bevy/multi_threaded` (which no build of this binary turns on; a user's might)
            // that system reads this resource, normally inserted by `TransformPlugin`.
            .insert_resource(StaticTransformOptimizations::Disabled);
    }

    fn spawn(world: &mut World, body: &BodyDef) -> Entity {
        let kind = match body.motion {
            Motion::Static => rp::RigidBody::Fixed,
            Motion::Dynamic => rp::RigidBody::Dynamic,
            Motion::Kinematic => rp::RigidBody::KinematicVelocityBased,
        };
        let mut entity = world.spawn((
            kind,
            transform(body),
            rp::Velocity {
                linear: body.linear_velocity,
                angular: body.angular_velocity,
            },
        ));
        if let Some(shape) = &body.shape {
            entity.insert(collider(shape));
        }
        if body.motion == Motion::Dynamic {
            entity.insert(rp::Sleeping::disabled());
        }
        if !body.collides {
            entity.insert(rp::CollisionGroups::new(rp::Group::NONE, rp::Group::NONE));
        }
        entity.id()
    }

    fn joint(world: &mut World, joint: &JointDef, a: Entity, b: Entity) {
        // An `ImpulseJoint` sits on (a child of) its second body and names its first.
        let joint: rp::TypedJoint = match joint.kind {
            JointKind::Spherical => {
                let mut spherical = rp::SphericalJointBuilder::new()
                    .local_anchor1(joint.anchor_a)
                    .local_anchor2(joint.anchor_b)
                    .build();
                spherical.set_contacts_enabled(false);
                spherical.into()
            }
            JointKind::Revolute(axis) => {
                let mut revolute = rp::RevoluteJointBuilder::new(axis)
                    .local_anchor1(joint.anchor_a)
                    .local_anchor2(joint.anchor_b)
                    .build();
                revolute.set_contacts_enabled(false);
                revolute.into()
            }
        };
        world.spawn((rp::ImpulseJoint::new(a, joint), ChildOf(b)));
    }
}
