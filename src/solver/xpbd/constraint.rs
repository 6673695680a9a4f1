//! The constraint traits and the generic system that solves them.

use bevy::ecs::component::Mutable;
use bevy::ecs::entity::{EntityHashSet, MapEntities};
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;

use crate::body::creation::{OrderKey, order_key};
use crate::body::{
    ComputedMass, CreationOrder, LockedAxes, Position, RigidBody, Rotation, Sleeping,
};
use crate::math::{Scalar, Vector, nudge_rotation};
use crate::schedule::PhysicsStepTime;
use crate::solver::solver_body::{BodyForceData, Drive};
use crate::solver::{RigidBodyQueryItem, SolverBodies};

/// A position-level constraint between `ENTITY_COUNT` bodies.
///
/// Implement it on a component, then add [`solve_constraint::<C, ENTITY_COUNT>`] to
/// [`SubstepSchedule`](crate::SubstepSchedule) in
/// [`SubstepSolverSet::SolveUserConstraints`](crate::SubstepSolverSet::SolveUserConstraints).
pub trait XpbdConstraint<const ENTITY_COUNT: usize>: MapEntities {
    /// The bodies this constraint acts on, in the order [`solve`](Self::solve) receives them.
    fn entities(&self) -> [Entity; ENTITY_COUNT];

    /// Moves the bodies towards satisfying the constraint. `dt` is the substep length.
    ///
    /// Change `accumulated_translation` and `rotation` of the bodies (the helpers of
    /// [`PositionConstraint`] and [`AngularConstraint`] do it for you); the engine turns the
    /// change into velocity afterwards.
    fn solve(&mut self, bodies: [&mut RigidBodyQueryItem; ENTITY_COUNT], dt: Scalar);

    /// Resets the accumulated Lagrange multipliers; called at the start of every substep.
    fn clear_lagrange_multipliers(&mut self);

    /// The multiplier update `Δλ = (−C − α̃λ) / (Σ wᵢ + α̃)`, `α̃ = α / dt²`, for unit-length
    /// gradients with generalized inverse masses `inverse_masses`. Zero when nothing can move.
    fn compute_lagrange_update(
        &self,
        lagrange: Scalar,
        c: Scalar,
        inverse_masses: &[Scalar],
        compliance: Scalar,
        dt: Scalar,
    ) -> Scalar {
        lagrange_update(lagrange, c, inverse_masses.iter().sum(), compliance, dt)
    }

    /// The multiplier update `Δλ = (−C − α̃λ) / (Σ wᵢ |∇Cᵢ|² + α̃)` for arbitrary gradients.
    fn compute_lagrange_update_with_gradients(
        &self,
        lagrange: Scalar,
        c: Scalar,
        gradients: &[Vector],
        inverse_masses: &[Scalar],
        compliance: Scalar,
        dt: Scalar,
    ) -> Scalar {
        let w = gradients
            .iter()
            .zip(inverse_masses)
            .map(|(g, w)| w * g.length_squared())
            .sum();
        lagrange_update(lagrange, c, w, compliance, dt)
    }
}

#[inline]
pub(crate) fn lagrange_update(
    lagrange: Scalar,
    c: Scalar,
    w_sum: Scalar,
    compliance: Scalar,
    dt: Scalar,
) -> Scalar {
    let tilde = compliance.max(0.0) / (dt * dt);
    let denominator = w_sum + tilde;
    if w_sum <= Scalar::EPSILON || !denominator.is_finite() || !c.is_finite() {
        return 0.0;
    }
    (-c - tilde * lagrange) / denominator
}

/// Positional corrections at points of two bodies.
pub trait PositionConstraint {
    /// Generalized inverse mass `1/m + (r × n)ᵀ I⁻¹ (r × n)` of `body` pushed along the unit
    /// vector `n` at offset `r` from its centre of mass (locked axes removed).
    fn compute_generalized_inverse_mass(
        &self,
        body: &RigidBodyQueryItem,
        r: Vector,
        n: Vector,
    ) -> Scalar {
        positional_inverse_mass(body, r, n)
    }

