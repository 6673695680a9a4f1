//! Swept continuous collision detection (CCD), opt-in per body with [`SweptCcd`].
//!
//! The default defence against tunnelling is speculative contacts: the broad phase enlarges
//! every AABB by how far its collider can move this step, and the narrow phase builds contact
//! points up to that distance apart, so the solver stops a fast body at the surface it is about
//! to reach. For a translating convex body against a convex target that is exact (the contact
//! plane separates the two). It fails when the step's motion is not what the broad phase
//! predicted — a body fired by an impulse, or hit by another body, within the step — and when
//! a body spins fast: its contact points are linearised about the step start, so the parts
//! that swing round (a blade's tip, a slapping plate's far edge) are not among them. A body
//! with [`SweptCcd`] is additionally swept over its actual motion after the solver.
//!
//! # Where in the step
//!
//! [`SolverSet::SweptCcd`] runs after the substeps and restitution, before writeback, on the
//! dense solver bodies. For each awake dynamic body with [`SweptCcd`], each of its colliders is
//! swept from its pose at the step start to its pose at the step end (the solver's result).
//! Targets come from the broad phase's BVH, queried with the sweep's AABB (never a loop over
//! all colliders); sensors, pairs their [`CollisionLayers`](crate::CollisionLayers) filter out,
//! the body's own colliders and bodies joined to it are skipped. If the motion would carry a
//! collider more than a contact tolerance ([`SolverConfig::linear_slop`]) past its first
//! contact, the body is moved back to its pose at that time of impact `t < 1`, the tolerance
//! short of the surface (an arrival that merely ends in contact is the solver's, and left
//! alone). Its velocity is kept: the next step's speculative contact, now between the right
//! points, removes the approaching speed (and applies friction and restitution) the usual way.
//! The body loses the rest of the step's motion — the same trade Box2D v3 makes.
//!
//! If the impact comes so early that the body advances less than the tolerance, keeping the
//! velocity would replay the same impact every step and freeze the body in place. It then gets
//! an impulse at the impact point that stops the approach there (with the pair's restitution
//! above [`SolverConfig::restitution_threshold`]); if that point is not approaching at all —
//! the body pivots on a contact and its spin would swing another part through the target — its
//! spin and its approach along the normal are removed instead.
//!
//! A collider that moves less than half its thinnest half-extent in a step is not swept: it
//! cannot cross a surface it did not already overlap, so speculative contacts suffice (Box2D
//! v3 applies the same test before its continuous pass).
//!
//! # Sweeps
//!
//! - [`SweepMode::Linear`] (default) translates the collider along its centre of mass's
//!   displacement, holding its step-start rotation (parry's `cast_shapes`, a GJK ray cast
//!   against the Minkowski difference, with the tolerance as target distance). Cheap, exact
//!   for bodies that do not spin; it cannot see a spinning body's tip.
//! - [`SweepMode::NonLinear`] moves the collider along the screw motion from its start pose to
//!   its end pose (constant linear and angular velocity about the centre of mass) and finds the
//!   first contact by conservative advancement (parry's `cast_shapes_nonlinear`), then steps
//!   back by the tolerance over the fastest point's travel. Catches rotating hits; costs more.
//!
//! A collider already within the tolerance of a target at the step start (touching it, or
//! resting on it) would report an impact at `t = 0` and never move again. In linear mode such
//! a pair is instead swept with a small core of the collider — a ball of a quarter of its
//! thinnest half-extent at its centre — which only stops the body if its middle is about to
//! pass through (the fallback Box2D v3 uses). In nonlinear mode parry's directional test is
//! used: an initial contact counts only if the motion at a contact point would carry it
//! through the target within the step. (Whether a pair starts within the tolerance is asked
//! of parry's closest-points query first: a GJK ray cast that starts inside the rounded
//! target can report a spurious later impact for a body sliding along it.) Every impact is
//! checked to leave the shapes within twice the tolerance at its time, as a guard against
//! such numerical failures.
//!
//! # Targets
//!
//! By default a swept body is stopped by static bodies, kinematic bodies and colliders without a
//! body: the surfaces a fast body can tunnel through and that will not move out of its way.
//! [`SweptCcd::include_dynamic`] adds dynamic bodies (awake or asleep); moving targets are
//! swept along their own step motion. A rewound body passes its momentum to a dynamic target
//! through the next step's contact. Only the swept body is moved back; joints attached to it
//! correct from the moved pose next step.
//!
//! # Sources
//!
//! - Erin Catto, "Continuous Collision", GDC 2013: time of impact by conservative
//!   advancement, and rewinding to the time of impact while keeping the velocity.
//! - Erin Catto, Box2D v3 (2024), continuous collision of fast bodies against static
//!   geometry: the "fast body" test and the centroid-core fallback for initial contact.
//! - Brian Mirtich, "Impulse-based Dynamic Simulation of Rigid Body Systems" (PhD thesis,
//!   1996), ch. 5: conservative advancement for rotating bodies.
//! - Gino van den Bergen, "Ray Casting against General Convex Objects with Application to
//!   Continuous Collision Detection" (2004): the GJK ray cast behind linear sweeps.

