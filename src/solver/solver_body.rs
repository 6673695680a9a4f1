//! Dense solver storage, read from the ECS once at the start of a step and written back once
//! at its end: per awake dynamic or kinematic body, a [`RigidBodyQueryItem`] with what stays
//! fixed through the step (inverse mass and inertia, forces, damping, the starting pose) and a
//! 64-byte `BodyState` with what the substeps move (velocities, displacement, rotation).
//! Every stage of the substep reads and writes the states, so a body's velocity and pose have
//! one live copy from the first substep to the write-back (the `b2BodySim` / `b2BodyState`
//! split of Erin Catto's Box2D v3).
//!
//! Slot 0 is a shared static body (infinite mass, no velocity, never moves): every contact with
//! a static or sleeping body points at it, so static bodies cost nothing. Static or sleeping
//! bodies named by joints and user constraints get a slot of their own, appended when the
//! constraint is prepared, so the XPBD code can treat every participant the same way.

use bevy::math::Vec4;
use bevy::prelude::*;

use crate::body::{
    AngularDamping, AngularVelocity, ComputedMass, ConstantForce, ConstantTorque, ExternalImpulse,
    GravityScale, LinearDamping, LinearVelocity, LockedAxes, Position, RigidBody, Rotation,
    Sleeping,
};
use crate::math::{Matrix3, Quaternion, Scalar, Vector, integrate_rotation, rotate_inertia};
use crate::parallel::{Shared, parallel_for, pool_with_helpers};
use crate::schedule::PhysicsStepTime;
use crate::settings::Gravity;

/// One body inside the running step, backed by the dense solver storage.
///
/// This is what [`XpbdConstraint::solve`](crate::solver::xpbd::XpbdConstraint::solve) receives.
/// Positions and rotations are the body's *current* state within the substep; use
/// [`current_position`](Self::current_position) for the origin and
/// [`current_center_of_mass`](Self::current_center_of_mass) for the centre of mass.
///
/// The public fields are what a constraint moves (velocities, the accumulated translation and
/// the rotation): a view of the body's live state in the solver, filled in just before the
/// constraint runs and read back just after it. Everything else describes the
/// body for this step and is read through methods ([`entity`](Self::entity),
/// [`rb`](Self::rb), [`inverse_mass`](Self::inverse_mass),
/// [`center_of_mass`](Self::center_of_mass),
/// [`local_inverse_inertia`](Self::local_inverse_inertia),
/// [`locked_axes`](Self::locked_axes), [`start_position`](Self::start_position)): writing
/// them would change nothing the engine keeps, so they cannot be written.
///
/// ```compile_fail
/// # use impetus3d::prelude::*;
/// fn pin(body: &mut RigidBodyQueryItem) {
///     body.locked_axes = LockedAxes::ALL_LOCKED; // not a public field: lock the axes with the
///                                                // `LockedAxes` component instead
/// }
/// ```
///
/// ```compile_fail
/// # use impetus3d::prelude::*;
/// fn teleport(body: &mut RigidBodyQueryItem) {
///     body.position = bevy::math::Vec3::ZERO; // move it with `accumulated_translation`
/// }
/// ```
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct RigidBodyQueryItem {
    /// Linear velocity of the centre of mass (world).
    pub linear_velocity: Vector,
    /// Inverse mass (0 for static and kinematic bodies).
    pub(crate) inverse_mass: Scalar,
    /// Angular velocity (world).
    pub angular_velocity: Vector,
    /// Centre-of-mass displacement accumulated since the start of the step (world).
    pub accumulated_translation: Vector,
    /// Current rotation.
    pub rotation: Quaternion,
    /// Rotation at the start of the step.
    pub(crate) start_rotation: Quaternion,
    /// World inverse inertia at the step's starting rotation, with locked axes removed.
    pub(crate) step_inverse_inertia: Matrix3,
    /// 1 on free translation axes, 0 on locked ones.
    pub(crate) translation_mask: Vector,
    /// World inverse inertia at the rotation the XPBD sets of this substep start from (filled
    /// in with the rest of the view, for constrained bodies).
    pub(crate) substep_inverse_inertia: Matrix3,
    /// The body entity.
    pub(crate) entity: Entity,
    /// The body kind.
    pub(crate) rb: RigidBody,
    /// Axes the body may not move or turn about.
    pub(crate) locked_axes: LockedAxes,
    /// Position of the body origin at the start of the step.
    pub(crate) position: Vector,
    /// Centre of mass in the body frame.
    pub(crate) center_of_mass: Vector,
    /// Inverse inertia about the centre of mass, in the body frame (0 for static/kinematic).
    pub(crate) local_inverse_inertia: Matrix3,
    /// World centre of mass at the start of the step.
    pub(crate) start_center: Vector,
    /// Velocity change per second from gravity and constant forces.
    pub(crate) linear_acceleration: Vector,
    /// Angular velocity change per second from constant torque.
    pub(crate) angular_acceleration: Vector,
    pub(crate) linear_damping: Scalar,
    pub(crate) angular_damping: Scalar,
    /// Pose before the XPBD sets of the current substep (filled in with the rest of the view,
    /// for constrained bodies).
    pub(crate) pre_xpbd_center: Vector,
    pub(crate) pre_xpbd_rotation: Quaternion,
    /// Whether an XPBD constraint acts on the body this step (see
    /// [`SolverBodies::mark_constrained`]).
    pub(crate) constrained: bool,
    /// Inertia in the body frame, for the gyroscopic term; `None` where that term vanishes
    /// (equal principal moments) or cannot be formed (an infinite moment).
    pub(crate) gyroscopic_inertia: Option<Matrix3>,
}

