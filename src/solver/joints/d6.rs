//! The six-axis (D6) joint, built on velocity constraint rows.
//!
//! Each body carries a joint frame (an anchor and a basis). The joint measures the pose of
//! frame 2 relative to frame 1 along six axes: the three linear axes X, Y, Z of frame 1 (the
//! anchors' offset `d = p₂ − p₁` projected on them), and three angles from the swing–twist
//! decomposition of the relative rotation `q = f₁⁻¹ f₂ = swing · twist`: the *twist* about
//! frame 2's X axis, and the two *swing* angles about frame 1's Y (swing 1) and Z (swing 2)
//! axes (the components of the swing rotation vector). Each axis is [`D6Motion::Locked`],
//! [`D6Motion::Free`] or [`D6Motion::Limited`]; the two swings, when limited, form an
//! elliptical cone of half-angles `limits[Swing1].max` and `limits[Swing2].max`. Every axis can
//! also have a [`D6Drive`]: an implicit spring–damper towards a target position and velocity
//! with a force limit, like PhysX's D6 drives.
//!
//! Every part becomes one [`ConstraintRow`] per step, solved with the contacts in the
//! soft-step solver (see [`rows`](crate::solver::rows)): locked axes are hard two-sided rows,
//! limits one-sided hard rows (speculative while inside the range, so a body swinging into a
//! limit stops at it), or springs for soft limits (stiffness, damping) and restitution rows
//! for bouncy ones; drives are spring rows limited to `max_force · dt` per step. The row
//! Jacobians are the exact rates of the coordinates for the linear axes and the cone angle,
//! and first-order ones for the twist and the individual swing angles (exact at zero swing).
//!
//! Unlike the XPBD joints, a D6 joint is a velocity-level constraint: it has no compliance
//! but the solver's softness, and it reports the impulses of its rows
//! ([`D6Joint::row_impulses`]).

use bevy::ecs::entity::{EntityMapper, MapEntities};
use bevy::ecs::reflect::ReflectMapEntities;
use bevy::prelude::*;
use smallvec::SmallVec;

use super::check_limits;
use crate::math::{Quaternion, Scalar, Vector, atan2, is_finite_quat, rotation_vector, tan};
use crate::solver::RigidBodyQueryItem;
use crate::solver::rows::{ConstraintRow, RowSink, VelocityConstraint};
use crate::validation::{Validate, check, join, non_negative};

/// One of the six axes of a [`D6Joint`].
#[derive(Clone, Reflect, Copy, Debug, PartialEq, Eq, Hash)]
#[reflect(Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub enum D6Axis {
    /// Translation along frame 1's X axis.
    X = 0,
    /// Translation along frame 1's Y axis.
    Y = 1,
    /// Translation along frame 1's Z axis.
    Z = 2,
    /// Rotation about frame 2's X axis.
    Twist = 3,
    /// Swing about frame 1's Y axis.
    Swing1 = 4,
    /// Swing about frame 1's Z axis.
    Swing2 = 5,
}

impl D6Axis {
    /// All six axes, in index order.
    pub const ALL: [D6Axis; 6] = [
        D6Axis::X,
        D6Axis::Y,
        D6Axis::Z,
        D6Axis::Twist,
        D6Axis::Swing1,
        D6Axis::Swing2,
    ];
}

/// How an axis of a [`D6Joint`] may move.
#[derive(Clone, Reflect, Copy, Debug, Default, PartialEq, Eq)]
#[reflect(Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub enum D6Motion {
    /// Not at all (the default for every axis).
    #[default]
    Locked,
    /// Within the axis's [`D6Limit`].
    Limited,
    /// Freely.
    Free,
}

/// The range of a limited axis, and how hard its ends are.
#[derive(Clone, Reflect, Copy, Debug, PartialEq)]
#[reflect(Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct D6Limit {
    /// Lower end, m or rad (unused by the swing cone).
    pub min: Scalar,
    /// Upper end, m or rad (the half-angle of the cone for the swings).
    pub max: Scalar,
    /// Stiffness of a soft limit (N/m or N·m/rad); 0 with zero damping is a hard limit.
    pub stiffness: Scalar,
    /// Damping of a soft limit (N·s/m or N·m·s/rad).
    pub damping: Scalar,
    /// Restitution of a hard limit.
    pub restitution: Scalar,
    /// Approach speed below which a hard limit does not bounce, m/s or rad/s.
    pub bounce_threshold: Scalar,
}