use bevy::ecs::entity::EntityHashSet;
use bevy::prelude::*;
use parry3d::bounding_volume::{Aabb, BoundingVolume};
use parry3d::math::Pose;
use parry3d::query::{
    ClosestPoints, NonlinearRigidMotion, ShapeCastHit, ShapeCastOptions, ShapeCastStatus,
    Unsupported, cast_shapes, cast_shapes_nonlinear, closest_points,
};
use parry3d::shape::{Ball, Shape};

use super::solver_body::{RigidBodyQueryItem, SolverBodies};
use crate::body::CreationOrder;
use crate::body::creation::{OrderKey, order_key};
use crate::collision::broad_phase::{BroadPhase, ColliderProxy, CollisionExclusions, ProxyKind};
use crate::math::{Scalar, Vector, rotation_vector};
use crate::schedule::{PhysicsSchedule, SolverSet};
use crate::settings::SolverConfig;

/// How a [`SweptCcd`] body's colliders are swept over a step.
#[derive(Clone, Reflect, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[reflect(Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub enum SweepMode {
    /// Translation only, at the step-start rotation. Cheapest; misses hits that only the
    /// body's rotation causes.
    #[default]
    Linear,
    /// Translation and rotation together (a screw motion about the centre of mass). Catches
    /// the tip of a spinning body; each cast costs more than a linear one.
    NonLinear,
}

/// Swept continuous collision detection for a fast dynamic body, on top of the speculative
/// contacts every body has.
///
/// After the solver, the body's colliders are swept from their step-start to their step-end
/// poses; at the first impact the body is moved back to the pose of impact (a contact tolerance
/// short of the surface), keeping its velocity, and the next step's contact stops it. See the
/// [module docs](crate::solver::ccd) for the method and its sources.
///
/// Targets are static bodies, kinematic bodies and body-less colliders unless
/// [`include_dynamic`](Self::include_dynamic) is set. Sensors and filtered layers are ignored.
/// The component does nothing on static or kinematic bodies (a kinematic body follows its
/// velocity exactly).
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// # let mut app = App::new();
/// // A bullet: 1 cm across, 400 m/s.
/// app.world_mut().spawn((
///     RigidBody::Dynamic,
///     Collider::sphere(0.005),
///     LinearVelocity(Vec3::new(400.0, 0.0, 0.0)),
///     SweptCcd::default(),
/// ));
/// // A spinning blade that must not pass anything, moving bodies included.
/// let blade = SweptCcd::new_with_mode(SweepMode::NonLinear).include_dynamic(true);
/// assert!(blade.include_dynamic);
/// ```
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct SweptCcd {
    /// How the colliders are swept. Default [`SweepMode::Linear`].
    pub mode: SweepMode,
    /// Whether dynamic bodies stop the sweep too. Default `false`: static and kinematic only.
    pub include_dynamic: bool,
}

impl SweptCcd {
    /// Linear sweeps against static and kinematic bodies (the default).
    pub const LINEAR: Self = Self::new_with_mode(SweepMode::Linear);
    /// Nonlinear (rotating) sweeps against static and kinematic bodies.
    pub const NON_LINEAR: Self = Self::new_with_mode(SweepMode::NonLinear);

    /// Sweeps with `mode` against static and kinematic bodies.
    pub const fn new_with_mode(mode: SweepMode) -> Self {
        Self {
            mode,
            include_dynamic: false,
        }
    }