impl RigidBodyQueryItem {
    /// A body that never moves, at `position` with `rotation`.
    pub(crate) fn fixed(
        entity: Entity,
        rb: RigidBody,
        position: Vector,
        rotation: Quaternion,
        com: Vector,
    ) -> Self {
        let center = position + rotation * com;
        Self {
            linear_velocity: Vector::ZERO,
            inverse_mass: 0.0,
            angular_velocity: Vector::ZERO,
            accumulated_translation: Vector::ZERO,
            rotation,
            step_inverse_inertia: Matrix3::ZERO,
            substep_inverse_inertia: Matrix3::ZERO,
            translation_mask: Vector::ZERO,
            entity,
            rb,
            locked_axes: LockedAxes::ALL_LOCKED,
            position,
            center_of_mass: com,
            local_inverse_inertia: Matrix3::ZERO,
            start_center: center,
            start_rotation: rotation,
            linear_acceleration: Vector::ZERO,
            angular_acceleration: Vector::ZERO,
            linear_damping: 0.0,
            angular_damping: 0.0,
            pre_xpbd_center: center,
            pre_xpbd_rotation: rotation,
            constrained: false,
            gyroscopic_inertia: None,
        }
    }

    /// A dynamic body with the given mass properties and locked axes, moving as `drive` says.
    ///
    /// Built in one expression from its inputs, with everything it calls inlined, so that the
    /// large record is written once, straight into the storage, and never read back while
    /// being filled in. Completing a copy in place (reading its fields back for the world
    /// inertia and the forces) and copying records from the stack cost a third of the gather:
    /// 10,000 free spheres went 1.87 → 1.65 ms per step.
    #[inline(always)]
    pub(crate) fn dynamic(
        entity: Entity,
        position: Vector,
        rotation: Quaternion,
        mass: &ComputedMass,
        locked: LockedAxes,
        drive: Drive,
    ) -> Self {
        let com = mass.local_center_of_mass;
        let center = position + rotation * com;
        let translation_mask = locked.translation_mask();
        let inverse_inertia = world_inverse_inertia(
            mass.local_inverse_inertia,
            rotation,
            locked,
            mass.inverse_mass,
        );
        let (gravity_scale, linear_damping, angular_damping, force, torque) = drive.forces;
        let g = drive.gravity * gravity_scale.map_or(1.0, |g| g.0);
        let f = force.map_or(Vector::ZERO, |f| f.0);
        let t = torque.map_or(Vector::ZERO, |t| t.0);
        Self {
            linear_velocity: drive.linear_velocity * translation_mask,
            inverse_mass: mass.inverse_mass,
            angular_velocity: drive.angular_velocity * locked.rotation_mask(),
            accumulated_translation: Vector::ZERO,
            rotation,
            start_rotation: rotation,
            step_inverse_inertia: inverse_inertia,
            translation_mask,
            substep_inverse_inertia: inverse_inertia,
            entity,
            rb: RigidBody::Dynamic,
            locked_axes: locked,
            position,
            center_of_mass: com,
            local_inverse_inertia: mass.local_inverse_inertia,
            start_center: center,
            linear_acceleration: (g + f * mass.inverse_mass) * translation_mask,
            angular_acceleration: inverse_inertia * t,
            linear_damping: linear_damping.map_or(0.0, |d| d.0.max(0.0)),
            angular_damping: angular_damping.map_or(0.0, |d| d.0.max(0.0)),
            pre_xpbd_center: center,
            pre_xpbd_rotation: rotation,
            constrained: false,
            gyroscopic_inertia: gyroscopic_inertia(mass.local_inverse_inertia),
        }
    }

    /// The body entity.
    pub fn entity(&self) -> Entity {
        self.entity
    }

    /// The body kind.
    pub fn rb(&self) -> RigidBody {
        self.rb
    }

    /// Inverse mass, 1/kg (0 for static and kinematic bodies).
    pub fn inverse_mass(&self) -> Scalar {
        self.inverse_mass
    }

    /// Centre of mass in the body frame.
    pub fn center_of_mass(&self) -> Vector {
        self.center_of_mass
    }

