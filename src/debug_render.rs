//! Debug drawing with Bevy gizmos (cargo feature `debug-render`).
//!
//! [`PhysicsDebugPlugin`] draws, every frame in `PostUpdate`, from the poses the engine has
//! after its last step ([`Position`]/[`Rotation`] of bodies and each collider's pose on its
//! body):
//!
//! - collider outlines: spheres (three great circles), cuboids (12 edges), capsules, cylinders,
//!   cones, convex hulls (their edges), triangle meshes and heightfields (every triangle's
//!   edges), compounds (each part), segments, triangles and polylines; any other shape is drawn
//!   as its bounding box. Colliders of sleeping bodies are drawn in another colour.
//! - collider AABBs (off by default),
//! - contact points (a small cross) and their normals, for touching pairs,
//! - joint anchors: a line from each body's origin to its anchor, and the separation between
//!   the two anchors when they are apart,
//! - body axes (local X, Y, Z in red, green and blue; in the sleeping colour while asleep).
//!
//! The [`PhysicsGizmos`] config group says what is drawn and in which colour; its
//! [`GizmoConfig`] (line width, depth bias, on/off) is in
//! Bevy's `GizmoConfigStore`. A [`DebugRender`] component on a body, collider or joint entity
//! overrides the colours for that entity or hides it.
//!
//! ```no_run
//! # use bevy::prelude::*;
//! # use impetus3d::prelude::*;
//! App::new()
//!     // `DefaultPlugins` brings Bevy's gizmo plugin (and, with rendering, draws the lines).
//!     .add_plugins((DefaultPlugins, PhysicsPlugin::default(), PhysicsDebugPlugin))
//!     .insert_gizmo_config(
//!         PhysicsGizmos::default().with_aabb_color(Color::WHITE),
//!         GizmoConfig::default(),
//!     )
//!     .run();
//! ```
//!
//! The plugin needs Bevy's gizmo storage ([`GizmoPlugin`](bevy::gizmos::GizmoPlugin), part of
//! `DefaultPlugins` when Bevy's `bevy_gizmos` feature is on, which this crate's `debug-render`
//! feature turns on), not its renderer: headless, the lines are collected and never drawn. A
//! game that renders gizmos enables Bevy's `bevy_gizmos_render` through its own Bevy features.
//!
//! Drawing allocates nothing of its own (shapes are walked in place; Bevy's gizmo buffers are
//! reused from frame to frame).

use bevy::color::palettes::css;
use bevy::gizmos::AppGizmoBuilder;
use bevy::gizmos::config::GizmoConfigGroup;
use bevy::prelude::*;
use parry3d::shape::{Shape, TypedShape};

use crate::body::{ComputedMass, Position, RigidBody, Rotation, Sleeping};
use crate::collision::collider::{ColliderPose, DisabledCollider};
use crate::collision::{Collider, ColliderDisabled, ColliderOf, Collisions};
use crate::math::{Quaternion, Scalar, Vector};
use crate::solver::joints::{
    D6Joint, DistanceJoint, FixedJoint, Joint, PrismaticJoint, RevoluteJoint, SphericalJoint,
};

/// Draws colliders, AABBs, contacts, joints and body axes with gizmos (see the
/// [module docs](self)). Add it after [`PhysicsPlugin`](crate::PhysicsPlugin), with Bevy's
/// gizmo plugin present (it is in `DefaultPlugins`). To turn all of it off and on at run
/// time, set `enabled` in the group's `GizmoConfig`:
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// fn toggle(mut store: ResMut<GizmoConfigStore>) {
///     let (config, _physics) = store.config_mut::<PhysicsGizmos>();
///     config.enabled = !config.enabled;
/// }
/// # bevy::ecs::system::assert_is_system(toggle);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct PhysicsDebugPlugin;

impl Plugin for PhysicsDebugPlugin {
    fn build(&self, app: &mut App) {
        app.init_gizmo_group::<PhysicsGizmos>()
            .register_type::<PhysicsGizmos>()
            .register_type::<DebugRender>()
            .add_systems(
                PostUpdate,
                (draw_colliders, draw_contacts, draw_joints, draw_bodies)
                    .in_set(PhysicsDebugSystems),
            );
    }
}

/// The systems of [`PhysicsDebugPlugin`], in `PostUpdate`: order your own drawing against
/// them, or skip them with a run condition.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// #[derive(Resource)]
/// struct ShowPhysics(bool);
///
/// let mut app = App::new();
/// app.insert_resource(ShowPhysics(false)).configure_sets(
///     PostUpdate,
///     PhysicsDebugSystems.run_if(|show: Res<ShowPhysics>| show.0),
/// );
/// ```
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PhysicsDebugSystems;

