//! Input validation: what the engine does with values it cannot use.
//!
//! Every public component, resource and builder value is checked where it enters the
//! simulation: at the start of [`PhysicsStepSet::Prepare`](crate::PhysicsStepSet::Prepare),
//! whenever it was added or changed since the last step ([`SubstepCount`](crate::SubstepCount)
//! when the step starts, since it decides how the step runs). A value the engine cannot use is
//! reported with a `warn!` naming the entity (or the resource) and the value, then replaced by
//! the fallback below; the rest of the world simulates as if nothing happened. Each entity is
//! reported once per component, and each resource once, however often the bad value is written
//! again (non-finite velocities are reported each time they are reset). Where the fallback is written back into the component, a system that
//! reads the component afterwards sees the value the engine uses. Builders keep what they are
//! given, so that the warning can name the entity the value ends up on. Nothing in this table
//! panics.
//!
//! | input | rejected | fallback |
//! | --- | --- | --- |
//! | [`Friction`](crate::Friction) coefficient | NaN, +∞ | 0.5 (the default), written back |
//! | | negative (−∞ too) | 0, written back |
//! | [`Restitution`](crate::Restitution) coefficient | NaN, ±∞, negative | 0 (the default), written back |
//! | [`ColliderDensity`](crate::ColliderDensity) | NaN, ±∞, negative | 1000 kg/m³ (the default), written back. Zero is valid: the collider adds no mass |
//! | [`Mass`](crate::Mass) | NaN, ±∞, zero, negative | the mass from the colliders (kept in the component, ignored) |
//! | [`CenterOfMass`](crate::CenterOfMass) | NaN, ±∞ | the centre of mass from the colliders (kept, ignored) |
//! | inertia from colliders | not finite (degenerate shapes) | a unit sphere's inertia for the body's mass |
//! | [`Collider`](crate::Collider), however it is made (constructors, a parry shape, a mesh, `ColliderConstructor`, a file: see `collision::shape_data`, feature `serialize`) | zero, negative or non-finite size; a mesh index past its vertex list; a non-finite vertex or height; a heightfield that is not a grid of at least 2 × 2 samples; a hull of fewer than four points, flat, or with none; a size past [`MAX_COLLIDER_EXTENT`] or more elements than the caps below | the collider is ignored until replaced (the body keeps a mass; see [`mass`](crate::body::mass)) |
//! | a part of [`Collider::compound`](crate::Collider::compound) | invalid, zero-size, composite, at a non-finite pose | that part is dropped, the entity reported with the part's index; the others collide and give mass |
//! | [`LinearDamping`](crate::LinearDamping), [`AngularDamping`](crate::AngularDamping) | NaN, ±∞, negative | 0, written back |
//! | [`GravityScale`](crate::GravityScale) | NaN, ±∞ (negative is allowed) | 1, written back |
//! | [`ConstantForce`](crate::ConstantForce), [`ConstantTorque`](crate::ConstantTorque) | any non-finite component | zero, written back |
//! | [`ExternalImpulse`](crate::ExternalImpulse) | any non-finite component | ignored (cleared), written back |
//! | [`Position`](crate::Position), [`Rotation`](crate::Rotation), [`Transform`] of a body | non-finite, zero-length rotation | the last valid pose (the origin before the first) |
//! | [`LinearVelocity`](crate::LinearVelocity), [`AngularVelocity`](crate::AngularVelocity) | any non-finite component | both reset to zero |
//! | [`KinematicTarget`](crate::KinematicTarget) | any non-finite component, a zero-length rotation; on a body that is not kinematic | ignored (kept in the component): the body moves by its velocities; reported whenever the target or the body kind changes |
//! | [`ContactForceThreshold`](crate::ContactForceThreshold) | NaN, negative | +∞ (no contact force events), written back |
//! | a collider's offset from its body (the `Transform`s from the collider up to the body) | non-finite | the last valid offset (the body origin before the first) |
//! | joint anchors ([`Joint::with_local_anchor1`](crate::solver::joints::Joint::with_local_anchor1), `_2`) | any non-finite component | the body origin, written back |
//! | joint compliance ([`Joint::with_compliance`](crate::solver::joints::Joint::with_compliance)) | NaN, ±∞, negative | 0 (rigid), written back |
//! | joint velocity damping ([`Joint::with_linear_velocity_damping`](crate::solver::joints::Joint::with_linear_velocity_damping), angular) | NaN, ±∞, negative | 0, written back |
//! | joint break force ([`Joint::with_break_force`](crate::solver::joints::Joint::with_break_force)) | NaN, negative | none (the joint never breaks), written back |
//! | joint axes (revolute aligned, prismatic free, spherical swing and twist) | zero length, non-finite | the default axis, written back |
//! | joint limits (angle, distance, swing, twist) | a NaN end, an empty range (`min = +∞` or `max = −∞`) | no limit (a distance joint keeps its starting distance), written back |
//! | | ends in the wrong order | swapped (not an error) |
//! | | a negative distance | 0, written back |
//! | [`JointMotor`](crate::solver::joints::JointMotor) `max_force` | NaN, negative | 0 (the motor applies no force), written back |
//! | [`JointMotor`](crate::solver::joints::JointMotor) target | NaN, ±∞ | the motor is removed |
//! | [`JointMotor`](crate::solver::joints::JointMotor) position compliance | NaN, ±∞, negative | 0, written back |
//! | [`D6Joint`](crate::solver::joints::D6Joint) frame anchors; bases | non-finite; zero-length or non-finite | the body origin; the identity, written back |
//! | [`D6Joint`](crate::solver::joints::D6Joint) limit of a limited axis | a NaN end, an empty range | the axis becomes [`Free`](crate::solver::joints::D6Motion::Free), written back (ends in the wrong order are swapped) |
//! | [`D6Joint`](crate::solver::joints::D6Joint) limit stiffness, damping; restitution; bounce threshold | NaN, ±∞, negative; non-finite; NaN, ±∞, negative | 0; 0; the default 1, written back |
//! | [`D6Drive`](crate::solver::joints::D6Drive) stiffness, damping; `max_force` | NaN, ±∞, negative; NaN, negative | 0 (the drive applies no force), written back |
//! | [`D6Joint`](crate::solver::joints::D6Joint) drive targets and velocities | NaN, ±∞ | 0, written back |
//! | [`ConstraintRow`](crate::solver::rows::ConstraintRow)s of user velocity constraints | non-finite Jacobian, error or target; NaN or crossed impulse limits; bad softness | the row is skipped, with a warning naming the constraint (see [`rows`](crate::solver::rows)) |
//! | joints and constraints naming entities | a missing or non-body entity, the same entity twice | the constraint is skipped |
//! | [`Gravity`](crate::Gravity) | any non-finite component | `(0, −9.81, 0)` (the default), written back |
//! | [`SubstepCount`](crate::SubstepCount) | 0; more than [`MAX_SUBSTEPS`] | 1; [`MAX_SUBSTEPS`], written back |
//! | [`XpbdIterations`](crate::solver::xpbd::XpbdIterations) | 0; more than [`MAX_XPBD_ITERATIONS`] | 1; [`MAX_XPBD_ITERATIONS`], written back |
//! | [`SolverConfig`](crate::SolverConfig) fields | NaN, ±∞, negative; zero for `contact_frequency`, `static_stiffness_factor` and `max_linear_speed` | that field's default, written back |
//! | | `linear_slop` above [`MAX_LINEAR_SLOP`], `max_linear_speed` above [`MAX_LINEAR_SPEED`] | the cap, written back |
//! | [`SleepThreshold`](crate::SleepThreshold) fields | NaN, negative (+∞ is allowed) | that field's default, written back |
//! | timestep (the parent schedule's `Time` delta) | zero (a paused clock) | the step is skipped (no warning: pausing is not an error) |
//!
//! ## Caps
//!
//! Level and save files are input too, so every count or size a file or a user can set is
//! bounded: no value makes a step run for minutes, and no file makes the engine allocate much
//! more than the file's own size. (A list in a file, such as a mesh's vertices, costs what it
//! holds; the caps bound the work done with it.)
//!
//! | count or size | cap | why |
//! | --- | --- | --- |
//! | [`SubstepCount`](crate::SubstepCount) | [`MAX_SUBSTEPS`] (256), with a warning | every substep runs the whole solver |
//! | [`XpbdIterations`](crate::solver::xpbd::XpbdIterations) | [`MAX_XPBD_ITERATIONS`] (64), with a warning | every pass solves every joint; 20 million passes hung an app |
//! | a collider's size along each axis of its frame | [`MAX_COLLIDER_EXTENT`] (1,000 km): the collider is rejected | f32 positions resolve 6 cm there; larger shapes overflow mass and reach |
//! | triangle-mesh vertices, triangles | [`MAX_TRIMESH_ELEMENTS`] (2²¹ each): the collider is rejected | parry builds a tree over the triangles |
//! | heightfield samples | [`MAX_HEIGHTFIELD_SAMPLES`] (2²⁴): rejected | the grid is copied into parry's layout |
//! | convex-hull points | [`MAX_HULL_POINTS`] (2¹⁶): rejected | building a hull takes time growing with the square of its points when most are on it |
//! | compound parts | [`MAX_COMPOUND_PARTS`] (2¹⁶): rejected | each part is a shape of its own in the narrow phase |
//! | V-HACD resolution (`VhacdParameters`, feature `collider-from-mesh`) | `VhacdParameters::MAX_RESOLUTION` (256): rejected | voxels grow with its cube |
//! | character casts per move ([`MoveAndSlideConfig::max_iterations`](crate::character::MoveAndSlideConfig::max_iterations)) | [`MAX_SLIDE_ITERATIONS`] (64), used as that | each is a shape cast |
//! | debug circle segments (`PhysicsGizmos::circle_segments`) | [`MAX_CIRCLE_SEGMENTS`] (256), used as that | lines drawn per circle per frame |
//! | contact tolerance ([`SolverConfig::linear_slop`](crate::SolverConfig::linear_slop)) | [`MAX_LINEAR_SLOP`] (0.1 m), with a warning | moving bodies' boxes grow by four times it |
//! | speed limit ([`SolverConfig::max_linear_speed`](crate::SolverConfig#structfield.max_linear_speed)) | [`MAX_LINEAR_SPEED`] (10 km/s), with a warning | moving bodies' boxes cover their step's path |
//! | hits of ray and shape casters (`max_hits` of [`RayCaster`](crate::spatial_query::RayCaster), [`ShapeCaster`](crate::spatial_query::ShapeCaster) and the [`SpatialQuery`](crate::spatial_query::SpatialQuery) methods) | the colliders the query finds | hits are only kept, never allocated ahead, so a huge `max_hits` costs nothing |
//! | contact points per manifold | parry's generators make at most a few; more than four are reduced to four | no setting |
//! | nesting of compounds in a file | one level (parts cannot be compounds) | the file form cannot express more, whatever the format's recursion limit |
//!
//! Why write fallbacks back: the component then says what the engine does, and a value fixed
//! once is not reported again. `Mass` and `CenterOfMass` are the exception: there is no value
//! that means "use the colliders'", so the bad value stays and is ignored until it changes.