    /// Inverse inertia about the centre of mass, in the body frame (0 for static and kinematic
    /// bodies).
    pub fn local_inverse_inertia(&self) -> Matrix3 {
        self.local_inverse_inertia
    }

    /// The axes the body may not move along or turn about (set with the
    /// [`LockedAxes`] component; every axis for static and sleeping-static participants).
    pub fn locked_axes(&self) -> LockedAxes {
        self.locked_axes
    }

    /// World position of the body origin at the start of the step (see
    /// [`current_position`](Self::current_position) for where it is now).
    pub fn start_position(&self) -> Vector {
        self.position
    }

    /// The current world position of the body origin.
    pub fn current_position(&self) -> Vector {
        self.current_center_of_mass() - self.rotation * self.center_of_mass
    }

    /// The current world position of the centre of mass.
    pub fn current_center_of_mass(&self) -> Vector {
        self.start_center + self.accumulated_translation
    }

    /// True for dynamic bodies (the only ones constraints can move).
    pub fn is_dynamic(&self) -> bool {
        self.rb == RigidBody::Dynamic
    }

    /// Inverse mass with locked translation axes removed, per world axis.
    pub fn effective_inverse_mass(&self) -> Vector {
        self.inverse_mass * self.translation_mask
    }

    /// World inverse inertia, with locked rotation axes removed, at the rotation the body had
    /// when this substep's constraint solve began (rotations within one substep are small; see
    /// [`world_inv_inertia_now`](Self::world_inv_inertia_now) for the exact value).
    pub fn effective_world_inv_inertia(&self) -> Matrix3 {
        self.substep_inverse_inertia
    }

    /// World inverse inertia at the current rotation, with locked rotation axes removed.
    pub fn world_inv_inertia_now(&self) -> Matrix3 {
        self.world_inv_inertia_at(self.rotation)
    }

    /// World inverse inertia at `rotation`, with locked rotation axes removed.
    #[inline]
    pub(crate) fn world_inv_inertia_at(&self, rotation: Quaternion) -> Matrix3 {
        world_inverse_inertia(
            self.local_inverse_inertia,
            rotation,
            self.locked_axes,
            self.inverse_mass,
        )
    }

    /// Velocity of the world point at offset `r` from the centre of mass.
    #[inline]
    pub fn velocity_at(&self, r: Vector) -> Vector {
        self.linear_velocity + self.angular_velocity.cross(r)
    }
}

/// The world inverse inertia of a body turned by `rotation`, with locked rotation axes removed
/// (zero for a body of infinite mass).
#[inline(always)]
fn world_inverse_inertia(
    local: Matrix3,
    rotation: Quaternion,
    locked: LockedAxes,
    inverse_mass: Scalar,
) -> Matrix3 {
    if inverse_mass == 0.0 {
        return Matrix3::ZERO;
    }
    mask_rotation(rotate_inertia(local, rotation), locked)
}

/// The body-frame inertia of a body whose angular momentum turns with it (unequal principal
/// moments), or `None` if the gyroscopic term is zero or the inertia is infinite about an axis.
#[inline(always)]
fn gyroscopic_inertia(local_inverse_inertia: Matrix3) -> Option<Matrix3> {
    let isotropic = local_inverse_inertia.abs_diff_eq(
        Matrix3::from_diagonal(Vector::splat(local_inverse_inertia.x_axis.x)),
        1e-6 * local_inverse_inertia.x_axis.x.abs(),
    );
    if isotropic || !local_inverse_inertia.determinant().is_normal() {
        return None;
    }
    let inertia = local_inverse_inertia.inverse();
    inertia.is_finite().then_some(inertia)
}

fn mask_rotation(inverse_inertia: Matrix3, locked: LockedAxes) -> Matrix3 {
    // Nothing to remove (the usual case): the products below would return it bit for bit.
    if !(0..3).any(|axis| locked.is_rotation_locked(axis)) {
        return inverse_inertia;
    }
    let m = Matrix3::from_diagonal(locked.rotation_mask());
    m * inverse_inertia * m
}

/// What every stage of a substep reads and writes of one body, in one cache line (Box2D v3's
/// `b2BodyState`): velocities, the centre's displacement since the start of the step and the
/// rotation since then. It is the only live copy of these during the substeps; the
/// [`RigidBodyQueryItem`] of the same slot holds the body's constants for the step.
///
/// The `w` lane of each vector is unused (zero), so that four states load as the columns of a
/// 4×4 matrix.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(crate) struct BodyState {
    pub linear_velocity: Vec4,
    pub angular_velocity: Vec4,
    /// Centre-of-mass displacement since the start of the step.
    pub moved: Vec4,
    /// Rotation since the start of the step (the body's rotation is this times its
    /// `start_rotation`), kept with `w ≥ 0` so that twice its vector part is the small-angle
    /// rotation vector (see [`turned`](Self::turned)).
    pub rotation: Quaternion,
}