impl D6Limit {
    /// A hard limit `[min, max]` without bounce. The ends are put in order when the joint
    /// enters the world; a NaN end frees the axis, with a warning.
    pub fn new(min: Scalar, max: Scalar) -> Self {
        Self {
            min,
            max,
            stiffness: 0.0,
            damping: 0.0,
            restitution: 0.0,
            bounce_threshold: 1.0,
        }
    }

    fn is_soft(&self) -> bool {
        self.stiffness > 0.0 || self.damping > 0.0
    }
}

impl Default for D6Limit {
    fn default() -> Self {
        Self::new(0.0, 0.0)
    }
}

/// A drive on one axis: `F = stiffness·(target − x) + damping·(target_velocity − ẋ)`, at most
/// `max_force`, implicit (stable for any stiffness and damping).
#[derive(Clone, Reflect, Copy, Debug, PartialEq)]
#[reflect(Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct D6Drive {
    /// N/m or N·m/rad (1/s² for acceleration drives).
    pub stiffness: Scalar,
    /// N·s/m or N·m·s/rad (1/s for acceleration drives).
    pub damping: Scalar,
    /// The largest force (N) or torque (N·m) the drive applies.
    pub max_force: Scalar,
    /// The drive sets an acceleration: the effective mass multiplies it.
    pub acceleration: bool,
}

impl D6Drive {
    /// A force drive with unlimited force.
    pub fn new(stiffness: Scalar, damping: Scalar) -> Self {
        Self {
            stiffness,
            damping,
            max_force: Scalar::INFINITY,
            acceleration: false,
        }
    }

    /// A velocity motor: a very stiff damper towards the target velocity, at most `max_force`.
    pub fn motor(max_force: Scalar) -> Self {
        Self::new(0.0, 1.0e9).with_max_force(max_force)
    }

    /// Limits the force (or torque). A NaN or negative limit is replaced by 0 (the drive
    /// applies no force) with a warning when the joint enters the world.
    pub fn with_max_force(mut self, max_force: Scalar) -> Self {
        self.max_force = max_force;
        self
    }

    /// Makes the drive set an acceleration rather than a force (independent of the masses).
    pub fn as_acceleration(mut self) -> Self {
        self.acceleration = true;
        self
    }
}

/// A configurable six-axis joint between two bodies: per-axis locks, limits and drives on
/// velocity rows (see [`rows`](crate::solver::rows)).
///
/// By default every axis is locked (a fixed joint). A prismatic suspension, a motorised wheel
/// and a cone-limited shoulder:
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// # let mut world = World::new();
/// # let (chassis, wheel, torso, arm) = (world.spawn_empty().id(), world.spawn_empty().id(), world.spawn_empty().id(), world.spawn_empty().id());
/// let suspension = D6Joint::new(chassis, wheel)
///     .with_local_anchor1(Vec3::new(1.0, -0.3, 1.5))
///     .with_limit(D6Axis::Y, -0.2, 0.2)
///     .with_drive(D6Axis::Y, D6Drive::new(20_000.0, 2_000.0))
///     .with_motion(D6Axis::Twist, D6Motion::Free)
///     .with_drive(D6Axis::Twist, D6Drive::motor(300.0))
///     .with_drive_target(D6Axis::Twist, 0.0, 10.0);
/// let shoulder = D6Joint::new(torso, arm)
///     .with_local_anchor1(Vec3::new(0.3, 0.4, 0.0))
///     .with_swing_cone(0.8, 0.6)
///     .with_limit(D6Axis::Twist, -0.5, 0.5);
/// ```
#[derive(Component, Reflect, Clone, Debug, PartialEq)]
#[reflect(Component, MapEntities, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
#[component(map_entities)]
#[require(crate::body::CreationOrder)]
pub struct D6Joint {
    /// The first body (its frame measures the joint).
    pub entity1: Entity,
    /// The second body.
    pub entity2: Entity,
    /// Frame origin in the first body's frame (relative to its origin).
    pub local_anchor1: Vector,
    /// Frame origin in the second body's frame.
    pub local_anchor2: Vector,
    /// Frame axes in the first body's frame.
    pub local_basis1: Quaternion,
    /// Frame axes in the second body's frame.
    pub local_basis2: Quaternion,
    /// The motion of each axis, indexed by [`D6Axis`].
    pub motions: [D6Motion; 6],
    /// The limit of each limited axis.
    pub limits: [D6Limit; 6],
    /// The drive of each axis, if any.
    pub drives: [Option<D6Drive>; 6],
    /// Drive target positions (m) and angles (rad).
    pub drive_targets: [Scalar; 6],
    /// Drive target velocities (m/s, rad/s).
    pub drive_velocities: [Scalar; 6],
    /// Whether the joined bodies collide with each other. Default `false`.
    pub collide_connected: bool,
    impulses: SmallVec<[Scalar; 12]>,
}