use bevy::ecs::component::Mutable;
use bevy::ecs::entity::EntityHashSet;
use bevy::prelude::*;

use crate::schedule::PhysicsSchedule;

/// The most substeps a step runs; a larger [`SubstepCount`](crate::SubstepCount) is capped
/// here (with a warning), so a mistyped count cannot hang the app.
pub const MAX_SUBSTEPS: u32 = 256;

/// The most XPBD passes a substep makes; a larger
/// [`XpbdIterations`](crate::solver::xpbd::XpbdIterations) is capped here (with a warning).
/// Joint structures that need more converge better with more substeps.
pub const MAX_XPBD_ITERATIONS: u32 = 64;

/// The largest a collider may be along any axis of its own frame, m: 1,000 km. f32 resolves
/// positions there no better than 6 cm, and a larger shape's reach and mass overflow the
/// engine's arithmetic (a 10³⁰ m box, from a level file, panicked the broad phase).
pub const MAX_COLLIDER_EXTENT: f32 = 1.0e6;

/// The most vertices, and the most triangles, a triangle-mesh collider may have: 2²¹ each,
/// a few hundred megabytes with parry's tree over the triangles.
pub const MAX_TRIMESH_ELEMENTS: usize = 1 << 21;

/// The most samples a heightfield collider may have: 2²⁴, a 4,096 × 4,096 grid (64 MB).
pub const MAX_HEIGHTFIELD_SAMPLES: usize = 1 << 24;