impl Default for BodyState {
    fn default() -> Self {
        Self {
            linear_velocity: Vec4::ZERO,
            angular_velocity: Vec4::ZERO,
            moved: Vec4::ZERO,
            rotation: Quaternion::IDENTITY,
        }
    }
}

impl BodyState {
    /// The state of `body` as its live fields describe it.
    #[inline]
    pub(crate) fn of(body: &RigidBodyQueryItem) -> Self {
        let mut state = Self::default();
        state.take_from(body);
        state
    }

    /// Sets the velocities and the pose from the live fields of `body` (the rotation only if
    /// it differs from the state's, so that a body a constraint left alone keeps its state bit
    /// for bit).
    #[inline]
    fn take_from(&mut self, body: &RigidBodyQueryItem) {
        self.set_velocities(body.linear_velocity, body.angular_velocity);
        self.moved = body.accumulated_translation.extend(0.0);
        if body.rotation != self.rotation * body.start_rotation {
            self.set_rotation(body.rotation * body.start_rotation.conjugate());
        }
    }

    #[inline]
    pub(crate) fn linear_velocity(&self) -> Vector {
        self.linear_velocity.truncate()
    }

    #[inline]
    pub(crate) fn angular_velocity(&self) -> Vector {
        self.angular_velocity.truncate()
    }

    #[inline]
    pub(crate) fn set_velocities(&mut self, linear: Vector, angular: Vector) {
        self.linear_velocity = linear.extend(0.0);
        self.angular_velocity = angular.extend(0.0);
    }

    /// Velocity of the world point at offset `r` from the centre of mass.
    #[inline]
    pub(crate) fn velocity_at(&self, r: Vector) -> Vector {
        self.linear_velocity() + self.angular_velocity().cross(r)
    }

    #[inline]
    pub(crate) fn add_velocities(&mut self, linear: Vector, angular: Vector) {
        self.linear_velocity += linear.extend(0.0);
        self.angular_velocity += angular.extend(0.0);
    }

    /// Centre-of-mass displacement since the start of the step.
    #[inline]
    pub(crate) fn moved(&self) -> Vector {
        self.moved.truncate()
    }

    /// The rotation since the start of the step as a small-angle rotation vector (`2 · vector
    /// part` of [`rotation`](Self::rotation)).
    #[inline]
    pub(crate) fn turned(&self) -> Vector {
        2.0 * Vector::new(self.rotation.x, self.rotation.y, self.rotation.z)
    }

    /// Sets the rotation since the start of the step (any sign, unnormalised allowed).
    #[inline]
    pub(crate) fn set_rotation(&mut self, rotation: Quaternion) {
        self.rotation = canonical(rotation);
    }
}

/// `q` or `−q` (the same rotation), whichever has `w ≥ 0`.
#[inline]
fn canonical(q: Quaternion) -> Quaternion {
    if q.w < 0.0 { -q } else { q }
}

/// Where a body was when this substep's XPBD sets began, for the velocity projection and for
/// the joints' damping and motors.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct XpbdStart {
    /// World centre of mass.
    pub center: Vector,
    /// Rotation since the start of the step (as [`BodyState::rotation`]).
    pub rotation: Quaternion,
}

impl XpbdStart {
    /// The XPBD start that the view fields of `body` describe.
    pub(crate) fn of_item(body: &RigidBodyQueryItem) -> Self {
        Self {
            center: body.pre_xpbd_center,
            rotation: canonical(body.pre_xpbd_rotation * body.start_rotation.conjugate()),
        }
    }
}