impl D6Joint {
    /// A joint with every axis locked, between the origins of `entity1` and `entity2`.
    pub fn new(entity1: Entity, entity2: Entity) -> Self {
        Self {
            entity1,
            entity2,
            local_anchor1: Vector::ZERO,
            local_anchor2: Vector::ZERO,
            local_basis1: Quaternion::IDENTITY,
            local_basis2: Quaternion::IDENTITY,
            motions: [D6Motion::Locked; 6],
            limits: [D6Limit::default(); 6],
            drives: [None; 6],
            drive_targets: [0.0; 6],
            drive_velocities: [0.0; 6],
            collide_connected: false,
            impulses: SmallVec::new(),
        }
    }

    /// Sets the frame origin in the first body's frame.
    pub fn with_local_anchor1(mut self, anchor: Vector) -> Self {
        self.local_anchor1 = anchor;
        self
    }

    /// Sets the frame origin in the second body's frame.
    pub fn with_local_anchor2(mut self, anchor: Vector) -> Self {
        self.local_anchor2 = anchor;
        self
    }

    /// Sets the frame axes in the first body's frame (normalised when the joint enters the
    /// world; a zero or non-finite rotation is replaced by the identity with a warning).
    pub fn with_local_basis_1(mut self, basis: Quaternion) -> Self {
        self.local_basis1 = basis;
        self
    }

    /// Sets the frame axes in the second body's frame (checked like the first).
    pub fn with_local_basis_2(mut self, basis: Quaternion) -> Self {
        self.local_basis2 = basis;
        self
    }

    /// Sets how `axis` may move.
    pub fn with_motion(mut self, axis: D6Axis, motion: D6Motion) -> Self {
        self.motions[axis as usize] = motion;
        self
    }

    /// Limits `axis` to `[min, max]` (m or rad) with a hard limit.
    pub fn with_limit(mut self, axis: D6Axis, min: Scalar, max: Scalar) -> Self {
        self.motions[axis as usize] = D6Motion::Limited;
        self.limits[axis as usize] = D6Limit::new(min, max);
        self
    }

    /// Makes the limit of `axis` soft: a spring of `stiffness` and `damping` beyond its ends
    /// (each finite and ≥ 0, else 0 with a warning).
    pub fn with_soft_limit(mut self, axis: D6Axis, stiffness: Scalar, damping: Scalar) -> Self {
        let limit = &mut self.limits[axis as usize];
        limit.stiffness = stiffness;
        limit.damping = damping;
        self
    }

    /// Makes the limit of `axis` bounce with `restitution` above `threshold` (m/s or rad/s).
    pub fn with_limit_restitution(
        mut self,
        axis: D6Axis,
        restitution: Scalar,
        threshold: Scalar,
    ) -> Self {
        let limit = &mut self.limits[axis as usize];
        limit.restitution = restitution;
        limit.bounce_threshold = threshold;
        self
    }

    /// Limits the swing to an elliptical cone of half-angles `swing1` (about Y) and `swing2`
    /// (about Z), radians.
    pub fn with_swing_cone(self, swing1: Scalar, swing2: Scalar) -> Self {
        self.with_limit(D6Axis::Swing1, 0.0, swing1.abs())
            .with_limit(D6Axis::Swing2, 0.0, swing2.abs())
    }

    /// Adds a drive to `axis`.
    pub fn with_drive(mut self, axis: D6Axis, drive: D6Drive) -> Self {
        self.drives[axis as usize] = Some(drive);
        self
    }

    /// Sets the drive target of `axis`: a position (m or rad) and a velocity.
    pub fn with_drive_target(mut self, axis: D6Axis, position: Scalar, velocity: Scalar) -> Self {
        self.drive_targets[axis as usize] = position;
        self.drive_velocities[axis as usize] = velocity;
        self
    }