/// The most points a convex hull may be built from: 2¹⁶. Building a hull takes time growing
/// with the square of the points on it.
pub const MAX_HULL_POINTS: usize = 1 << 16;

/// The most parts a compound collider may have: 2¹⁶.
pub const MAX_COMPOUND_PARTS: usize = 1 << 16;

/// The largest [`SolverConfig::linear_slop`](crate::SolverConfig::linear_slop), m: every
/// moving body's broad-phase box reaches four times it further on every side, and a metre of
/// tolerance makes a dense pile's every neighbour a candidate.
pub const MAX_LINEAR_SLOP: f32 = 0.1;

/// The largest [`SolverConfig::max_linear_speed`](crate::SolverConfig#structfield.max_linear_speed),
/// m/s: a body's broad-phase box covers the path it may take in a step.
pub const MAX_LINEAR_SPEED: f32 = 10_000.0;

/// The most casts a character's move may make
/// ([`MoveAndSlideConfig::max_iterations`](crate::character::MoveAndSlideConfig::max_iterations)).
pub const MAX_SLIDE_ITERATIONS: u32 = 64;

/// The most line segments the debug renderer draws per circle
/// (`PhysicsGizmos::circle_segments`, feature `debug-render`).
pub const MAX_CIRCLE_SEGMENTS: u32 = 256;