/// What [`PhysicsDebugPlugin`] draws and in which colours. A `None` colour (or length) turns
/// that part off.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// // Outlines and AABBs only:
/// let gizmos = PhysicsGizmos::none()
///     .with_collider_color(Color::WHITE)
///     .with_aabb_color(Color::srgb(0.5, 0.5, 0.5));
/// assert!(gizmos.contact_point_color.is_none());
/// ```
#[derive(Reflect, GizmoConfigGroup, Clone, Copy, Debug, PartialEq)]
#[reflect(Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct PhysicsGizmos {
    /// Collider outlines. Default orange.
    pub collider_color: Option<Color>,
    /// Collider outlines and axes of sleeping bodies (`None`: as when awake). Default grey.
    pub sleeping_color: Option<Color>,
    /// Collider world AABBs. Default off.
    pub aabb_color: Option<Color>,
    /// Contact points, drawn as small crosses. Default cyan.
    pub contact_point_color: Option<Color>,
    /// Contact normals (pointing from the first collider to the second). Default red.
    pub contact_normal_color: Option<Color>,
    /// Length of the contact normals, m. Default 0.25.
    pub contact_normal_length: Scalar,
    /// Size of the contact crosses, m. Default 0.05.
    pub contact_point_size: Scalar,
    /// Lines from each joined body's origin to its anchor. Default yellow.
    pub joint_anchor_color: Option<Color>,
    /// The line between two anchors that are apart. Default magenta.
    pub joint_separation_color: Option<Color>,
    /// Length of the body axes, m (X red, Y green, Z blue, drawn from the body origin).
    /// Default 0.5.
    pub axis_length: Option<Scalar>,
    /// Line segments per full circle of round shapes. Default 32 (at least 4, at most
    /// [`MAX_CIRCLE_SEGMENTS`](crate::validation::MAX_CIRCLE_SEGMENTS)).
    pub circle_segments: u32,
}

impl Default for PhysicsGizmos {
    fn default() -> Self {
        Self {
            collider_color: Some(css::ORANGE.into()),
            sleeping_color: Some(css::GRAY.into()),
            aabb_color: None,
            contact_point_color: Some(css::AQUA.into()),
            contact_normal_color: Some(css::RED.into()),
            contact_normal_length: 0.25,
            contact_point_size: 0.05,
            joint_anchor_color: Some(css::YELLOW.into()),
            joint_separation_color: Some(css::FUCHSIA.into()),
            axis_length: Some(0.5),
            circle_segments: 32,
        }
    }
}

impl PhysicsGizmos {
    /// Nothing drawn; turn parts on with the `with_` methods.
    pub fn none() -> Self {
        Self {
            collider_color: None,
            sleeping_color: None,
            aabb_color: None,
            contact_point_color: None,
            contact_normal_color: None,
            joint_anchor_color: None,
            joint_separation_color: None,
            axis_length: None,
            ..default()
        }
    }

    /// Draws collider outlines in `color`.
    pub fn with_collider_color(mut self, color: Color) -> Self {
        self.collider_color = Some(color);
        self
    }

    /// Draws the colliders and axes of sleeping bodies in `color`.
    pub fn with_sleeping_color(mut self, color: Color) -> Self {
        self.sleeping_color = Some(color);
        self
    }

    /// Draws collider AABBs in `color`.
    pub fn with_aabb_color(mut self, color: Color) -> Self {
        self.aabb_color = Some(color);
        self
    }

    /// Draws contact points and normals in these colours.
    pub fn with_contact_colors(mut self, point: Color, normal: Color) -> Self {
        self.contact_point_color = Some(point);
        self.contact_normal_color = Some(normal);
        self
    }

    /// Draws joint anchors and their separation in these colours.
    pub fn with_joint_colors(mut self, anchor: Color, separation: Color) -> Self {
        self.joint_anchor_color = Some(anchor);
        self.joint_separation_color = Some(separation);
        self
    }

    /// Draws body axes of this length.
    pub fn with_axis_length(mut self, length: Scalar) -> Self {
        self.axis_length = Some(length);
        self
    }
}