/// The dense body storage for the step in progress: one [`RigidBodyQueryItem`] per slot with
/// the body's constants for the step, and one `BodyState` per slot with what the substeps
/// move. Every stage of the substep (integration, contacts, velocity rows, joints, user
/// constraints, projection, restitution, swept CCD) reads and writes the states; the items'
/// public fields are only a view, filled in from the state where the engine hands an item to
/// a constraint.
///
/// Reflected without its contents (every field is ignored): it is the engine's working state,
/// rebuilt every step, so inspectors list it and scenes carry it empty, leaving the loading
/// world's own state in place (see [`reflection`](crate::reflection)).
#[derive(Resource, Reflect)]
#[reflect(Resource, Default)]
pub struct SolverBodies {
    #[reflect(ignore)]
    pub(crate) bodies: Vec<RigidBodyQueryItem>,
    /// The bodies' live states, by slot (see [`BodyState`]).
    #[reflect(ignore)]
    pub(crate) states: Vec<BodyState>,
    /// The slots XPBD constraints act on this step, each once, in the order they were named.
    #[reflect(ignore)]
    pub(crate) xpbd_slots: Vec<u32>,
    /// By slot: the pose at the start of this substep's XPBD sets (kept for
    /// [`xpbd_slots`](Self::xpbd_slots) only).
    #[reflect(ignore)]
    pub(crate) xpbd_start: Vec<XpbdStart>,
    /// Entity index → slot, valid only where `bodies[slot].entity` matches.
    #[reflect(ignore)]
    slots: Vec<u32>,
    /// The bodies the gather claimed slots for, from slot 1 on, in slot order.
    #[reflect(ignore)]
    gathered: Vec<Entity>,
    /// Sleeping bodies pulled into the step by constraints; woken at writeback.
    #[reflect(ignore)]
    pub(crate) woken: Vec<Entity>,
    /// Pairs of bodies joined by a constraint this step, for island building.
    #[reflect(ignore)]
    pub(crate) links: Vec<(Entity, Entity)>,
    /// The world's gravity this step, for bodies brought in after the gather.
    #[reflect(ignore)]
    pub(crate) gravity: Vector,
    /// Substep length, and how many substeps have integrated positions so far this step.
    #[reflect(ignore)]
    pub(crate) substep: Scalar,
    #[reflect(ignore)]
    pub(crate) substeps_done: u32,
    /// Counts gathers: a key for per-step caches that, unlike
    /// [`PhysicsStepTime::step_count`], never repeats (a snapshot restore sets the step count
    /// back).
    pub(crate) generation: u64,
}

impl Default for SolverBodies {
    fn default() -> Self {
        Self {
            bodies: vec![RigidBodyQueryItem::fixed(
                Entity::PLACEHOLDER,
                RigidBody::Static,
                Vector::ZERO,
                Quaternion::IDENTITY,
                Vector::ZERO,
            )],
            states: vec![BodyState::default()],
            xpbd_slots: Vec::new(),
            xpbd_start: Vec::new(),
            slots: Vec::new(),
            gathered: Vec::new(),
            woken: Vec::new(),
            links: Vec::new(),
            gravity: Vector::ZERO,
            substep: 0.0,
            substeps_done: 0,
            generation: 0,
        }
    }
}

impl SolverBodies {
    /// The shared static slot.
    pub const STATIC: usize = 0;

    /// The slot of an awake body in this step, if it has one.
    #[inline]
    pub fn slot(&self, entity: Entity) -> Option<usize> {
        let slot = *self.slots.get(entity.index_u32() as usize)? as usize;
        (slot != 0 && self.bodies.get(slot)?.entity == entity).then_some(slot)
    }

    /// The slot for a contact with `entity`: its own if awake, else the shared static slot.
    #[inline]
    pub(crate) fn contact_slot(&self, entity: Option<Entity>) -> usize {
        entity.and_then(|e| self.slot(e)).unwrap_or(Self::STATIC)
    }

    /// All bodies in the step (slot 0 is the shared static body), with their constants for
    /// the step. Their velocities and pose fields are those of the step's start, or of the
    /// last time the engine handed the item to a constraint: the live values are in the
    /// solver's body states.
    pub fn bodies(&self) -> &[RigidBodyQueryItem] {
        &self.bodies
    }

    pub(crate) fn push(&mut self, body: RigidBodyQueryItem) -> usize {
        let slot = self.bodies.len();
        self.map_slot(body.entity, slot);
        self.states.push(BodyState::of(&body));
        self.bodies.push(body);
        slot
    }

    /// Notes `entity` for the gather's next slot (see [`prepare_solver_bodies`]).
    fn claim_slot(&mut self, entity: Entity) {
        let slot = self.bodies.len() + self.gathered.len();
        self.map_slot(entity, slot);
        self.gathered.push(entity);
    }

    fn map_slot(&mut self, entity: Entity, slot: usize) {
        let index = entity.index_u32() as usize;
        if self.slots.len() <= index {
            self.slots.resize(index + 1, 0);
        }
        self.slots[index] = slot as u32;
    }

    /// The current rotation of the body in `slot`.
    #[inline]
    pub(crate) fn rotation(&self, slot: usize) -> Quaternion {
        self.states[slot].rotation * self.bodies[slot].start_rotation
    }

    /// The current world centre of mass of the body in `slot`.
    #[inline]
    pub(crate) fn center(&self, slot: usize) -> Vector {
        self.bodies[slot].start_center + self.states[slot].moved()
    }

    /// Fills in the live fields of the item in `slot` from its state, for code that works on
    /// whole items (user constraints, swept CCD).
    pub(crate) fn load_item(&mut self, slot: usize) {
        let rotation = self.rotation(slot);
        let state = &self.states[slot];
        let body = &mut self.bodies[slot];
        body.linear_velocity = state.linear_velocity();
        body.angular_velocity = state.angular_velocity();
        body.accumulated_translation = state.moved();
        body.rotation = rotation;
        if body.constrained
            && let Some(start) = self.xpbd_start.get(slot)
        {
            body.pre_xpbd_center = start.center;
            body.pre_xpbd_rotation = start.rotation * body.start_rotation;
            body.substep_inverse_inertia = body.world_inv_inertia_at(body.pre_xpbd_rotation);
        }
    }