    /// Whether dynamic bodies (awake or asleep) are targets too.
    pub const fn include_dynamic(mut self, include: bool) -> Self {
        self.include_dynamic = include;
        self
    }
}

/// Swept CCD in [`SolverSet::SweptCcd`].
pub(crate) struct SweptCcdPlugin;

impl Plugin for SweptCcdPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(PhysicsSchedule, sweep_bodies.in_set(SolverSet::SweptCcd));
    }
}

/// How one collider moves over the step, with time `t ∈ [0, 1]` the fraction of the step.
#[derive(Clone, Copy, Debug)]
struct Sweep {
    /// Collider pose at `t = 0`.
    start: Pose,
    /// The body's centre of mass in the collider's frame: the point rotation turns about.
    local_center: Vector,
    /// Displacement of the centre of mass over the step.
    linear: Vector,
    /// Rotation over the step, as a rotation vector (axis × angle).
    angular: Vector,
    /// Largest distance of a collider point from the centre of mass.
    reach: Scalar,
}

impl Sweep {
    /// A collider that does not move.
    fn fixed(start: Pose) -> Self {
        Self {
            start,
            local_center: Vector::ZERO,
            linear: Vector::ZERO,
            angular: Vector::ZERO,
            reach: 0.0,
        }
    }

    /// The motion of a collider at `start` on `body` from the solver's step start to now.
    fn of(body: &RigidBodyQueryItem, start: Pose, shape: &dyn Shape) -> Self {
        let local_center = start.inverse_transform_point(body.start_center);
        let sphere = shape.compute_local_bounding_sphere();
        Self {
            start,
            local_center,
            linear: body.accumulated_translation,
            angular: step_rotation(body),
            reach: (sphere.center - local_center).length() + sphere.radius,
        }
    }

    /// Upper bound on how far any point of the collider travels over the step.
    fn travel(&self) -> Scalar {
        self.linear.length() + self.angular.length() * self.reach
    }

    fn is_finite(&self) -> bool {
        self.start.translation.is_finite()
            && self.start.rotation.is_finite()
            && self.linear.is_finite()
            && self.angular.is_finite()
            && self.reach.is_finite()
    }

    fn nonlinear(&self) -> NonlinearRigidMotion {
        NonlinearRigidMotion::new(self.start, self.local_center, self.linear, self.angular)
    }

    /// The collider's pose at time `t` of a linear sweep: translated, not turned.
    fn linear_pose(&self, t: Scalar) -> Pose {
        Pose::from_translation(self.linear * t) * self.start
    }

    /// The same motion for a shape placed at `offset` in this collider's frame.
    fn offset(&self, offset: Vector) -> Self {
        Self {
            start: self.start * Pose::from_translation(offset),
            local_center: self.local_center - offset,
            ..*self
        }
    }

    /// An AABB holding everything the collider covers during the sweep, plus `margin`.
    fn swept_aabb(&self, shape: &dyn Shape, mode: SweepMode, margin: Scalar) -> Aabb {
        let aabb = match mode {
            SweepMode::Linear => {
                let start = shape.compute_aabb(&self.start);
                let end = Aabb::new(start.mins + self.linear, start.maxs + self.linear);
                start.merged(&end)
            }
            // Every point stays within `reach` of the centre of mass, which moves on a segment.
            SweepMode::NonLinear => {
                let center = self.start * self.local_center;
                let end = center + self.linear;
                Aabb::new(center.min(end), center.max(end)).loosened(self.reach)
            }
        };
        aabb.loosened(margin)
    }
}

/// The body's rotation over the step as a rotation vector.
fn step_rotation(body: &RigidBodyQueryItem) -> Vector {
    rotation_vector(body.rotation.normalize() * body.start_rotation.conjugate())
}

/// One of the swept body's colliders.
struct Swept<'a> {
    proxy: &'a ColliderProxy,
    sweep: Sweep,
    /// The small ball at the collider's middle used when the collider starts in contact.
    core: Option<(Ball, Sweep)>,
}

impl<'a> Swept<'a> {
    fn new(proxy: &'a ColliderProxy, body: &RigidBodyQueryItem) -> Self {
        let sweep = Sweep::of(body, proxy.pose, &*proxy.shape);
        let local = proxy.shape.compute_local_aabb();
        let radius = 0.25 * thinnest_half_extent(&*proxy.shape);
        let core = (radius > 0.0).then(|| (Ball::new(radius), sweep.offset(local.center())));
        Self { proxy, sweep, core }
    }
}