/// Per-entity debug drawing: overrides [`PhysicsGizmos`]' colours for this entity, or hides
/// it. On a collider it applies to that collider; on a body, to the body's axes and to its
/// colliders without a `DebugRender` of their own; on a joint, to the joint. Contacts of a
/// hidden collider are not drawn.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// # let mut world = World::new();
/// // A trigger volume nobody needs to see, and a ball drawn in green:
/// world.spawn((Collider::sphere(5.0), Sensor, DebugRender::hidden()));
/// world.spawn((
///     RigidBody::Dynamic,
///     Collider::sphere(0.5),
///     DebugRender::default().with_collider_color(Color::srgb(0.0, 1.0, 0.0)),
/// ));
/// ```
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct DebugRender {
    /// Whether the entity is drawn at all. Default `true`.
    pub visible: bool,
    /// Outline colour instead of [`PhysicsGizmos::collider_color`] (and of the sleeping
    /// colour). `None`: the global one.
    pub collider_color: Option<Color>,
    /// AABB colour instead of [`PhysicsGizmos::aabb_color`] (turns AABBs on for this entity).
    /// `None`: the global one.
    pub aabb_color: Option<Color>,
    /// Axis length instead of [`PhysicsGizmos::axis_length`]. `None`: the global one.
    pub axis_length: Option<Scalar>,
}

impl Default for DebugRender {
    fn default() -> Self {
        Self {
            visible: true,
            collider_color: None,
            aabb_color: None,
            axis_length: None,
        }
    }
}

impl DebugRender {
    /// Hides the entity from debug drawing.
    pub fn hidden() -> Self {
        Self {
            visible: false,
            ..default()
        }
    }

    /// Draws the outline in `color`.
    pub fn with_collider_color(mut self, color: Color) -> Self {
        self.collider_color = Some(color);
        self
    }

    /// Draws the AABB in `color`.
    pub fn with_aabb_color(mut self, color: Color) -> Self {
        self.aabb_color = Some(color);
        self
    }

    /// Draws the body axes with this length.
    pub fn with_axis_length(mut self, length: Scalar) -> Self {
        self.axis_length = Some(length);
        self
    }
}

/// A world pose for drawing.
#[derive(Clone, Copy)]
struct Frame {
    translation: Vector,
    rotation: Quaternion,
}

impl Frame {
    fn point(&self, local: Vector) -> Vector {
        self.translation + self.rotation * local
    }

    fn then(&self, translation: Vector, rotation: Quaternion) -> Self {
        Self {
            translation: self.point(translation),
            rotation: self.rotation * rotation,
        }
    }

    fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite()
    }
}

/// The parts of a body the drawing reads.
type BodyParts = (
    &'static Position,
    &'static Rotation,
    &'static RigidBody,
    Has<Sleeping>,
    Option<&'static DebugRender>,
    Option<&'static ComputedMass>,
);

/// The parts of a collider the drawing reads.
type ColliderParts = (
    &'static Collider,
    &'static ColliderPose,
    Option<&'static ColliderOf>,
    Option<&'static DebugRender>,
);

/// Colliders that take part in collision detection.
type ActiveColliders = (Without<DisabledCollider>, Without<ColliderDisabled>);

fn draw_colliders(
    mut gizmos: Gizmos<PhysicsGizmos>,
    colliders: Query<ColliderParts, ActiveColliders>,
    bodies: Query<BodyParts>,
) {
    // Per-entity colours may ask for outlines or boxes the config has off: no early return.
    let config = *gizmos.config_ext;
    let segments = config
        .circle_segments
        .clamp(4, crate::validation::MAX_CIRCLE_SEGMENTS);
    for (collider, pose, collider_of, own) in &colliders {
        let body = collider_of.and_then(|c| bodies.get(c.body).ok());
        let render = own.or_else(|| body.and_then(|b| b.4));
        if render.is_some_and(|r| !r.visible) {
            continue;
        }
        let frame = match body {
            Some((position, rotation, ..)) => Frame {
                translation: position.0,
                rotation: rotation.0,
            }
            .then(pose.translation, pose.rotation),
            None => Frame {
                translation: pose.translation,
                rotation: pose.rotation,
            },
        };
        if !frame.is_finite() {
            continue;
        }
        let sleeping = body.is_some_and(|b| b.3);
        let color = render.and_then(|r| r.collider_color).or(if sleeping {
            config.sleeping_color.or(config.collider_color)
        } else {
            config.collider_color
        });
        if let Some(color) = color {
            draw_shape(
                &mut gizmos,
                collider.shape().as_ref(),
                frame,
                color,
                segments,
                0,
            );
        }
        if let Some(color) = render.and_then(|r| r.aabb_color).or(config.aabb_color) {
            let aabb = collider
                .shape()
                .compute_aabb(&crate::math::pose(frame.translation, frame.rotation));
            let identity = Frame {
                translation: Vector::ZERO,
                rotation: Quaternion::IDENTITY,
            };
            draw_box(&mut gizmos, identity, aabb.mins, aabb.maxs, color);
        }
    }
}