    /// Lets the joined bodies collide with each other (they do not by default).
    pub fn with_collision(mut self, collide: bool) -> Self {
        self.collide_connected = collide;
        self
    }

    /// The impulses (N·s or N·m·s, over one step) the joint's rows applied in the last step,
    /// in the order: locked axes, limits, drives (see the module docs).
    pub fn row_impulses(&self) -> &[Scalar] {
        &self.impulses
    }

    /// The current coordinates of the joint (m and rad), indexed by [`D6Axis`], for bodies at
    /// the given poses.
    pub fn coordinates(
        &self,
        (position1, rotation1): (Vector, Quaternion),
        (position2, rotation2): (Vector, Quaternion),
    ) -> [Scalar; 6] {
        let f1 = rotation1 * self.local_basis1;
        let d = (position2 + rotation2 * self.local_anchor2)
            - (position1 + rotation1 * self.local_anchor1);
        let local = f1.inverse() * d;
        let angles = Angles::new(f1, rotation2 * self.local_basis2);
        [
            local.x,
            local.y,
            local.z,
            angles.twist,
            angles.swing.y,
            angles.swing.z,
        ]
    }
}

impl MapEntities for D6Joint {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.entity1 = mapper.get_mapped(self.entity1);
        self.entity2 = mapper.get_mapped(self.entity2);
    }
}

/// The swing–twist decomposition of frame 2 relative to frame 1.
struct Angles {
    twist: Scalar,
    /// The swing rotation vector in frame 1 (its x component is zero).
    swing: Vector,
}

impl Angles {
    fn new(f1: Quaternion, f2: Quaternion) -> Self {
        let mut q = f1.inverse() * f2;
        if q.w < 0.0 {
            q = -q;
        }
        let twist_length = (q.w * q.w + q.x * q.x).sqrt();
        if twist_length <= 1e-9 {
            // Swung by half a turn: the twist is undefined; call it zero.
            return Self {
                twist: 0.0,
                swing: rotation_vector(q),
            };
        }
        let twist = Quaternion::from_xyzw(q.x / twist_length, 0.0, 0.0, q.w / twist_length);
        let swing = rotation_vector(q * twist.conjugate());
        Self {
            twist: 2.0 * atan2(q.x, q.w),
            swing: Vector::new(0.0, swing.y, swing.z),
        }
    }
}

/// The joint's frames at the start of the step, and the rows built from them.
struct Frames {
    /// World axes of frame 1.
    axes1: [Vector; 3],
    /// The twist angle's rate per unit relative angular velocity: `(x₁ + x₂) / (1 + x₁·x₂)`
    /// for the frames' X axes `x₁`, `x₂` (just `x₂` would miss the twist that turning about
    /// `x₁` adds to a swung joint).
    twist_axis: Vector,
    /// Anchor 2 relative to each centre of mass.
    r1: Vector,
    r2: Vector,
    /// Coordinates by axis.
    x: [Scalar; 6],
    /// Swing angle.
    swing_angle: Scalar,
    /// Swing direction in frame 1's (Y, Z) plane, unit.
    swing_direction: (Scalar, Scalar),
}

impl Frames {
    fn new(joint: &D6Joint, b1: &RigidBodyQueryItem, b2: &RigidBodyQueryItem) -> Self {
        let (c1, c2) = (b1.current_center_of_mass(), b2.current_center_of_mass());
        let f1 = b1.rotation * joint.local_basis1;
        let f2 = b2.rotation * joint.local_basis2;
        let p1 = c1 + b1.rotation * (joint.local_anchor1 - b1.center_of_mass);
        let p2 = c2 + b2.rotation * (joint.local_anchor2 - b2.center_of_mass);
        let axes1 = [f1 * Vector::X, f1 * Vector::Y, f1 * Vector::Z];
        let d = p2 - p1;
        let angles = Angles::new(f1, f2);
        let swing_angle = angles.swing.length();
        let swing_direction = if swing_angle > 1e-6 {
            let unit = angles.swing / swing_angle;
            (unit.y, unit.z)
        } else {
            (1.0, 0.0)
        };
        Self {
            axes1,
            twist_axis: twist_rate_axis(axes1[0], f2 * Vector::X),
            r1: p2 - c1,
            r2: p2 - c2,
            x: [
                d.dot(axes1[0]),
                d.dot(axes1[1]),
                d.dot(axes1[2]),
                angles.twist,
                angles.swing.y,
                angles.swing.z,
            ],
            swing_angle,
            swing_direction,
        }
    }