    /// Applies the position impulse `Δλ n`: body 1 moves by `+Δλ n` at `r1`, body 2 by
    /// `−Δλ n` at `r2`, each scaled by its inverse mass and inertia. Returns the impulse
    /// applied to body 1.
    fn apply_positional_correction(
        &self,
        body1: &mut RigidBodyQueryItem,
        body2: &mut RigidBodyQueryItem,
        delta_lagrange: Scalar,
        direction: Vector,
        r1: Vector,
        r2: Vector,
    ) -> Vector {
        let p = delta_lagrange * direction;
        apply_position_impulse(body1, p, r1);
        apply_position_impulse(body2, -p, r2);
        p
    }
}

/// Angular corrections about an axis.
pub trait AngularConstraint {
    /// Generalized inverse mass `nᵀ I⁻¹ n` of `body` turned about the unit axis `n`.
    fn compute_generalized_inverse_mass(&self, body: &RigidBodyQueryItem, n: Vector) -> Scalar {
        angular_inverse_mass(body, n)
    }

    /// Applies the angular impulse `Δλ axis`: body 1 turns by `+I₁⁻¹ Δλ axis`, body 2 by
    /// `−I₂⁻¹ Δλ axis`. Returns the angular impulse applied to body 1.
    fn apply_angular_correction(
        &self,
        body1: &mut RigidBodyQueryItem,
        body2: &mut RigidBodyQueryItem,
        delta_lagrange: Scalar,
        axis: Vector,
    ) -> Vector {
        let p = delta_lagrange * axis;
        apply_angular_impulse(body1, p);
        apply_angular_impulse(body2, -p);
        p
    }
}

/// `1/m + (r × n)ᵀ I⁻¹ (r × n)` at the current rotation, 0 for non-dynamic bodies.
#[inline]
pub(crate) fn positional_inverse_mass(body: &RigidBodyQueryItem, r: Vector, n: Vector) -> Scalar {
    if !body.is_dynamic() {
        return 0.0;
    }
    let rn = r.cross(n);
    body.effective_inverse_mass().dot(n * n) + rn.dot(body.effective_world_inv_inertia() * rn)
}

/// `nᵀ I⁻¹ n` at the current rotation, 0 for non-dynamic bodies.
#[inline]
pub(crate) fn angular_inverse_mass(body: &RigidBodyQueryItem, n: Vector) -> Scalar {
    if !body.is_dynamic() {
        return 0.0;
    }
    n.dot(body.effective_world_inv_inertia() * n)
}

/// Moves a dynamic body by the position impulse `p` at offset `r`.
#[inline]
pub(crate) fn apply_position_impulse(body: &mut RigidBodyQueryItem, p: Vector, r: Vector) {
    if !body.is_dynamic() {
        return;
    }
    body.accumulated_translation += body.effective_inverse_mass() * p;
    let dtheta = body.effective_world_inv_inertia() * r.cross(p);
    body.rotation = nudge_rotation(body.rotation, dtheta);
}

/// Turns a dynamic body by the angular position impulse `p`.
#[inline]
pub(crate) fn apply_angular_impulse(body: &mut RigidBodyQueryItem, p: Vector) {
    if !body.is_dynamic() {
        return;
    }
    let dtheta = body.effective_world_inv_inertia() * p;
    body.rotation = nudge_rotation(body.rotation, dtheta);
}

/// Marks a constraint or joint entity that should not be solved (a broken joint gets it).
#[derive(Component, Reflect, Clone, Copy, Debug, Default)]
#[reflect(Component, Default, Debug)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct ConstraintDisabled;