fn draw_contacts(
    mut gizmos: Gizmos<PhysicsGizmos>,
    collisions: Collisions,
    hidden: Query<&DebugRender>,
    owners: Query<&ColliderOf>,
) {
    let config = *gizmos.config_ext;
    if config.contact_point_color.is_none() && config.contact_normal_color.is_none() {
        return;
    }
    let is_hidden = |collider: Entity| {
        let own = hidden.get(collider).ok();
        let body = owners
            .get(collider)
            .ok()
            .and_then(|c| hidden.get(c.body).ok());
        own.or(body).is_some_and(|r| !r.visible)
    };
    let size = config.contact_point_size * 0.5;
    for pair in collisions.iter() {
        if pair.is_sensor() || is_hidden(pair.collider1) || is_hidden(pair.collider2) {
            continue;
        }
        for point in pair.points() {
            if !point.point.is_finite() || !point.normal.is_finite() {
                continue;
            }
            if let Some(color) = config.contact_point_color {
                for axis in [Vector::X, Vector::Y, Vector::Z] {
                    gizmos.line(point.point - axis * size, point.point + axis * size, color);
                }
            }
            if let Some(color) = config.contact_normal_color {
                let end = point.point + point.normal * config.contact_normal_length;
                gizmos.line(point.point, end, color);
            }
        }
    }
}

/// Every joint kind, for drawing.
#[derive(bevy::ecs::system::SystemParam)]
struct Joints<'w, 's> {
    fixed: Query<'w, 's, (&'static FixedJoint, Option<&'static DebugRender>)>,
    distance: Query<'w, 's, (&'static DistanceJoint, Option<&'static DebugRender>)>,
    spherical: Query<'w, 's, (&'static SphericalJoint, Option<&'static DebugRender>)>,
    revolute: Query<'w, 's, (&'static RevoluteJoint, Option<&'static DebugRender>)>,
    prismatic: Query<'w, 's, (&'static PrismaticJoint, Option<&'static DebugRender>)>,
    d6: Query<'w, 's, (&'static D6Joint, Option<&'static DebugRender>)>,
}

/// A joint's bodies and anchors (in each body's frame).
type JointAnchors = ([Entity; 2], [Vector; 2]);

fn anchors_of<J: Joint>(joint: &J) -> JointAnchors {
    let base = joint.base();
    (
        [base.entity1, base.entity2],
        [base.local_anchor1, base.local_anchor2],
    )
}

fn draw_joints(
    mut gizmos: Gizmos<PhysicsGizmos>,
    joints: Joints,
    bodies: Query<(&Position, &Rotation)>,
) {
    let config = *gizmos.config_ext;
    if config.joint_anchor_color.is_none() && config.joint_separation_color.is_none() {
        return;
    }
    let visible = |render: Option<&DebugRender>| render.is_none_or(|r| r.visible);
    let fixed = joints
        .fixed
        .iter()
        .filter(|j| visible(j.1))
        .map(|j| anchors_of(j.0));
    let distance = joints
        .distance
        .iter()
        .filter(|j| visible(j.1))
        .map(|j| anchors_of(j.0));
    let spherical = joints
        .spherical
        .iter()
        .filter(|j| visible(j.1))
        .map(|j| anchors_of(j.0));
    let revolute = joints
        .revolute
        .iter()
        .filter(|j| visible(j.1))
        .map(|j| anchors_of(j.0));
    let prismatic = joints
        .prismatic
        .iter()
        .filter(|j| visible(j.1))
        .map(|j| anchors_of(j.0));
    let d6 = joints
        .d6
        .iter()
        .filter(|j| visible(j.1))
        .map(|(j, _)| ([j.entity1, j.entity2], [j.local_anchor1, j.local_anchor2]));
    let all = fixed
        .chain(distance)
        .chain(spherical)
        .chain(revolute)
        .chain(prismatic)
        .chain(d6);
    for (entities, local) in all {
        let (Ok(b1), Ok(b2)) = (bodies.get(entities[0]), bodies.get(entities[1])) else {
            continue;
        };
        let origin = [b1.0.0, b2.0.0];
        let anchor = [b1.0.0 + b1.1.0 * local[0], b2.0.0 + b2.1.0 * local[1]];
        if !(anchor[0].is_finite() && anchor[1].is_finite()) {
            continue;
        }
        if let Some(color) = config.joint_anchor_color {
            gizmos.line(origin[0], anchor[0], color);
            gizmos.line(origin[1], anchor[1], color);
        }
        if let Some(color) = config.joint_separation_color
            && anchor[0].distance_squared(anchor[1]) > 1e-12
        {
            gizmos.line(anchor[0], anchor[1], color);
        }
    }
}