    /// The row whose speed is the rate of coordinate `axis` (body 0 of the row is body 2 of
    /// the joint).
    fn row(&self, axis: usize) -> ConstraintRow {
        match axis {
            0..=2 => {
                let e = self.axes1[axis];
                ConstraintRow::new(e, self.r2.cross(e), e, self.r1.cross(e))
            }
            3 => ConstraintRow::angular(self.twist_axis),
            _ => ConstraintRow::angular(self.axes1[axis - 3]),
        }
    }
}

/// A row that never acts: keeps a joint's row count fixed while a limit is inactive.
fn inactive(row: ConstraintRow) -> ConstraintRow {
    row.with_impulse_limits(0.0, 0.0)
}

/// Negates a row's Jacobian.
fn flipped(row: ConstraintRow) -> ConstraintRow {
    ConstraintRow::new(-row.linear0, -row.angular0, -row.linear1, -row.angular1)
}

/// A one-sided row keeping `error ≥ 0` (the row's speed is the error's rate): hard (with
/// bounce), or a spring that acts only once the limit is passed.
fn limit_row(row: ConstraintRow, error: Scalar, limit: &D6Limit) -> ConstraintRow {
    let row = row
        .with_error(error)
        .with_impulse_limits(0.0, Scalar::INFINITY);
    if limit.is_soft() {
        if error < 0.0 {
            row.with_spring(limit.stiffness, limit.damping)
        } else {
            inactive(row)
        }
    } else if limit.restitution != 0.0 {
        row.with_restitution(limit.restitution, limit.bounce_threshold)
    } else {
        row
    }
}

impl Validate for D6Joint {
    fn validate(&mut self) -> Option<String> {
        // Runs every step for every joint (the solver writes its impulses): nothing here
        // allocates unless a value is bad.
        let frames = join([
            check_frame(&mut self.local_anchor1, &mut self.local_basis1, "frame 1"),
            check_frame(&mut self.local_anchor2, &mut self.local_basis2, "frame 2"),
        ]);
        let axes = D6Axis::ALL.map(|axis| {
            let i = axis as usize;
            let limit = if self.motions[i] == D6Motion::Limited {
                check_limit(&mut self.limits[i], &mut self.motions[i])
            } else {
                None
            };
            let problems = join([
                limit,
                check_drive(&mut self.drives[i]),
                check_target(self, i),
            ]);
            problems.map(|p| format!("{axis:?} {p}"))
        });
        join(std::iter::once(frames).chain(axes))
    }
}

/// A non-finite anchor is the body origin; a degenerate basis the identity.
fn check_frame(anchor: &mut Vector, basis: &mut Quaternion, what: &str) -> Option<String> {
    let anchor_problem = (!anchor.is_finite()).then(|| {
        let message = format!("{what} anchor {anchor} is not finite; using the body origin");
        *anchor = Vector::ZERO;
        message
    });
    let basis_problem = if is_finite_quat(*basis) {
        // Checked every step: a unit rotation is left bit for bit as it is.
        if (basis.length_squared() - 1.0).abs() > 4.0 * Scalar::EPSILON {
            *basis = basis.normalize();
        }
        None
    } else {
        let message = format!("{what} basis {basis} is not a rotation; using the identity");
        *basis = Quaternion::IDENTITY;
        Some(message)
    };
    join([anchor_problem, basis_problem])
}

/// Orders a limit's ends, or frees the axis if an end is NaN or the range is empty; replaces
/// bad softness and bounce values.
fn check_limit(limit: &mut D6Limit, motion: &mut D6Motion) -> Option<String> {
    let mut range = Some((limit.min, limit.max));
    if let Some(problem) = check_limits(&mut range, "limits") {
        *motion = D6Motion::Free;
        return Some(format!("{problem} (the axis is free)"));
    }
    (limit.min, limit.max) = range.unwrap_or_default();
    let why = "is not a finite number ≥ 0";
    let d = D6Limit::default();
    join([
        check(
            &mut limit.stiffness,
            non_negative,
            "limit stiffness",
            why,
            0.0,
        ),
        check(&mut limit.damping, non_negative, "limit damping", why, 0.0),
        check(
            &mut limit.restitution,
            Scalar::is_finite,
            "limit restitution",
            "is not finite",
            0.0,
        ),
        check(
            &mut limit.bounce_threshold,
            non_negative,
            "bounce threshold",
            why,
            d.bounce_threshold,
        ),
    ])
}

