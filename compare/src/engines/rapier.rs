//! rapier3d 0.36, without Bevy: a `PhysicsWorld` stepped by `PhysicsWorld::step`, with the
//! default `IntegrationParameters` (dt 1/60 s, 4 solver iterations). Its math types are those of
//! its own glam, so vectors cross as arrays.

use bevy::math::{Quat, Vec3};
use rapier3d::prelude as ra;

use crate::{BodyDef, JointDef, JointKind, Motion, Shape, Sim};

/// A rapier3d world and its bodies, in the order they were added.
pub(super) struct RapierSim {
    world: ra::PhysicsWorld,
    bodies: Vec<ra::RigidBodyHandle>,
}

fn vector(v: Vec3) -> ra::Vector {
    ra::Vector::new(v.x, v.y, v.z)
}

fn rotation(q: Quat) -> ra::Rotation {
    ra::Rotation::from_xyzw(q.x, q.y, q.z, q.w)
}

fn shared_shape(shape: &Shape) -> ra::SharedShape {
    match shape {
        Shape::Cuboid(half) => ra::SharedShape::cuboid(half.x, half.y, half.z),
        Shape::Ball(radius) => ra::SharedShape::ball(*radius),
        Shape::Capsule {
            half_height,
            radius,
        } => ra::SharedShape::capsule_y(*half_height, *radius),
        Shape::Cylinder {
            half_height,
            radius,
        } => ra::SharedShape::cylinder(*half_height, *radius),
        Shape::Hull(points) => {
            let points: Vec<ra::Vector> = points.iter().map(|&p| vector(p)).collect();
            ra::SharedShape::convex_hull(&points).expect("a hull")
        }
        Shape::Boxes(boxes) => ra::SharedShape::compound(
            boxes
                .iter()
                .map(|&(centre, half)| {
                    let pose = ra::Pose::from_translation(vector(centre));
                    (pose, shared_shape(&Shape::Cuboid(half)))
                })
                .collect(),
        ),
        Shape::Heightfield {
            heights,
            samples,
            size,
        } => {
            let grid = rapier3d::parry::utils::Array2::new(*samples, *samples, heights.clone());
            ra::SharedShape::heightfield(grid, vector(*size))
        }
        Shape::Trimesh {
            vertices,
            triangles,
        } => {
            let vertices = vertices.iter().map(|&v| vector(v)).collect();
            ra::SharedShape::trimesh(vertices, triangles.clone()).expect("a mesh")
        }
    }
}

impl RapierSim {
    pub(super) fn new() -> Self {
        Self {
            world: ra::PhysicsWorld::default(),
            bodies: Vec::new(),
        }
    }
}

impl Sim for RapierSim {
    fn add_body(&mut self, body: &BodyDef) -> usize {
        let builder = match body.motion {
            Motion::Static => ra::RigidBodyBuilder::fixed(),
            Motion::Dynamic => ra::RigidBodyBuilder::dynamic().can_sleep(false),
            Motion::Kinematic => ra::RigidBodyBuilder::kinematic_velocity_based(),
        };
        let builder = builder
            .pose(ra::Pose::from_parts(
                vector(body.position),
                rotation(body.rotation),
            ))
            .linvel(vector(body.linear_velocity))
            .angvel(vector(body.angular_velocity));
        let handle = self.world.insert_body(builder);
        if let Some(s) = &body.shape {
            let mut collider = ra::ColliderBuilder::new(shared_shape(s));
            if !body.collides {
                collider = collider.collision_groups(ra::InteractionGroups::none());
            }
            let world = &mut self.world;
            world
                .colliders
                .insert_with_parent(collider, handle, &mut world.bodies);
        }
        self.bodies.push(handle);
        self.bodies.len() - 1
    }

    fn add_joint(&mut self, joint: &JointDef) {
        let (a, b) = (self.bodies[joint.a], self.bodies[joint.b]);
        let generic: ra::GenericJoint = match joint.kind {
            JointKind::Spherical => ra::SphericalJointBuilder::new()
                .local_anchor1(vector(joint.anchor_a))
                .local_anchor2(vector(joint.anchor_b))
                .contacts_enabled(false)
                .into(),
            JointKind::Revolute(axis) => ra::RevoluteJointBuilder::new(vector(axis))
                .local_anchor1(vector(joint.anchor_a))
                .local_anchor2(vector(joint.anchor_b))
                .contacts_enabled(false)
                .into(),
        };
        self.world.insert_impulse_joint(a, b, generic);
    }

    fn step(&mut self) {
        self.world.step();
    }

    fn pose(&self, body: usize) -> (Vec3, Quat) {
        let rigid = &self.world.bodies[self.bodies[body]];
        let (t, r) = (rigid.translation(), rigid.rotation());
        (
            Vec3::new(t.x, t.y, t.z),
            Quat::from_xyzw(r.x, r.y, r.z, r.w),
        )
    }
}