fn thinnest_half_extent(shape: &dyn Shape) -> Scalar {
    shape.compute_local_aabb().half_extents().min_element()
}

/// Sweeps every awake dynamic body with [`SweptCcd`] and moves it back to its first impact.
///
/// Bodies are swept in their [`CreationOrder`]: a body moved back changes what the bodies
/// swept after it see, and the ECS storage order changes with every component a body gains or
/// loses and differs between peers.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sweep_bodies(
    mut solver: ResMut<SolverBodies>,
    broad: Res<BroadPhase>,
    exclusions: Res<CollisionExclusions>,
    config: Res<SolverConfig>,
    ccd_bodies: Query<(Entity, Option<&CreationOrder>, &SweptCcd)>,
    children: Query<&Children>,
    mut stack: Local<Vec<Entity>>,
    mut order: Local<Vec<(OrderKey, SweptCcd)>>,
    mut warned: Local<EntityHashSet>,
) {
    let slop = config.linear_slop.max(0.0);
    order.clear();
    order.extend(
        (ccd_bodies.iter()).map(|(entity, creation, ccd)| (order_key(entity, creation), *ccd)),
    );
    if !order.is_sorted_by_key(|(key, _)| *key) {
        order.sort_unstable_by_key(|(key, _)| *key);
    }
    if !order.is_empty() {
        // The sweeps read every body's pose and velocities through its item.
        solver.load_items();
    }
    for &(OrderKey { entity, .. }, ccd) in order.iter() {
        let Some(slot) = solver.slot(entity) else {
            continue;
        };
        if !solver.bodies[slot].is_dynamic() {
            continue;
        }
        let context = Context {
            solver: &solver,
            broad: &broad,
            exclusions: &exclusions,
            ccd,
            body: entity,
            slot,
            slop,
        };
        let first = context.body_impact(&children, &mut stack, &mut warned);
        if let Some(hit) = first {
            rewind(&mut solver.bodies[slot], hit.time, hit.carry);
            if hit.stuck {
                resolve_impact(&mut solver, slot, &hit, config.restitution_threshold);
            }
            solver.store_item(slot);
            if let Some(target) = hit.target {
                solver.store_item(target);
            }
        }
    }
}

/// The first impact of a swept body.
#[derive(Clone, Copy, Debug)]
struct Hit {
    /// Fraction of the step to rewind the body to (a tolerance short of touching).
    time: Scalar,
    /// Whether the body advances less than the contact tolerance before the impact: its
    /// velocity must then change here, or the same impact would hold it in place next step.
    stuck: bool,
    /// Contact point and normal (from the swept body towards the target) at the impact.
    point: Vector,
    normal: Vector,
    /// The target's solver slot, if it moves.
    target: Option<usize>,
    /// A moving target's motion from the impact to the step end, which carries the body with
    /// it so that the body ends where it touched the target, not where the target has since
    /// passed.
    carry: Option<Pose>,
    restitution: Scalar,
}

/// A cast's hit against one target, before it becomes a [`Hit`].
struct Found<'a> {
    hit: ShapeCastHit,
    /// The swept shape (the collider or its core) and its pose at the cast's time of impact.
    shape: &'a dyn Shape,
    pose: Pose,
    /// The target's pose at the cast's time of impact.
    target_pose: Pose,
    /// The time to rewind to.
    time: Scalar,
    /// Upper bound on the relative distance travelled over the step.
    path: Scalar,
}

/// What one body's sweep needs to look at.
struct Context<'w> {
    solver: &'w SolverBodies,
    broad: &'w BroadPhase,
    exclusions: &'w CollisionExclusions,
    ccd: SweptCcd,
    body: Entity,
    slot: usize,
    slop: Scalar,
}