/// The validation systems: first in [`PhysicsStepSet::Prepare`](crate::PhysicsStepSet::Prepare),
/// before the transform sync and the mass update read what they check.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ValidationSet;

/// Registers validation systems in [`ValidationSet`].
pub(crate) trait ValidationApp {
    /// Validates every added or changed `T` component.
    fn validate_component<T: Component<Mutability = Mutable> + Validate>(&mut self) -> &mut Self;
    /// Validates the resource `R` whenever it changes.
    fn validate_resource<R: Resource<Mutability = Mutable> + Validate>(&mut self) -> &mut Self;
}

impl ValidationApp for App {
    fn validate_component<T: Component<Mutability = Mutable> + Validate>(&mut self) -> &mut Self {
        self.add_systems(
            PhysicsSchedule,
            validate_components::<T>.in_set(ValidationSet),
        )
    }

    fn validate_resource<R: Resource<Mutability = Mutable> + Validate>(&mut self) -> &mut Self {
        self.add_systems(
            PhysicsSchedule,
            validate_resource::<R>.in_set(ValidationSet),
        )
    }
}

/// A value that can check itself and fall back to something usable.
pub(crate) trait Validate {
    /// Replaces what cannot be used by its fallback and returns a description of what was
    /// wrong (the value and the fallback), or returns `None` if the value is usable.
    fn validate(&mut self) -> Option<String>;
}

/// Checks every added or changed `T`, repairing it in place (without marking it changed
/// again) and warning once per entity.
pub(crate) fn validate_components<T: Component<Mutability = Mutable> + Validate>(
    mut items: Query<(Entity, &mut T), Changed<T>>,
    mut removed: RemovedComponents<T>,
    mut warned: Local<EntityHashSet>,
) {
    for entity in removed.read() {
        warned.remove(&entity);
    }
    for (entity, mut item) in &mut items {
        if let Some(problem) = item.bypass_change_detection().validate()
            && warned.insert(entity)
        {
            warn!("{entity}: {problem}");
        }
    }
}

/// Checks the resource `R` whenever it changes, repairing it in place and warning once.
pub(crate) fn validate_resource<R: Resource<Mutability = Mutable> + Validate>(
    resource: Option<ResMut<R>>,
    mut warned: Local<bool>,
) {
    let Some(mut resource) = resource else {
        return;
    };
    if !resource.is_changed() {
        return;
    }
    if let Some(problem) = resource.bypass_change_detection().validate()
        && !std::mem::replace(&mut *warned, true)
    {
        warn!("{}: {problem}", short_type_name::<R>());
    }
}

/// `R`'s name without its module path.
fn short_type_name<R>() -> &'static str {
    let name = std::any::type_name::<R>();
    name.rsplit("::").next().unwrap_or(name)
}

/// Replaces `value` by `fallback` unless it passes `valid`, describing the change as
/// "`what` `value` `why`; using `fallback`".
pub(crate) fn check(
    value: &mut f32,
    valid: impl Fn(f32) -> bool,
    what: &str,
    why: &str,
    fallback: f32,
) -> Option<String> {
    if valid(*value) {
        return None;
    }
    let message = format!("{what} {} {why}; using {fallback}", *value);
    *value = fallback;
    Some(message)
}

/// Replaces a vector with a non-finite component by zero.
pub(crate) fn check_vector(value: &mut bevy::math::Vec3, what: &str) -> Option<String> {
    if value.is_finite() {
        return None;
    }
    let message = format!("{what} {value} is not finite; using zero");
    *value = bevy::math::Vec3::ZERO;
    Some(message)
}

/// Replaces `value` by `cap` if it is larger, describing the change.
pub(crate) fn cap(value: &mut f32, cap: f32, what: &str) -> Option<String> {
    (*value > cap).then(|| {
        let message = format!("{what} {} is more than {cap}; using {cap}", *value);
        *value = cap;
        message
    })
}

/// Finite and not negative.
pub(crate) fn non_negative(value: f32) -> bool {
    value.is_finite() && value >= 0.0
}

/// Joins the problems found in one value, or `None` if there were none.
pub(crate) fn join(problems: impl IntoIterator<Item = Option<String>>) -> Option<String> {
    let all: Vec<String> = problems.into_iter().flatten().collect();
    (!all.is_empty()).then(|| all.join("; "))
}
