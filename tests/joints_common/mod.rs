//! Helpers shared by the joint and XPBD tests (`tests/joints_*.rs`, `tests/xpbd_*.rs`): world
//! anchors, joint errors, energies, messages, and the chain and grid scenes.
#![allow(dead_code)]

use bevy::ecs::message::{Message, MessageCursor, Messages};
use bevy::prelude::*;
use impetus3d::prelude::*;

use crate::common::*;

/// Turns gravity off.
pub fn no_gravity(app: &mut App) {
    app.insert_resource(Gravity(Vec3::ZERO));
}

/// World position of the point `local` of body `body` (in the body's frame, relative to its
/// origin).
pub fn world_point(app: &App, body: Entity, local: Vec3) -> Vec3 {
    position(app, body) + rotation(app, body) * local
}

/// The joint component on `joint`.
pub fn joint_state<J: Joint + Clone>(app: &App, joint: Entity) -> J {
    app.world()
        .get::<J>(joint)
        .expect("the joint entity has its joint component")
        .clone()
}

/// Distance between the two world anchors of the joint on entity `joint`, m.
pub fn anchor_error<J: Joint + Clone>(app: &App, joint_entity: Entity) -> f32 {
    let j: J = joint_state(app, joint_entity);
    let base = j.base();
    let p1 = world_point(app, base.entity1, base.local_anchor1);
    let p2 = world_point(app, base.entity2, base.local_anchor2);
    (p1 - p2).length()
}

/// World centre of mass of a body.
pub fn center_of_mass(app: &App, body: Entity) -> Vec3 {
    computed_mass(app, body).world_center_of_mass(position(app, body), rotation(app, body))
}

/// The mass of a body, kg.
pub fn mass(app: &App, body: Entity) -> f32 {
    computed_mass(app, body).mass()
}

/// Total mechanical energy `½ m v² + ½ ωᵀ I ω + m g y` of a body (y of its centre of mass), J,
/// evaluated in f64 from the body's f32 state so the evaluation adds no round-off of its own.
pub fn mechanical_energy(app: &App, body: Entity) -> f64 {
    let m = computed_mass(app, body);
    let mass = m.mass() as f64;
    let v = velocity(app, body).as_dvec3();
    let w = angular_velocity(app, body).as_dvec3();
    let q = rotation(app, body).as_dquat();
    // World inertia I = R I_local Rᵀ, from the inverse the solver uses.
    let local_inertia = m.local_inverse_inertia().as_dmat3().inverse();
    let r = bevy::math::DMat3::from_quat(q);
    let inertia = r * local_inertia * r.transpose();
    let y = center_of_mass(app, body).y as f64;
    0.5 * mass * v.length_squared() + 0.5 * w.dot(inertia * w) + mass * g() as f64 * y
}

/// Reads the messages of type `M` sent since `cursor` last read.
pub fn read_messages<M: Message + Clone>(app: &App, cursor: &mut MessageCursor<M>) -> Vec<M> {
    let messages = app.world().resource::<Messages<M>>();
    cursor.read(messages).cloned().collect()
}

/// A cursor that will read every `M` message sent from now on.
pub fn message_cursor<M: Message>(app: &App) -> MessageCursor<M> {
    app.world().resource::<Messages<M>>().get_cursor_current()
}

/// The signed angle from `a` to `b` about `axis`, rad.
pub fn signed_angle(a: Vec3, b: Vec3, axis: Vec3) -> f32 {
    a.cross(b).dot(axis).atan2(a.dot(b))
}

/// `v` with its component along unit `n` removed, normalised.
pub fn perpendicular(v: Vec3, n: Vec3) -> Vec3 {
    (v - n * v.dot(n)).normalize()
}

/// A hanging chain: `links` spheres of radius 0.25, centres 1 m apart straight below a static
/// anchor at the origin, each joined to the one above by a spherical joint with anchors 0.5 m
/// above and below the link centres (the first link hangs from the anchor's point
/// (0, −0.5, 0)). Returns the anchor, links and joints. The chain starts exactly at its rest
/// length, at rest.
pub struct Chain {
    pub anchor: Entity,
    pub links: Vec<Entity>,
    pub joints: Vec<Entity>,
}

/// Half the distance between neighbouring link centres, m.
pub const CHAIN_HALF_LINK: f32 = 0.5;

pub fn chain(app: &mut App, links: usize, extra: impl Fn(usize) -> Option<Mass>) -> Chain {
    let anchor = spawn(app, (RigidBody::Static, Transform::default()));
    let mut previous = anchor;
    let mut bodies = Vec::with_capacity(links);
    let mut joints = Vec::with_capacity(links);
    for i in 0..links {
        let y = -(i as f32 + 1.0) * 2.0 * CHAIN_HALF_LINK;
        let link = spawn(
            app,
            (
                RigidBody::Dynamic,
                Collider::sphere(0.25),
                Transform::from_xyz(0.0, y, 0.0),
            ),
        );
        if let Some(m) = extra(i) {
            set(app, link, m);
        }
        let joint = spawn(
            app,
            SphericalJoint::new(previous, link)
                .with_local_anchor1(Vec3::new(0.0, -CHAIN_HALF_LINK, 0.0))
                .with_local_anchor2(Vec3::new(0.0, CHAIN_HALF_LINK, 0.0)),
        );
        bodies.push(link);
        joints.push(joint);
        previous = link;
    }
    Chain {
        anchor,
        links: bodies,
        joints,
    }
}

impl Chain {
    /// Rest length from the static anchor point to the lowest anchor point of the last link, m.
    pub fn rest_length(&self) -> f32 {
        self.links.len() as f32 * 2.0 * CHAIN_HALF_LINK
    }

    /// Current distance from the static anchor point to the bottom anchor of the last link, m.
    pub fn length(&self, app: &App) -> f32 {
        let top = world_point(app, self.anchor, Vec3::new(0.0, -CHAIN_HALF_LINK, 0.0));
        let last = *self.links.last().unwrap();
        let bottom = world_point(app, last, Vec3::new(0.0, -CHAIN_HALF_LINK, 0.0));
        (top - bottom).length()
    }

    /// (length − rest length) / rest length.
    pub fn stretch(&self, app: &App) -> f32 {
        self.length(app) / self.rest_length() - 1.0
    }

    /// The largest anchor error of any joint, m.
    pub fn max_joint_error(&self, app: &App) -> f32 {
        self.joints
            .iter()
            .map(|&j| anchor_error::<SphericalJoint>(app, j))
            .fold(0.0, f32::max)
    }
}