    /// [`load_item`](Self::load_item) for every body.
    pub(crate) fn load_items(&mut self) {
        for slot in 1..self.bodies.len() {
            self.load_item(slot);
        }
    }

    /// Writes the live fields of the item in `slot` back to its state (after
    /// [`load_item`](Self::load_item) and whatever moved the item).
    pub(crate) fn store_item(&mut self, slot: usize) {
        self.states[slot].take_from(&self.bodies[slot]);
    }

    /// Marks `slot` as acted on by an XPBD constraint this step: its pose is recorded at the
    /// start of each substep's XPBD sets (from now, if those have begun) and its velocity is
    /// projected from what they move.
    pub(crate) fn mark_constrained(&mut self, slot: usize) {
        if self.bodies[slot].constrained {
            return;
        }
        self.bodies[slot].constrained = true;
        self.xpbd_slots.push(slot as u32);
        if self.xpbd_start.len() < self.bodies.len() {
            self.xpbd_start
                .resize(self.bodies.len(), XpbdStart::default());
        }
        // Before the substeps, the first substep's `record_xpbd_starts` records it.
        if self.substeps_done > 0 {
            self.record_xpbd_start(slot);
        }
    }

    /// Records where the body in `slot` is as this substep's XPBD sets begin.
    #[inline]
    pub(crate) fn record_xpbd_start(&mut self, slot: usize) {
        self.xpbd_start[slot] = XpbdStart {
            center: self.center(slot),
            rotation: self.states[slot].rotation,
        };
    }

    fn clear(&mut self) {
        self.bodies.truncate(1);
        self.states.truncate(1);
        self.xpbd_slots.clear();
        self.woken.clear();
        self.links.clear();
        self.substeps_done = 0;
        self.generation = self.generation.wrapping_add(1);
    }

    /// Brings a sleeping dynamic body into the step in progress, woken by a constraint: with
    /// its forces, and moved through the substeps the others have already integrated, so it
    /// neither hangs for a step nor lags behind. (Its contacts join it next step: sleeping
    /// bodies have none this step.)
    pub(crate) fn push_woken(&mut self, mut body: RigidBodyQueryItem) -> usize {
        let h = self.substep;
        for _ in 0..self.substeps_done {
            body.linear_velocity += body.linear_acceleration * h;
            body.angular_velocity += body.angular_acceleration * h;
            body.accumulated_translation += body.linear_velocity * h;
            body.rotation = integrate_rotation(body.rotation, body.angular_velocity * h);
        }
        self.woken.push(body.entity);
        self.push(body)
    }
}

/// The ECS components that accelerate and damp a dynamic body.
pub(crate) type BodyForceData = (
    Option<&'static GravityScale>,
    Option<&'static LinearDamping>,
    Option<&'static AngularDamping>,
    Option<&'static ConstantForce>,
    Option<&'static ConstantTorque>,
);

/// What [`BodyForceData`] holds for one body.
pub(crate) type BodyForces<'a> = (
    Option<&'a GravityScale>,
    Option<&'a LinearDamping>,
    Option<&'a AngularDamping>,
    Option<&'a ConstantForce>,
    Option<&'a ConstantTorque>,
);

/// What moves a dynamic body this step: its velocities, the world's gravity and its force
/// components.
pub(crate) struct Drive<'a> {
    pub linear_velocity: Vector,
    pub angular_velocity: Vector,
    pub gravity: Vector,
    pub forces: BodyForces<'a>,
}

/// The ECS data gathered per awake body.
pub(crate) type BodyGatherData = (
    Entity,
    &'static RigidBody,
    &'static Position,
    &'static Rotation,
    &'static LinearVelocity,
    &'static AngularVelocity,
    &'static ComputedMass,
    Option<&'static LockedAxes>,
    BodyForceData,
);

/// What [`BodyGatherData`] holds for one body.
type BodyGather<'a> = bevy::ecs::query::QueryItem<'a, 'a, BodyGatherData>;

/// Awake bodies from which the gather shares them out between threads; fewer are gathered
/// inline, in the query's order. Chosen, not measured: low enough for the determinism test's
/// scene to run the parallel gather.
const PARALLEL_GATHER: usize = 512;