/// Replaces a drive's bad stiffness or damping by 0 and a NaN or negative force limit by 0.
fn check_drive(drive: &mut Option<D6Drive>) -> Option<String> {
    let drive = drive.as_mut()?;
    let why = "is not a finite number ≥ 0";
    join([
        check(
            &mut drive.stiffness,
            non_negative,
            "drive stiffness",
            why,
            0.0,
        ),
        check(&mut drive.damping, non_negative, "drive damping", why, 0.0),
        check(
            &mut drive.max_force,
            |f| f >= 0.0,
            "drive max_force",
            "is NaN or negative",
            0.0,
        ),
    ])
}

/// Replaces a non-finite drive target position or velocity by 0.
fn check_target(joint: &mut D6Joint, i: usize) -> Option<String> {
    let why = "is not finite";
    join([
        check(
            &mut joint.drive_targets[i],
            Scalar::is_finite,
            "drive target",
            why,
            0.0,
        ),
        check(
            &mut joint.drive_velocities[i],
            Scalar::is_finite,
            "drive velocity",
            why,
            0.0,
        ),
    ])
}

impl VelocityConstraint<2> for D6Joint {
    fn entities(&self) -> [Entity; 2] {
        [self.entity1, self.entity2]
    }

    fn rows(&self, [b1, b2]: [&RigidBodyQueryItem; 2], rows: &mut RowSink) {
        let frames = Frames::new(self, b1, b2);
        let dt = rows.step_duration();
        let mut add = |row: ConstraintRow| rows.add_between(1, Some(0), row);
        for axis in 0..6 {
            if self.motions[axis] == D6Motion::Locked {
                add(frames.row(axis).with_error(frames.x[axis]));
            }
        }
        for axis in [0, 1, 2, 3] {
            if self.motions[axis] == D6Motion::Limited {
                let limit = &self.limits[axis];
                let row = frames.row(axis);
                add(limit_row(row, frames.x[axis] - limit.min, limit));
                add(limit_row(flipped(row), limit.max - frames.x[axis], limit));
            }
        }
        if self.motions[4] == D6Motion::Limited || self.motions[5] == D6Motion::Limited {
            add(self.cone_row(&frames));
        }
        for axis in 0..6 {
            if let Some(drive) = self.drives[axis] {
                let max = drive.max_force * dt;
                add(drive_row(frames.row(axis), &frames, axis, self, &drive)
                    .with_impulse_limits(-max, max));
            }
        }
    }

    fn impulses(&mut self, impulses: &[Scalar]) {
        self.impulses.clear();
        self.impulses.extend_from_slice(impulses);
    }
}

impl D6Joint {
    /// The swing cone: the swing vector `(s_y, s_z)` (frame 1's Y and Z components of the
    /// swing rotation vector) stays inside the ellipse `(s_y/a)² + (s_z/b)² ≤ 1`. The row acts
    /// along the ellipse's normal where the radial line through the swing vector meets it;
    /// pushing radially instead would, on an elliptical cone, also push along the edge, and a
    /// limb resting against its cone would keep sliding round it.
    fn cone_row(&self, frames: &Frames) -> ConstraintRow {
        let half_angle = |axis: usize| {
            if self.motions[axis] == D6Motion::Limited {
                self.limits[axis].max.max(1e-4)
            } else {
                std::f32::consts::PI
            }
        };
        let (a, b) = (half_angle(4), half_angle(5));
        let (dy, dz) = frames.swing_direction;
        let radius = 1.0 / Vec2::new(dy / a, dz / b).length();
        let normal = Vec2::new(dy / (a * a), dz / (b * b)).normalize();
        // The normal's radial and tangential parts (tangent: the swing direction turned +90°
        // about frame 1's X), and the rates of the swing vector along them.
        let (radial, tangential) = (
            normal.dot(Vec2::new(dy, dz)),
            normal.dot(Vec2::new(-dz, dy)),
        );
        let [x1, y1, z1] = frames.axes1;
        let axis = radial * (y1 * dy + z1 * dz)
            + tangential * swing_tangent_rate_axis(x1, y1 * -dz + z1 * dy, frames.swing_angle);
        // The swing grows along the axis: the row's speed is its negated rate.
        let row = ConstraintRow::angular(-axis);
        let limit = if self.motions[4] == D6Motion::Limited {
            &self.limits[4]
        } else {
            &self.limits[5]
        };
        // Distance to the edge along the normal, from the radial gap.
        let error = (radius - frames.swing_angle) * radial;
        limit_row(row, error, limit)
    }
}