impl Context<'_> {
    /// The earliest impact of the body's colliders, on its entity or its descendants.
    fn body_impact(
        &self,
        children: &Query<&Children>,
        stack: &mut Vec<Entity>,
        warned: &mut EntityHashSet,
    ) -> Option<Hit> {
        let body = self.body;
        stack.clear();
        stack.push(body);
        let mut first: Option<Hit> = None;
        while let Some(current) = stack.pop() {
            if let Ok(kids) = children.get(current) {
                stack.extend(kids.iter());
            }
            let Some(proxy) = self.broad.leaf_proxy(current.index_u32()) else {
                continue;
            };
            if proxy.entity != current || proxy.body != Some(body) || proxy.sensor {
                continue;
            }
            let before = first.as_ref().map_or(1.0, |hit| hit.time);
            match self.first_impact(proxy, before) {
                Ok(Some(hit)) => first = Some(hit),
                Ok(None) => {}
                Err(target) => {
                    if warned.insert(body) {
                        warn!(
                            "{body}: SweptCcd cannot sweep collider {current} against {target} \
                             (parry does not support that shape pair); the pair relies on \
                             speculative contacts only"
                        );
                    }
                }
            }
        }
        first
    }

    /// The earliest impact before `before` of one of the body's colliders, or the target
    /// entity of a shape pair parry cannot sweep.
    fn first_impact(&self, proxy: &ColliderProxy, before: Scalar) -> Result<Option<Hit>, Entity> {
        let swept = Swept::new(proxy, &self.solver.bodies[self.slot]);
        let travel = swept.sweep.travel();
        // Less than half its thinnest half-extent: it cannot cross a surface in one step. A
        // non-finite motion is not swept either: writeback resets and reports it.
        if !(travel > 0.0 && travel.is_finite())
            || travel < 0.5 * thinnest_half_extent(&*proxy.shape)
        {
            return Ok(None);
        }
        let aabb = swept
            .sweep
            .swept_aabb(&*proxy.shape, self.ccd.mode, self.slop);
        let mut first: Option<Hit> = None;
        let mut unsupported = None;
        for target in self.broad.proxies_in_aabb(&aabb) {
            if !self.is_target(proxy, target) {
                continue;
            }
            let slot = target.body.and_then(|b| self.solver.slot(b));
            let target_sweep = match slot {
                Some(slot) => Sweep::of(&self.solver.bodies[slot], target.pose, &*target.shape),
                None => Sweep::fixed(target.pose),
            };
            if !target_sweep.is_finite() {
                continue;
            }
            let limit = first.as_ref().map_or(before, |hit| hit.time);
            match self.impact(&swept, target, &target_sweep, limit) {
                Ok(Some(mut hit)) if hit.time < limit => {
                    if let Some(slot) = slot {
                        let moving = &self.solver.bodies[slot];
                        let carry = body_pose(moving, 1.0) * body_pose(moving, hit.time).inverse();
                        hit.point = carry * hit.point;
                        hit.normal = carry.rotation * hit.normal;
                        hit.carry = Some(carry);
                    }
                    hit.target = slot;
                    hit.restitution = proxy.restitution.combine(target.restitution);
                    first = Some(hit);
                }
                Ok(_) => {}
                Err(Unsupported) => unsupported = Some(target.entity),
            }
        }
        match (first, unsupported) {
            (None, Some(target)) => Err(target),
            (first, _) => Ok(first),
        }
    }

    /// Whether `target` can stop the swept collider `own`.
    fn is_target(&self, own: &ColliderProxy, target: &ColliderProxy) -> bool {
        let kind_ok = match target.kind {
            ProxyKind::Static | ProxyKind::Kinematic => true,
            ProxyKind::Dynamic | ProxyKind::Sleeping => self.ccd.include_dynamic,
        };
        kind_ok
            && target.body != Some(self.body)
            && !target.sensor
            && own.layers.interacts_with(target.layers)
            && !self.exclusions.excludes(Some(self.body), target.body)
    }

    /// The impact between the swept collider and one target before `limit`, if the step's
    /// motion would carry the collider more than the contact tolerance into the target (less
    /// is an ordinary resting or arriving contact, which the solver has already handled).
    fn impact(
        &self,
        own: &Swept,
        target: &ColliderProxy,
        target_sweep: &Sweep,
        limit: Scalar,
    ) -> Result<Option<Hit>, Unsupported> {
        let found = match self.ccd.mode {
            SweepMode::Linear => self.impact_linear(own, target, target_sweep, limit)?,
            SweepMode::NonLinear => self.impact_nonlinear(own, target, target_sweep)?,
        };
        let Some(found) = found.filter(|f| f.hit.time_of_impact.is_finite() && f.time < limit)
        else {
            return Ok(None);
        };
        // GJK can report a spurious impact when the cast starts close to the target and moves
        // along it; a real one leaves the shapes (nearly) touching at the time of impact.
        let gap = gap(
            &found.pose,
            found.shape,
            &found.target_pose,
            &*target.shape,
            2.0 * self.slop,
        )?;
        if gap > 2.0 * self.slop {
            return Ok(None);
        }
        Ok(Some(Hit {
            time: found.time,
            stuck: found.time * found.path < self.slop,
            point: found.pose * found.hit.witness1,
            normal: found.pose.rotation * found.hit.normal1,
            target: None,
            carry: None,
            restitution: 0.0,
        }))
    }

    /// Whether two shapes start within the contact tolerance of each other.
    fn starts_within(
        &self,
        own: &Sweep,
        shape: &dyn Shape,
        target: &Sweep,
        target_shape: &dyn Shape,
    ) -> Result<bool, Unsupported> {
        Ok(gap(&own.start, shape, &target.start, target_shape, self.slop)? <= self.slop)
    }

    /// Linear sweep, stopping a tolerance short of the target; a collider that starts within
    /// the tolerance is swept by its core.
    fn impact_linear<'a>(
        &self,
        own: &'a Swept,
        target: &ColliderProxy,
        target_sweep: &Sweep,
        limit: Scalar,
    ) -> Result<Option<Found<'a>>, Unsupported> {
        let target_shape = &*target.shape;
        let full: (&dyn Shape, &Sweep) = (&*own.proxy.shape, &own.sweep);
        let (shape, sweep) = if self.starts_within(full.1, full.0, target_sweep, target_shape)? {
            // Already touching: only stop the body if its middle would pass through.
            match &own.core {
                Some((ball, core))
                    if !self.starts_within(core, ball, target_sweep, target_shape)? =>
                {
                    (ball as &dyn Shape, core)
                }
                _ => return Ok(None),
            }
        } else {
            full
        };
        let hit = self.cast_linear(sweep, shape, target_sweep, target_shape, limit)?;
        let path = (own.sweep.linear - target_sweep.linear).length();
        Ok(hit
            .filter(|hit| hit.status != ShapeCastStatus::PenetratingOrWithinTargetDist)
            // The hit is a tolerance short of touching: going on past the surface by more than
            // the tolerance means going two beyond the hit.
            .filter(|hit| (1.0 - hit.time_of_impact) * path > 2.0 * self.slop)
            .map(|hit| Found {
                hit,
                shape,
                pose: sweep.linear_pose(hit.time_of_impact),
                target_pose: target_sweep.linear_pose(hit.time_of_impact),
                time: hit.time_of_impact,
                path,
            }))
    }

    /// Nonlinear sweep to the time of touching, then back by the tolerance over the fastest
    /// point's travel.
    fn impact_nonlinear<'a>(
        &self,
        own: &'a Swept,
        target: &ColliderProxy,
        target_sweep: &Sweep,
    ) -> Result<Option<Found<'a>>, Unsupported> {
        let motion = own.sweep.nonlinear();
        let target_motion = target_sweep.nonlinear();
        let hit = cast_shapes_nonlinear(
            &motion,
            &*own.proxy.shape,
            &target_motion,
            &*target.shape,
            0.0,
            1.0,
            false,
        )?;
        let path = own.sweep.travel() + target_sweep.travel();
        Ok(hit
            .filter(|hit| (1.0 - hit.time_of_impact) * path > self.slop)
            .map(|hit| Found {
                hit,
                shape: &*own.proxy.shape,
                pose: motion.position_at_time(hit.time_of_impact),
                target_pose: target_motion.position_at_time(hit.time_of_impact),
                time: (hit.time_of_impact - self.slop / path).max(0.0),
                path,
            }))
    }

    /// Linear sweep with the tolerance as target distance.
    fn cast_linear(
        &self,
        own: &Sweep,
        shape: &dyn Shape,
        target: &Sweep,
        target_shape: &dyn Shape,
        limit: Scalar,
    ) -> Result<Option<ShapeCastHit>, Unsupported> {
        let options = ShapeCastOptions {
            max_time_of_impact: limit,
            target_distance: self.slop,
            stop_at_penetration: true,
            compute_impact_geometry_on_penetration: false,
        };
        cast_shapes(
            &own.start,
            own.linear,
            shape,
            &target.start,
            target.linear,
            target_shape,
            options,
        )
    }
}