/// The dense slots of each constraint's bodies, resolved once per step, in creation order.
pub struct ConstraintSlots<const N: usize> {
    /// The step (and the solver's gather, which unlike the step count never repeats) the
    /// entries were resolved for.
    key: (u64, u64),
    /// Per constraint, in creation order: its entity and its bodies' slots (`None`: skipped).
    entries: Vec<(Entity, Option<[usize; N]>)>,
    /// Whether the query yields the constraints in creation order, so that they are
    /// visited by iterating it rather than by looking each one up.
    in_query_order: bool,
    /// Each constraint's sort key (see `order_key`) and bodies, gathered before sorting
    /// (reused scratch).
    gathered: Vec<(OrderKey, [Entity; N])>,
    warned: EntityHashSet,
}

impl<const N: usize> Default for ConstraintSlots<N> {
    fn default() -> Self {
        Self {
            key: (u64::MAX, u64::MAX),
            entries: Vec::new(),
            in_query_order: true,
            gathered: Vec::new(),
            warned: EntityHashSet::default(),
        }
    }
}

/// The ECS view of a body needed to bring it into the step when a constraint names it.
pub(crate) type ParticipantData = (
    &'static RigidBody,
    &'static Position,
    &'static Rotation,
    &'static ComputedMass,
    Option<&'static LockedAxes>,
    Has<Sleeping>,
    BodyForceData,
);

/// Everything needed to solve the constraints of one type: the constraints, the bodies they
/// may bring into the step, and the cache of their dense slots.
#[derive(SystemParam)]
pub struct ConstraintSolver<'w, 's, C, const N: usize>
where
    C: XpbdConstraint<N> + Component<Mutability = Mutable>,
{
    constraints: Query<
        'w,
        's,
        (Entity, Option<&'static CreationOrder>, &'static mut C),
        Without<ConstraintDisabled>,
    >,
    participants: Query<'w, 's, ParticipantData>,
    cache: Local<'s, ConstraintSlots<N>>,
}

impl<C, const N: usize> ConstraintSolver<'_, '_, C, N>
where
    C: XpbdConstraint<N> + Component<Mutability = Mutable>,
{
    /// Resolves the constraints' bodies to dense slots on the first substep of a step (or if
    /// the set of constraints changed), and clears the multipliers of those that will be
    /// solved.
    ///
    /// Constraints are visited in their [`CreationOrder`], not in the order the ECS stores
    /// them: that order changes whenever a constraint entity gains or loses a component (a
    /// joint breaking reorders the others) and differs between peers, and Gauss–Seidel results
    /// depend on it. When the storage order already is creation order (constraints spawned one
    /// after another, the usual case) the query is iterated; otherwise each constraint is
    /// looked up. A constraint type that does not require [`CreationOrder`] is visited in
    /// `Entity` index order, which is not the same on every peer.
    pub fn prepare(&mut self, solver: &mut SolverBodies, step: u64) {
        let key = (step, solver.generation);
        let cache = &mut *self.cache;
        // The same number of constraints, each still there, is the same set (one despawned
        // and one spawned within a step keep the count).
        let constraints = &self.constraints;
        let changed = if cache.in_query_order {
            (cache.entries.iter().zip(constraints.iter())).any(|(a, (e, _, _))| a.0 != e)
        } else {
            cache.entries.iter().any(|(e, _)| !constraints.contains(*e))
        };
        let stale = cache.key != key || cache.entries.len() != constraints.iter().len() || changed;
        if stale {
            cache.key = key;
            cache.gathered.clear();
            let bodies = (self.constraints.iter()).map(|(e, o, c)| (order_key(e, o), c.entities()));
            cache.gathered.extend(bodies);
            cache.in_query_order = cache.gathered.is_sorted_by_key(|g| g.0);
            if !cache.in_query_order {
                cache.gathered.sort_unstable_by_key(|g| g.0);
            }
            cache.entries.clear();
            for &(OrderKey { entity, .. }, bodies) in &cache.gathered {
                let slots = resolve(
                    entity,
                    bodies,
                    solver,
                    &self.participants,
                    &mut cache.warned,
                    true,
                );
                cache.entries.push((entity, slots));
            }
        }
        // Skipped constraints (all bodies asleep or static) keep their state, so a sleeping
        // joint still reports the force it last carried.
        self.for_each_resolved(|_, mut constraint| {
            // Solver bookkeeping (here and in `solve`) is not a change for `Changed<C>`,
            // which is how the validation stage finds constraints the user changed.
            constraint
                .bypass_change_detection()
                .clear_lagrange_multipliers();
        });
    }

    /// Calls [`XpbdConstraint::solve`] on every constraint whose bodies were resolved.
    pub fn solve(&mut self, solver: &mut SolverBodies, dt: Scalar) {
        self.for_each_resolved(|slots, mut constraint| {
            for slot in slots {
                solver.load_item(slot);
            }
            if let Ok(bodies) = solver.bodies.get_disjoint_mut(slots) {
                constraint.bypass_change_detection().solve(bodies, dt);
            }
            for slot in slots {
                solver.store_item(slot);
            }
        });
    }

    /// Runs `f` on every constraint whose bodies were resolved, in creation order.
    fn for_each_resolved(&mut self, mut f: impl FnMut([usize; N], Mut<C>)) {
        let (cache, constraints) = (&*self.cache, &mut self.constraints);
        if cache.in_query_order {
            for ((_, slots), (_, _, constraint)) in cache.entries.iter().zip(constraints) {
                if let Some(slots) = slots {
                    f(*slots, constraint);
                }
            }
        } else {
            for (entity, slots) in &cache.entries {
                if let Some(slots) = slots
                    && let Ok((_, _, constraint)) = constraints.get_mut(*entity)
                {
                    f(*slots, constraint);
                }
            }
        }
    }

    /// One substep: [`prepare`](Self::prepare), then `passes` calls of [`solve`](Self::solve).
    pub fn run(&mut self, solver: &mut SolverBodies, step: u64, dt: Scalar, passes: u32) {
        self.prepare(solver, step);
        for _ in 0..passes {
            self.solve(solver, dt);
        }
    }
}