/// Gathers awake dynamic and kinematic bodies into [`SolverBodies`], applying one-off impulses
/// and rejecting non-finite velocities.
///
/// The slots follow the query's order. With helper threads and many bodies, the slots are
/// claimed first and each body's item and state built by one call of a parallel loop over
/// them; the impulses are applied after, on this thread.
pub(crate) fn prepare_solver_bodies(
    mut solver: ResMut<SolverBodies>,
    bodies: Query<BodyGatherData, Without<Sleeping>>,
    mut impulses: Query<(Entity, &mut ExternalImpulse), Without<Sleeping>>,
    gravity: Res<Gravity>,
    time: Res<PhysicsStepTime>,
) {
    let solver = &mut *solver;
    solver.clear();
    solver.gravity = gravity.0;
    solver.substep = time.substep_delta;
    let awake = bodies.iter().filter(|(_, rb, ..)| !rb.is_static());
    match pool_with_helpers().filter(|_| bodies.iter().len() >= PARALLEL_GATHER) {
        Some(_) => {
            solver.gathered.clear();
            for (entity, ..) in awake {
                solver.claim_slot(entity);
            }
            gather_claimed(solver, &bodies, gravity.0);
        }
        // On one thread the query is read in its order, without the look-ups by entity.
        None => {
            for data in awake {
                solver.push(body_item(data, gravity.0));
            }
        }
    }
    for (entity, mut impulse) in &mut impulses {
        if impulse.is_zero() {
            continue;
        }
        let Some(slot) = solver
            .slot(entity)
            .filter(|&s| solver.bodies[s].rb.is_dynamic())
        else {
            continue;
        };
        let body = &solver.bodies[slot];
        if impulse.linear.is_finite() && impulse.angular.is_finite() {
            let dv = body.effective_inverse_mass() * impulse.linear;
            let dw = body.step_inverse_inertia * impulse.angular;
            let state = &mut solver.states[slot];
            state.set_velocities(state.linear_velocity() + dv, state.angular_velocity() + dw);
        } else {
            warn!("{entity}: non-finite ExternalImpulse ignored");
        }
        *impulse.bypass_change_detection() = ExternalImpulse::default();
    }
}

/// Builds the items and states of the slots [`SolverBodies::claim_slot`] claimed, in
/// parallel chunks: each by one call, from its entity's data.
fn gather_claimed(
    solver: &mut SolverBodies,
    bodies: &Query<BodyGatherData, Without<Sleeping>>,
    gravity: Vector,
) {
    let count = solver.gathered.len();
    solver.bodies.reserve(count);
    solver.states.reserve(count);
    let items = Shared::new(&mut solver.bodies.spare_capacity_mut()[..count]);
    let states = Shared::new(&mut solver.states.spare_capacity_mut()[..count]);
    let gathered = &solver.gathered;
    parallel_for(count, PARALLEL_GATHER, |range| {
        for index in range {
            let entity = gathered[index];
            let body = match bodies.get(entity) {
                Ok(data) => body_item(data, gravity),
                // Unreachable: the slots were claimed from the same query.
                Err(_) => RigidBodyQueryItem::fixed(
                    entity,
                    RigidBody::Static,
                    Vector::ZERO,
                    Quaternion::IDENTITY,
                    Vector::ZERO,
                ),
            };
            // SAFETY: each index lies in exactly one range, run by one call.
            unsafe {
                states.get_mut(index).write(BodyState::of(&body));
                items.get_mut(index).write(body);
            }
        }
    });
    // SAFETY: the loop above initialised the first `count` spare elements of both.
    unsafe {
        let len = solver.bodies.len() + count;
        solver.bodies.set_len(len);
        solver.states.set_len(len);
    }
}

/// The solver item of an awake dynamic or kinematic body.
fn body_item(
    (entity, rb, position, rotation, v, w, mass, locked, forces): BodyGather,
    gravity: Vector,
) -> RigidBodyQueryItem {
    if rb.is_dynamic() {
        let locked = locked.copied().unwrap_or_default();
        let drive = Drive {
            linear_velocity: v.0,
            angular_velocity: w.0,
            gravity,
            forces,
        };
        RigidBodyQueryItem::dynamic(entity, position.0, rotation.0, mass, locked, drive)
    } else {
        // A kinematic body moves as it is told, on every axis.
        let com = mass.local_center_of_mass;
        RigidBodyQueryItem {
            linear_velocity: v.0,
            angular_velocity: w.0,
            locked_axes: LockedAxes::new(),
            ..RigidBodyQueryItem::fixed(entity, *rb, position.0, rotation.0, com)
        }
    }
}

/// Awake bodies from which the write-back shares them out between threads; fewer are written
/// inline. Chosen, not measured, as for the gather.
const PARALLEL_WRITE_BACK: usize = 512;