/// The distance between two posed shapes, or infinity if it is more than `max`. (From
/// `closest_points`: parry 0.27's `distance` overestimates the gap between two cuboids,
/// dimforge/parry#431.)
fn gap(
    pose1: &Pose,
    shape1: &dyn Shape,
    pose2: &Pose,
    shape2: &dyn Shape,
    max: Scalar,
) -> Result<Scalar, Unsupported> {
    Ok(match closest_points(pose1, shape1, pose2, shape2, max)? {
        ClosestPoints::Intersecting => 0.0,
        ClosestPoints::WithinMargin(a, b) => a.distance(b),
        ClosestPoints::Disjoint => Scalar::INFINITY,
    })
}

/// A body's origin pose at fraction `t` of the step, on the screw motion from its start pose
/// to its end pose (constant velocity of the centre of mass, constant angular velocity).
fn body_pose(body: &RigidBodyQueryItem, t: Scalar) -> Pose {
    let rotation = if t == 1.0 {
        body.rotation.normalize()
    } else {
        crate::math::rotation_from_vector(step_rotation(body) * t) * body.start_rotation
    };
    let center = body.start_center + body.accumulated_translation * t;
    Pose::from_parts(center - rotation * body.center_of_mass, rotation)
}

/// Moves a body back to its pose at fraction `t` of the step, then along with a moving target
/// (`carry`). Velocities are kept.
fn rewind(body: &mut RigidBodyQueryItem, t: Scalar, carry: Option<Pose>) {
    let mut pose = body_pose(body, t);
    if let Some(carry) = carry {
        pose = carry * pose;
    }
    body.rotation = pose.rotation.normalize();
    body.accumulated_translation = pose * body.center_of_mass - body.start_center;
}