/// Solves every constraint of type `C` once per substep.
///
/// On the first substep of each step the constraints' entities are resolved to dense solver
/// slots: static bodies are brought in with infinite mass, sleeping bodies that share a
/// constraint with an awake body are woken, and a constraint whose bodies are all static or
/// asleep is skipped. A constraint naming a missing or non-body entity, or the same entity
/// twice, is skipped with a warning naming it. Every substep, the multipliers are cleared and
/// then every constraint is solved [`XpbdIterations`] times, in their [`CreationOrder`].
pub fn solve_constraint<C, const ENTITY_COUNT: usize>(
    mut constraints: ConstraintSolver<C, ENTITY_COUNT>,
    mut solver: ResMut<SolverBodies>,
    time: Res<PhysicsStepTime>,
    iterations: Res<XpbdIterations>,
) where
    C: XpbdConstraint<ENTITY_COUNT> + Component<Mutability = Mutable>,
{
    constraints.run(
        &mut solver,
        time.step_count,
        time.substep_delta,
        iterations.passes(),
    );
}

/// How many Gauss–Seidel passes over the XPBD constraints (joints and user constraints) each
/// substep makes. Default 4; 0 is replaced by 1, and a count above
/// [`MAX_XPBD_ITERATIONS`](crate::validation::MAX_XPBD_ITERATIONS) by that maximum, with a
/// warning.
///
/// One pass per substep is plain XPBD. A heavy load hanging through many joints (long chains,
/// joint grids) needs its correction carried through the whole structure every substep, which
/// one pass only does one joint deep; extra passes cost only the constraint solve, not the
/// contact solve or integration that extra substeps would repeat. Multipliers accumulate across
/// the passes of a substep, as in XPBD's iterative form.
///
/// Chains of plain spherical joints (no limits or damping) are not solved in passes: each
/// takes one exact Newton step per substep (see the [joint docs](crate::solver::joints)),
/// whatever this says. A built-in joint with a body on a contact takes one pass: the contact
/// solve already holds it at the velocity level, and its pass only corrects the drift the
/// position update leaves.
#[derive(Resource, Reflect, Clone, Copy, Debug, PartialEq, Eq)]
#[reflect(Resource, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct XpbdIterations(pub u32);