fn draw_bodies(mut gizmos: Gizmos<PhysicsGizmos>, bodies: Query<BodyParts>) {
    let config = *gizmos.config_ext;
    for (position, rotation, body, sleeping, render, _) in &bodies {
        if body.is_static() || render.is_some_and(|r| !r.visible) {
            continue;
        }
        let Some(length) = render.and_then(|r| r.axis_length).or(config.axis_length) else {
            continue;
        };
        if !position.0.is_finite() || !rotation.0.is_finite() {
            continue;
        }
        let sleep_color = config.sleeping_color.filter(|_| sleeping);
        let colors: [Color; 3] = [css::RED.into(), css::LIME.into(), css::BLUE.into()];
        for (axis, color) in [Vector::X, Vector::Y, Vector::Z].into_iter().zip(colors) {
            let end = position.0 + rotation.0 * (axis * length);
            gizmos.line(position.0, end, sleep_color.unwrap_or(color));
        }
    }
}

/// Draws `shape` at `frame`; compounds are walked to a small depth.
fn draw_shape(
    gizmos: &mut Gizmos<PhysicsGizmos>,
    shape: &dyn Shape,
    frame: Frame,
    color: Color,
    segments: u32,
    depth: u32,
) {
    match shape.as_typed_shape() {
        TypedShape::Ball(ball) => {
            for (u, v) in [
                (Vector::X, Vector::Y),
                (Vector::Y, Vector::Z),
                (Vector::Z, Vector::X),
            ] {
                let (u, v) = (frame.rotation * u, frame.rotation * v);
                arc(
                    gizmos,
                    frame.translation,
                    u,
                    v,
                    ball.radius,
                    1.0,
                    segments,
                    color,
                );
            }
        }
        TypedShape::Cuboid(cuboid) => {
            draw_box(
                gizmos,
                frame,
                -cuboid.half_extents,
                cuboid.half_extents,
                color,
            );
        }
        TypedShape::Capsule(capsule) => {
            let (a, b) = (
                frame.point(capsule.segment.a),
                frame.point(capsule.segment.b),
            );
            let axis = (b - a)
                .try_normalize()
                .unwrap_or(frame.rotation * Vector::Y);
            let (u, v) = axis.any_orthonormal_pair();
            let r = capsule.radius;
            arc(gizmos, a, u, v, r, 1.0, segments, color);
            arc(gizmos, b, u, v, r, 1.0, segments, color);
            for side in [u, -u, v, -v] {
                gizmos.line(a + side * r, b + side * r, color);
            }
            // Half circles over each end, in two planes.
            for side in [u, v] {
                arc(gizmos, b, side, axis, r, 0.5, segments, color);
                arc(gizmos, a, side, -axis, r, 0.5, segments, color);
            }
        }
        TypedShape::Cylinder(cylinder) => {
            let (h, r) = (cylinder.half_height, cylinder.radius);
            let (u, v) = (frame.rotation * Vector::X, frame.rotation * Vector::Z);
            let (top, bottom) = (frame.point(Vector::Y * h), frame.point(-Vector::Y * h));
            arc(gizmos, top, u, v, r, 1.0, segments, color);
            arc(gizmos, bottom, u, v, r, 1.0, segments, color);
            for side in [u, -u, v, -v] {
                gizmos.line(bottom + side * r, top + side * r, color);
            }
        }
        TypedShape::Cone(cone) => {
            let (h, r) = (cone.half_height, cone.radius);
            let (u, v) = (frame.rotation * Vector::X, frame.rotation * Vector::Z);
            let (apex, base) = (frame.point(Vector::Y * h), frame.point(-Vector::Y * h));
            arc(gizmos, base, u, v, r, 1.0, segments, color);
            for side in [u, -u, v, -v] {
                gizmos.line(base + side * r, apex, color);
            }
        }
        TypedShape::ConvexPolyhedron(hull) => {
            let points = hull.points();
            for edge in hull.edges() {
                let [i, j] = edge.vertices;
                if let (Some(&p), Some(&q)) = (points.get(i as usize), points.get(j as usize)) {
                    gizmos.line(frame.point(p), frame.point(q), color);
                }
            }
        }
        TypedShape::TriMesh(mesh) => {
            for triangle in mesh.triangles() {
                draw_triangle(gizmos, frame, [triangle.a, triangle.b, triangle.c], color);
            }
        }
        TypedShape::HeightField(field) => {
            for triangle in field.triangles() {
                draw_triangle(gizmos, frame, [triangle.a, triangle.b, triangle.c], color);
            }
        }
        TypedShape::Triangle(triangle) => {
            draw_triangle(gizmos, frame, [triangle.a, triangle.b, triangle.c], color);
        }
        TypedShape::Segment(segment) => {
            gizmos.line(frame.point(segment.a), frame.point(segment.b), color);
        }
        TypedShape::Polyline(polyline) => {
            for segment in polyline.segments() {
                gizmos.line(frame.point(segment.a), frame.point(segment.b), color);
            }
        }
        TypedShape::Compound(compound) if depth < 4 => {
            for (pose, part) in compound.shapes() {
                let part_frame = frame.then(pose.translation, pose.rotation);
                draw_shape(
                    gizmos,
                    part.as_ref(),
                    part_frame,
                    color,
                    segments,
                    depth + 1,
                );
            }
        }
        TypedShape::RoundCuboid(round) => {
            draw_shape(gizmos, &round.inner_shape, frame, color, segments, depth);
        }
        TypedShape::RoundCylinder(round) => {
            draw_shape(gizmos, &round.inner_shape, frame, color, segments, depth);
        }
        TypedShape::RoundCone(round) => {
            draw_shape(gizmos, &round.inner_shape, frame, color, segments, depth);
        }
        TypedShape::RoundTriangle(round) => {
            draw_shape(gizmos, &round.inner_shape, frame, color, segments, depth);
        }
        TypedShape::RoundConvexPolyhedron(round) => {
            draw_shape(gizmos, &round.inner_shape, frame, color, segments, depth);
        }
        _ => {
            // Half-spaces, voxels and custom shapes: their (finite) bounding box.
            let aabb = shape.compute_local_aabb();
            if aabb.mins.is_finite() && aabb.maxs.is_finite() {
                draw_box(gizmos, frame, aabb.mins, aabb.maxs, color);
            }
        }
    }
}