/// For a body that could not advance: a velocity change that lets it move next step instead
/// of meeting the same impact at the start of every step.
///
/// If the impact point approaches the target, an impulse there stops the approach (or reverses
/// it by the pair's restitution above `threshold`), between the body and a moving target or
/// against a fixed one. If it does not — the body pivots on a contact and its spin would swing
/// another part through the target within the step, which no impulse at this point can
/// prevent — the body's spin and its approach along the normal are removed instead.
fn resolve_impact(solver: &mut SolverBodies, slot: usize, hit: &Hit, threshold: Scalar) {
    let n = hit.normal.normalize_or_zero();
    let body = &solver.bodies[slot];
    let target = hit.target.map(|s| &solver.bodies[s]);
    let r1 = hit.point - body.current_center_of_mass();
    let r2 = target.map_or(Vector::ZERO, |t| hit.point - t.current_center_of_mass());
    let relative = target.map_or(Vector::ZERO, |t| t.velocity_at(r2)) - body.velocity_at(r1);
    let approach = -relative.dot(n);
    if !approach.is_finite() {
        return;
    }
    if approach <= 0.0 {
        let target_velocity = target.map_or(Vector::ZERO, |t| t.linear_velocity);
        let body = &mut solver.bodies[slot];
        let closing = (body.linear_velocity - target_velocity).dot(n).max(0.0);
        body.linear_velocity -= closing * n;
        body.angular_velocity = Vector::ZERO;
        return;
    }
    let response = |b: &RigidBodyQueryItem, r: Vector| {
        (
            b.effective_inverse_mass() * n,
            b.world_inv_inertia_now() * r.cross(n),
        )
    };
    let (push1, turn1) = response(body, r1);
    let (push2, turn2) = target.map_or((Vector::ZERO, Vector::ZERO), |t| response(t, r2));
    let k = n.dot(push1 + push2) + r1.cross(n).dot(turn1) + r2.cross(n).dot(turn2);
    if k <= Scalar::EPSILON {
        return;
    }
    let bounce = if approach > threshold {
        hit.restitution
    } else {
        0.0
    };
    let impulse = (1.0 + bounce) * approach / k;
    let body = &mut solver.bodies[slot];
    body.linear_velocity -= impulse * push1;
    body.angular_velocity -= impulse * turn1;
    if let Some(target) = hit.target.map(|s| &mut solver.bodies[s]) {
        target.linear_velocity += impulse * push2;
        target.angular_velocity += impulse * turn2;
    }
}