/// See [`Frames::twist_axis`]; at half a turn of swing the twist is undefined, and `x₂` is used.
fn twist_rate_axis(x1: Vector, x2: Vector) -> Vector {
    let denominator = 1.0 + x1.dot(x2);
    if denominator > 1e-3 {
        (x1 + x2) / denominator
    } else {
        x2
    }
}

/// The rate of the swing vector's tangential component (`θ` times the rate of its direction's
/// angle about `x1`) per unit relative angular velocity, for swing angle `θ` and the world
/// tangent direction `tangent`: `θ cot θ · tangent + θ · x1`. Turning about `x1` moves the
/// swing direction round as well, and a twist about the swung `x2` moves nothing.
fn swing_tangent_rate_axis(x1: Vector, tangent: Vector, theta: Scalar) -> Vector {
    if theta < 1e-4 {
        return tangent;
    }
    tangent * (theta / tan(theta)) + x1 * theta
}

/// A drive's spring row on `axis` (without its force limit).
fn drive_row(
    row: ConstraintRow,
    frames: &Frames,
    axis: usize,
    joint: &D6Joint,
    drive: &D6Drive,
) -> ConstraintRow {
    let error = frames.x[axis] - joint.drive_targets[axis];
    let error = if axis == 3 {
        crate::solver::joints::wrap_angle(error)
    } else {
        error
    };
    let row = row
        .with_error(error)
        .with_velocity_target(joint.drive_velocities[axis]);
    if drive.acceleration {
        row.with_acceleration_spring(drive.stiffness, drive.damping)
    } else {
        row.with_spring(drive.stiffness, drive.damping)
    }
}

#[cfg(test)]
// Tests build their scenes with platform math; the rule (`clippy.toml`) guards the step.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    /// The twist and cone rows' axes give the rates of the swing–twist coordinates: checked
    /// against finite differences of the decomposition for swung and twisted frames and
    /// arbitrary relative angular velocities.
    #[test]
    fn row_axes_are_the_rates_of_the_swing_twist_coordinates() {
        let cases = [
            (
                Vector::new(0.0, 0.5, -0.3),
                0.4,
                Vector::new(0.3, -0.8, 0.5),
            ),
            (
                Vector::new(0.0, -0.2, 0.6),
                -0.7,
                Vector::new(-0.9, 0.2, 0.7),
            ),
            (Vector::new(0.0, 0.9, 0.1), 0.1, Vector::new(0.6, 0.6, -0.4)),
        ];
        let h = 1e-3;
        for (swing, twist, omega) in cases {
            let f2 = Quaternion::from_scaled_axis(swing) * Quaternion::from_rotation_x(twist);
            let at = |t: Scalar| {
                Angles::new(
                    Quaternion::IDENTITY,
                    Quaternion::from_scaled_axis(omega * t) * f2,
                )
            };
            let (before, after) = (at(-h), at(h));
            let twist_rate = (after.twist - before.twist) / (2.0 * h);
            let swing_rate = (after.swing - before.swing) / (2.0 * h);

            let now = at(0.0);
            let theta = now.swing.length();
            let (u, t) = (now.swing / theta, Vector::X.cross(now.swing / theta));
            let x2 = f2 * Vector::X;
            let expected_twist = omega.dot(twist_rate_axis(Vector::X, x2));
            let expected_tangent = omega.dot(swing_tangent_rate_axis(Vector::X, t, theta));
            assert!(
                (twist_rate - expected_twist).abs() < 1e-3,
                "{twist_rate} vs {expected_twist}"
            );
            assert!((swing_rate.dot(u) - omega.dot(u)).abs() < 1e-3);
            assert!(
                (swing_rate.dot(t) - expected_tangent).abs() < 1e-3,
                "{} vs {expected_tangent}",
                swing_rate.dot(t)
            );
        }
    }
}