/// The 12 edges of the box `[min, max]` in `frame`.
fn draw_box(
    gizmos: &mut Gizmos<PhysicsGizmos>,
    frame: Frame,
    min: Vector,
    max: Vector,
    color: Color,
) {
    let corner = |i: usize| {
        frame.point(Vector::new(
            if i & 1 == 0 { min.x } else { max.x },
            if i & 2 == 0 { min.y } else { max.y },
            if i & 4 == 0 { min.z } else { max.z },
        ))
    };
    for i in 0..8 {
        for bit in [1, 2, 4] {
            if i & bit == 0 {
                gizmos.line(corner(i), corner(i | bit), color);
            }
        }
    }
}

fn draw_triangle(
    gizmos: &mut Gizmos<PhysicsGizmos>,
    frame: Frame,
    [a, b, c]: [Vector; 3],
    color: Color,
) {
    let (a, b, c) = (frame.point(a), frame.point(b), frame.point(c));
    gizmos.line(a, b, color);
    gizmos.line(b, c, color);
    gizmos.line(c, a, color);
}

/// The arc of radius `r` about `center` in the plane of unit vectors `u` and `v`, starting at
/// `u` and turning towards `v` for `turns` of a full circle, in `turns · segments` lines.
#[allow(clippy::too_many_arguments)]
fn arc(
    gizmos: &mut Gizmos<PhysicsGizmos>,
    center: Vector,
    u: Vector,
    v: Vector,
    r: Scalar,
    turns: Scalar,
    segments: u32,
    color: Color,
) {
    let count = ((segments as Scalar * turns).round() as u32).max(1);
    let step = std::f32::consts::TAU * turns / count as Scalar;
    let at = |k: u32| {
        let (sin, cos) = crate::math::sin_cos(step * k as Scalar);
        center + (u * cos + v * sin) * r
    };
    let mut previous = at(0);
    for k in 1..=count {
        let next = at(k);
        gizmos.line(previous, next, color);
        previous = next;
    }
}