impl Default for XpbdIterations {
    fn default() -> Self {
        Self(4)
    }
}

impl XpbdIterations {
    /// The passes a substep makes: this count within its bounds (the validation stage writes
    /// the bounded count back; this keeps a count set during the step bounded too).
    pub(crate) fn passes(self) -> u32 {
        self.0.clamp(1, crate::validation::MAX_XPBD_ITERATIONS)
    }
}

impl crate::validation::Validate for XpbdIterations {
    fn validate(&mut self) -> Option<String> {
        use crate::validation::MAX_XPBD_ITERATIONS;
        let usable = self.passes();
        (usable != self.0).then(|| {
            let message = format!(
                "{} passes is not in 1..={MAX_XPBD_ITERATIONS}; using {usable}",
                self.0
            );
            self.0 = usable;
            message
        })
    }
}

/// Finds (or creates) the dense slot of each body a constraint names. With `xpbd` (a user
/// constraint, which moves its bodies' positions), the bodies are marked for the XPBD sets
/// (see [`SolverBodies::mark_constrained`]; the built-in joints mark theirs as they record
/// them, and velocity rows move only velocities).
pub(crate) fn resolve<const N: usize>(
    constraint: Entity,
    entities: [Entity; N],
    solver: &mut SolverBodies,
    participants: &Query<ParticipantData>,
    warned: &mut EntityHashSet,
    xpbd: bool,
) -> Option<[usize; N]> {
    let mut warn_once = |message: String| {
        if warned.insert(constraint) {
            warn!("constraint {constraint}: {message}; it is skipped");
        }
    };
    // Each body's slot, looked up once (`None`: not in the step yet).
    let mut found = [None; N];
    for (i, a) in entities.iter().enumerate() {
        if entities[..i].contains(a) {
            warn_once(format!("names entity {a} twice"));
            return None;
        }
        found[i] = solver.slot(*a);
        if found[i].is_none() && participants.get(*a).is_err() {
            warn_once(format!(
                "entity {a} is not a rigid body (despawned, or no RigidBody)"
            ));
            return None;
        }
    }
    if !warned.is_empty() {
        warned.remove(&constraint);
    }
    for pair in entities.windows(2) {
        solver.links.push((pair[0], pair[1]));
    }
    let awake = found.iter().flatten().any(|&s| {
        let body = &solver.bodies[s];
        body.inverse_mass > 0.0 || body.rb.is_kinematic()
    });
    if !awake {
        return None;
    }
    let mut slots = [0; N];
    for (i, &e) in entities.iter().enumerate() {
        slots[i] = match found[i] {
            Some(slot) => slot,
            None => {
                let (rb, position, rotation, mass, locked, sleeping, forces) =
                    participants.get(e).expect("checked above");
                if rb.is_dynamic() && sleeping {
                    let locked = locked.copied().unwrap_or_default();
                    // Asleep, so at rest.
                    let drive = Drive {
                        linear_velocity: Vector::ZERO,
                        angular_velocity: Vector::ZERO,
                        gravity: solver.gravity,
                        forces,
                    };
                    let (position, rotation) = (position.0, rotation.0);
                    let body =
                        RigidBodyQueryItem::dynamic(e, position, rotation, mass, locked, drive);
                    solver.push_woken(body)
                } else {
                    let com = mass.local_center_of_mass;
                    solver.push(RigidBodyQueryItem::fixed(
                        e, *rb, position.0, rotation.0, com,
                    ))
                }
            }
        };
    }
    if xpbd {
        for &slot in &slots {
            solver.mark_constrained(slot);
        }
    }
    Some(slots)
}