/// Writes the step's result back to the ECS, guarding against non-finite results.
///
/// Each body is written by one call of a parallel loop over the slots (large scenes share it
/// out between threads).
pub(crate) fn write_back_bodies(
    mut commands: Commands,
    solver: Res<SolverBodies>,
    bodies: Query<(
        &mut Position,
        &mut Rotation,
        &mut LinearVelocity,
        &mut AngularVelocity,
    )>,
) {
    let (solver, bodies) = (&*solver, &bodies);
    parallel_for(solver.bodies.len(), PARALLEL_WRITE_BACK, |range| {
        for slot in range.start.max(1)..range.end {
            let entity = solver.bodies[slot].entity;
            // The slot map names one slot per entity, so no two calls reach the same entity.
            if solver.bodies[slot].rb.is_static() || solver.slot(entity) != Some(slot) {
                continue;
            }
            // SAFETY: only the call for the one slot the map gives `entity` gets its
            // components, and nothing else reads them while the loop runs.
            if let Ok(components) = unsafe { bodies.get_unchecked(entity) } {
                write_back_body(solver, slot, components);
            }
        }
    });
    for &entity in &solver.woken {
        if let Ok(mut e) = commands.get_entity(entity) {
            e.remove::<Sleeping>();
        }
    }
}

/// Writes the body in `slot` into its components, or stops it where the solver produced a
/// non-finite state.
fn write_back_body(
    solver: &SolverBodies,
    slot: usize,
    (mut position, mut rotation, mut v, mut w): (
        Mut<Position>,
        Mut<Rotation>,
        Mut<LinearVelocity>,
        Mut<AngularVelocity>,
    ),
) {
    let (body, state) = (&solver.bodies[slot], &solver.states[slot]);
    let new_rotation = solver.rotation(slot).normalize();
    let new_position = solver.center(slot) - new_rotation * body.center_of_mass;
    let (linear, angular) = (state.linear_velocity(), state.angular_velocity());
    if !new_position.is_finite()
        || !new_rotation.is_finite()
        || !linear.is_finite()
        || !angular.is_finite()
    {
        warn!(
            "{}: the solver produced a non-finite state; body reset to rest",
            body.entity
        );
        v.0 = Vector::ZERO;
        w.0 = Vector::ZERO;
        return;
    }
    position.0 = new_position;
    rotation.0 = new_rotation;
    v.0 = linear;
    w.0 = angular;
}

#[cfg(test)]
// Tests build their scenes with platform math; the rule (`clippy.toml`) guards the step.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use std::f32::consts::PI;

    /// Body `index`, dynamic, at `position`, turned by `rotation`, with no forces.
    fn body(index: u32, position: Vector, rotation: Quaternion) -> RigidBodyQueryItem {
        let mut body = RigidBodyQueryItem::fixed(
            Entity::from_raw_u32(index).expect("a valid index"),
            RigidBody::Dynamic,
            position,
            rotation,
            Vector::new(0.1, -0.2, 0.05),
        );
        body.inverse_mass = 1.0;
        body.translation_mask = Vector::ONE;
        body.local_inverse_inertia = Matrix3::from_diagonal(Vector::new(1.0, 2.0, 3.0));
        body
    }

    /// The state's small-angle rotation vector is twice the vector part of the rotation since
    /// the start on the short arc: past half a turn it points the other way, as the contact
    /// solver's linearisation needs.
    #[test]
    fn the_turn_since_the_start_is_taken_on_the_short_arc() {
        let axis = Vector::new(2.0, -1.0, 2.0) / 3.0;
        let mut state = BodyState::default();
        for angle in [0.3, 1.0, 3.0, 3.5, 5.0, -2.0, -4.0] {
            state.set_rotation(Quaternion::from_axis_angle(axis, angle));
            let short = (angle + PI).rem_euclid(2.0 * PI) - PI;
            let expected = 2.0 * (0.5 * short).sin() * axis;
            assert!(
                (state.turned() - expected).length() <= 4.0 * Scalar::EPSILON,
                "{angle} rad: {} against {expected}",
                state.turned()
            );
        }
    }

    /// Handing a body to a constraint that leaves it alone changes nothing: the state's
    /// rotation since the start is not rebuilt from the item's rotation (that would round it).
    #[test]
    fn an_item_handed_out_and_back_untouched_keeps_its_state_bit_for_bit() {
        let mut solver = SolverBodies::default();
        let mut slots = Vec::new();
        for i in 0..64 {
            let t = i as Scalar;
            let start = Quaternion::from_euler(EulerRot::XYZ, 0.37 * t, -0.21 * t, 0.11 * t);
            let slot = solver.push(body(i + 1, Vector::new(t, 0.5 * t, -t), start));
            let turn = Quaternion::from_euler(EulerRot::YZX, 0.013 * t, 0.7, -0.029 * t);
            solver.states[slot].set_rotation(turn);
            solver.states[slot].moved = Vec4::new(0.1 * t, -0.2, 0.3, 0.0);
            solver.states[slot].set_velocities(Vector::new(1.0, t, -2.0), Vector::splat(0.5));
            slots.push(slot);
        }
        for &slot in &slots {
            let before = solver.states[slot];
            solver.load_item(slot);
            solver.store_item(slot);
            let after = solver.states[slot];
            assert_eq!(
                (before.rotation, before.moved, before.linear_velocity),
                (after.rotation, after.moved, after.linear_velocity),
                "slot {slot}"
            );
        }
    }
}
