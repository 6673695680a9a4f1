//! The vehicle's step: wheels find the ground, suspensions push, the engine and brakes turn
//! the wheels, and the tyres' friction rows are solved against the chassis.

use bevy::ecs::entity::EntityHashSet;
use bevy::ecs::query::QueryData;
use bevy::prelude::*;
use smallvec::{SmallVec, smallvec};

use super::powertrain::RPM_PER_RAD_PER_S;
use super::tyre::{friction_coefficient, slip, softness};
use super::{VehicleController, VehicleInput, VehicleState, Wheel, WheelCast, WheelState};
use crate::body::{
    AngularVelocity, ComputedMass, GravityScale, LinearVelocity, LockedAxes, Position, RigidBody,
    Rotation, Sleeping,
};
use crate::collision::Collider;
use crate::math::{
    FRAC_PI_2, Matrix3, PI, Quaternion, Scalar, TAU, Vector, rotate_inertia, rotation_about,
};
use crate::schedule::PhysicsStepTime;
use crate::settings::Gravity;
use crate::solver::SolverBodies;
use crate::spatial_query::{ShapeCastConfig, SpatialQuery, SpatialQueryFilter};

/// Share of a bump stop's overshoot corrected per step (Baumgarte stabilisation).
const BUMP_STOP_CORRECTION: Scalar = 0.2;

/// The chassis body's components the step reads and writes.
#[derive(QueryData)]
#[query_data(mutable)]
pub(super) struct ChassisData {
    body: &'static RigidBody,
    position: &'static Position,
    rotation: &'static Rotation,
    mass: &'static ComputedMass,
    gravity_scale: Option<&'static GravityScale>,
    locked: Option<&'static LockedAxes>,
    sleeping: Has<Sleeping>,
    linear_velocity: &'static mut LinearVelocity,
    angular_velocity: &'static AngularVelocity,
}

/// The force and torque each vehicle puts on its chassis this step, applied by
/// [`apply_vehicle_forces`] in every substep like gravity.
#[derive(Resource, Default)]
pub(super) struct VehicleForces {
    /// Chassis entity, force (N) and torque about the centre of mass (N·m), in world space.
    entries: Vec<(Entity, Vector, Vector)>,
}

/// Adds each vehicle's force and torque of this step to its chassis over the substep, after
/// gravity and the constant forces: spread over the substeps as they are, they balance gravity
/// in every substep, so a parked vehicle does not creep by the difference between an impulse
/// at the step's start and gravity's pull through it.
pub(super) fn apply_vehicle_forces(
    forces: Res<VehicleForces>,
    mut solver: ResMut<SolverBodies>,
    time: Res<PhysicsStepTime>,
) {
    let h = time.substep_delta;
    for &(entity, force, torque) in &forces.entries {
        let Some(slot) = solver.slot(entity) else {
            continue;
        };
        let body = &solver.bodies[slot];
        let inverse_inertia = body.world_inv_inertia_at(solver.rotation(slot));
        let dv = force * body.effective_inverse_mass() * h;
        solver.states[slot].add_velocities(dv, inverse_inertia * torque * h);
    }
}

/// The chassis's velocities during the step, changed by the vehicle's impulses, and the sum of
/// those impulses.
#[derive(Clone)]
struct Chassis {
    rotation: Quaternion,
    position: Vector,
    center_of_mass: Vector,
    velocity: Vector,
    angular_velocity: Vector,
    inverse_mass: Vector,
    inverse_inertia: Matrix3,
    /// Sum of the impulses applied, N·s.
    impulse: Vector,
    /// Sum of their moments about the centre of mass, N·m·s.
    angular_impulse: Vector,
}

impl Chassis {
    fn new(data: &ChassisDataItem) -> Self {
        let rotation = data.rotation.0;
        let position = data.position.0;
        let translation_mask = data.locked.map_or(Vector::ONE, |l| l.translation_mask());
        let rotation_mask =
            Matrix3::from_diagonal(data.locked.map_or(Vector::ONE, |l| l.rotation_mask()));
        let world = rotate_inertia(data.mass.local_inverse_inertia(), rotation);
        Self {
            rotation,
            position,
            center_of_mass: data.mass.world_center_of_mass(position, rotation),
            velocity: data.linear_velocity.0,
            angular_velocity: data.angular_velocity.0,
            inverse_mass: translation_mask * data.mass.inverse_mass(),
            inverse_inertia: rotation_mask * world * rotation_mask,
            impulse: Vector::ZERO,
            angular_impulse: Vector::ZERO,
        }
    }

    fn velocity_at(&self, point: Vector) -> Vector {
        self.velocity + self.angular_velocity.cross(point - self.center_of_mass)
    }

    fn apply_impulse(&mut self, impulse: Vector, point: Vector) {
        self.velocity += impulse * self.inverse_mass;
        let moment = (point - self.center_of_mass).cross(impulse);
        self.angular_velocity += self.inverse_inertia * moment;
        self.impulse += impulse;
        self.angular_impulse += moment;
    }

    /// How much the velocity at `point` along `direction` changes per unit impulse there.
    fn inverse_mass_along(&self, direction: Vector, point: Vector) -> Scalar {
        let arm_cross = (point - self.center_of_mass).cross(direction);
        (direction * self.inverse_mass).dot(direction)
            + arm_cross.dot(self.inverse_inertia * arm_cross)
    }

    fn to_world(&self, local: Vector) -> Vector {
        self.position + self.rotation * local
    }
}

/// Where a wheel touches the ground.
#[derive(Clone, Copy)]
struct GroundContact {
    point: Vector,
    normal: Vector,
    /// Suspension length the ground leaves, m, before the travel limits (below `min_length`
    /// the wheel is on its bump stop).
    length: Scalar,
}

/// One wheel's rows for the step's solve.
#[derive(Clone, Copy, Default)]
struct WheelRows {
    contact: Option<GroundContact>,
    /// The suspension's compression (looked ahead, see [`spring_lookahead`]), m; 0 off the
    /// ground.
    compression: Scalar,
    /// Spring, damper and anti-roll bar force, N.
    suspension_force: Scalar,
    forward: Vector,
    right: Vector,
    /// Whether the tyre's rows have directions (the axle is not along the normal).
    has_friction: bool,
    /// The chassis's inverse mass along `forward` at the contact point.
    forward_mass: Scalar,
    right_mass: Scalar,
    normal_mass: Scalar,
    forward_softness: Scalar,
    right_softness: Scalar,
    friction: Scalar,
    /// Velocity the bump stop aims for along the normal (its overshoot correction), m/s.
    bump_stop_bias: Scalar,
    bump_stop: Option<Scalar>,
    /// The suspension's push over the step, N·s: the tyre's load.
    normal_impulse: Scalar,
    longitudinal_slip: Scalar,
    lateral_slip: Scalar,
    brake_limit: Scalar,
    brake_impulse: Scalar,
    forward_impulse: Scalar,
    right_impulse: Scalar,
}

/// One value per wheel, on the stack for up to eight wheels.
type Wheels<T> = SmallVec<[T; 8]>;

/// What every vehicle's step shares.
struct StepContext<'a, 'w, 's> {
    query: &'a SpatialQuery<'w, 's>,
    gravity: Vector,
    dt: Scalar,
    /// See [`spring_lookahead`].
    lookahead: Scalar,
}

/// Steps every vehicle once per physics step, before the solver: each vehicle only reads the
/// spatial-query tree and changes its own chassis and state, so their order does not matter.
pub(super) fn step_vehicles(
    mut vehicles: Query<(
        Entity,
        &VehicleController,
        &VehicleInput,
        &mut VehicleState,
        Option<ChassisData>,
    )>,
    query: SpatialQuery,
    mut forces: ResMut<VehicleForces>,
    gravity: Res<Gravity>,
    time: Res<PhysicsStepTime>,
    mut warned: Local<EntityHashSet>,
    // Kept between steps so that its set of one excluded entity stops allocating.
    mut own_colliders: Local<SpatialQueryFilter>,
) {
    let context = StepContext {
        query: &query,
        gravity: gravity.0,
        dt: time.delta,
        lookahead: spring_lookahead(time.delta, time.substeps),
    };
    forces.entries.clear();
    for (entity, controller, input, mut state, chassis) in &mut vehicles {
        let Some(mut chassis) = chassis.filter(|c| c.body.is_dynamic()) else {
            if warned.insert(entity) {
                warn!(
                    "{entity}: VehicleController needs a dynamic RigidBody on the same entity; \
                     the vehicle does nothing"
                );
            }
            continue;
        };
        if controller.wheels.is_empty() || (chassis.sleeping && input.is_idle()) {
            continue;
        }
        if chassis.sleeping {
            // Woken (by the changed velocity) before the solver gathers the step's bodies.
            chassis.linear_velocity.set_changed();
        }
        // The wheels' casts skip the vehicle's own colliders.
        own_colliders.excluded_entities.clear();
        own_colliders.excluded_entities.insert(entity);
        let (force, torque) = step_vehicle(
            &context,
            &own_colliders,
            controller,
            input,
            &mut state,
            &chassis,
        );
        forces.entries.push((entity, force, torque));
    }
}

/// One vehicle's step: its chassis's force and torque for the step (world space, the torque
/// about the centre of mass), with its state updated.
fn step_vehicle(
    context: &StepContext,
    filter: &SpatialQueryFilter,
    controller: &VehicleController,
    input: &VehicleInput,
    state: &mut VehicleState,
    data: &ChassisDataItem,
) -> (Vector, Vector) {
    let dt = context.dt;
    let gravity = context.gravity * data.gravity_scale.map_or(1.0, |s| s.0);
    let start = Chassis::new(data);
    let mut chassis = start.clone();
    state
        .wheels
        .resize(controller.wheels.len(), WheelState::default());
    state.forward_speed = chassis.velocity.dot(chassis.rotation * Vector::NEG_Z);

    let drive = powertrain(controller, input, state);
    let mut rows = suspension_rows(context, filter, controller, input, state, &start);

    // The rows solve for the velocities at the step's end, so gravity is in the velocities
    // they see; it is not in the impulses (the solver adds it itself). The suspensions and
    // drag push explicitly.
    chassis.velocity += gravity * dt;
    for row in &rows {
        if let Some(contact) = row.contact {
            chassis.apply_impulse(contact.normal * row.suspension_force * dt, contact.point);
        }
    }
    let air = start.velocity;
    chassis.apply_impulse(
        -air * (controller.drag * air.length() * dt),
        start.center_of_mass,
    );

    for (index, row) in rows.iter_mut().enumerate() {
        let wheel = &controller.wheels[index];
        let wheel_state = &mut state.wheels[index];
        wheel_state.angular_velocity += drive.wheel_torques[index] * dt / wheel.inertia;
        let resistance = controller.rolling_resistance;
        prepare_rows(
            row,
            wheel,
            wheel_state,
            input,
            drive.brake,
            resistance,
            &start,
            dt,
        );
    }
    for _ in 0..controller.solver_iterations {
        for (index, row) in rows.iter_mut().enumerate() {
            let wheel = &controller.wheels[index];
            solve_rows(row, wheel, &mut state.wheels[index], &mut chassis);
        }
    }

    for (index, row) in rows.iter().enumerate() {
        record_wheel(&controller.wheels[index], row, &mut state.wheels[index], dt);
    }
    (chassis.impulse / dt, chassis.angular_impulse / dt)
}

/// Each wheel's ground contact and suspension force (springs, dampers and anti-roll bars),
/// from the chassis at the step's start.
fn suspension_rows(
    context: &StepContext,
    filter: &SpatialQueryFilter,
    controller: &VehicleController,
    input: &VehicleInput,
    state: &mut VehicleState,
    start: &Chassis,
) -> Wheels<WheelRows> {
    let mut rows: Wheels<WheelRows> = controller
        .wheels
        .iter()
        .zip(&mut state.wheels)
        .map(|(wheel, wheel_state)| {
            wheel_state.steer_angle = input.steering * wheel.max_steer_angle;
            let cast = controller.wheel_cast;
            let contact = find_ground(context.query, filter, cast, wheel, wheel_state, start);
            let (compression, rate) = contact.map_or((0.0, 0.0), |c| {
                compression(wheel, c, start, context.lookahead)
            });
            WheelRows {
                contact,
                compression,
                suspension_force: contact
                    .map_or(0.0, |_| suspension_force(wheel, compression, rate)),
                ..default()
            }
        })
        .collect();
    apply_anti_roll_bars(controller, &mut rows);
    rows
}

/// What the engine and gearbox give this step.
struct Drive {
    /// Drive torque on each wheel, N·m.
    wheel_torques: Wheels<Scalar>,
    /// Brake pedal, the driver's or the throttle pressed against the motion, 0 to 1.
    brake: Scalar,
}

/// Shifts the gearbox by the driven wheels' last spin and shares the engine's torque out.
fn powertrain(
    controller: &VehicleController,
    input: &VehicleInput,
    state: &mut VehicleState,
) -> Drive {
    let gearbox = &controller.gearbox;
    let engine = &controller.engine;
    let mut wheel_torques: Wheels<Scalar> = smallvec![0.0; controller.wheels.len()];
    let (mut spin, mut shares) = (0.0, 0.0);
    for d in &controller.differentials {
        let pair = state.wheels[d.left_wheel].angular_velocity
            + state.wheels[d.right_wheel].angular_velocity;
        spin += 0.5 * pair * d.torque_share;
        shares += d.torque_share;
    }
    let mean_spin = if shares > 0.0 { spin / shares } else { 0.0 };
    if state.gear == 0 {
        state.gear = 1;
    }
    let rpm_of = |gear: i32| (mean_spin * gearbox.overall_ratio(gear)).abs() * RPM_PER_RAD_PER_S;
    state.gear = gearbox.next_gear(
        state.gear,
        rpm_of(state.gear),
        input.throttle,
        state.forward_speed,
    );
    state.engine_rpm = rpm_of(state.gear).max(engine.idle_rpm);

    let forward = state.gear > 0;
    let pedal = if forward {
        input.throttle.max(0.0)
    } else {
        (-input.throttle).max(0.0)
    };
    let against = if forward {
        (-input.throttle).max(0.0)
    } else {
        input.throttle.max(0.0)
    };
    let engine_torque = pedal * engine.torque_at(state.engine_rpm);
    let at_axles = engine_torque * gearbox.overall_ratio(state.gear) * gearbox.efficiency;
    for d in &controller.differentials {
        let each = 0.5 * at_axles * d.torque_share;
        wheel_torques[d.left_wheel] += each;
        wheel_torques[d.right_wheel] += each;
    }
    Drive {
        wheel_torques,
        brake: input.brake.max(against),
    }
}

/// The wheel's steering rotation in the chassis's local space (positive angles turn right,
/// clockwise seen from above).
fn steering_rotation(angle: Scalar) -> Quaternion {
    rotation_about(Vector::Y, -angle)
}

/// Casts the wheel down its suspension from its hard point.
fn find_ground(
    query: &SpatialQuery,
    filter: &SpatialQueryFilter,
    cast: WheelCast,
    wheel: &Wheel,
    state: &WheelState,
    chassis: &Chassis,
) -> Option<GroundContact> {
    let origin = chassis.to_world(wheel.position);
    let up = chassis.rotation * Vector::Y;
    let down = Dir3::new(-up).ok()?;
    let max_length = wheel.suspension.max_length;
    let contact = match cast {
        WheelCast::Ray => {
            let hit = query.cast_ray(origin, down, max_length + wheel.radius, true, filter)?;
            GroundContact {
                point: origin - up * hit.distance,
                normal: hit.normal,
                length: hit.distance - wheel.radius,
            }
        }
        WheelCast::Cylinder => {
            let shape = Collider::cylinder(wheel.radius, wheel.width);
            // The cylinder's axis (its local Y) along the axle (the chassis's local X).
            let rotation = chassis.rotation
                * steering_rotation(state.steer_angle)
                * rotation_about(Vector::Z, FRAC_PI_2);
            let config = ShapeCastConfig::from_max_distance(max_length);
            let hit = query.cast_shape(&shape, origin, rotation, down, &config, filter)?;
            GroundContact {
                point: hit.point2,
                normal: hit.normal2,
                length: hit.distance,
            }
        }
    };
    // A surface facing away from the wheel (hit from behind) does not carry it.
    (contact.normal.dot(up) > 0.0 && contact.normal.is_finite()).then_some(contact)
}

/// The suspension's compression, m, at the wheel on the ground, and its rate, m/s, looked
/// `lookahead` seconds ahead at that rate (see [`spring_lookahead`]).
fn compression(
    wheel: &Wheel,
    contact: GroundContact,
    chassis: &Chassis,
    lookahead: Scalar,
) -> (Scalar, Scalar) {
    let suspension = &wheel.suspension;
    let length = contact
        .length
        .clamp(suspension.min_length, suspension.max_length);
    let up = chassis.rotation * Vector::Y;
    let hard_point = chassis.to_world(wheel.position);
    // The ground is taken at rest: the suspension shortens as the hard point comes down.
    let rate = -chassis.velocity_at(hard_point).dot(up);
    (suspension.max_length - length + rate * lookahead, rate)
}

/// How far ahead, s, a spring's force over the step is taken so that it neither adds nor
/// takes energy. The solver spreads the step's force over its `n` substeps, so a force `F`
/// held through the step moves the chassis by `dt v + (n + 1) / (2n) · dt² F / m`; for a
/// spring `F = −k x` that scheme multiplies the oscillation's energy by
/// `1 + ((n − 1) / (2n) − γ) ω² dt²` each step when the spring is taken at `x + γ dt v`, so
/// `γ = (n − 1) / (2n)` keeps it (one substep: `γ = 0`, symplectic Euler).
fn spring_lookahead(dt: Scalar, substeps: u32) -> Scalar {
    let n = substeps.max(1) as Scalar;
    dt * (n - 1.0) / (2.0 * n)
}

/// The spring and damper's push at a wheel on the ground, N, never pulling.
fn suspension_force(wheel: &Wheel, compression: Scalar, rate: Scalar) -> Scalar {
    let suspension = &wheel.suspension;
    let force = suspension.preload + suspension.stiffness * compression + suspension.damping * rate;
    force.max(0.0)
}

/// Moves force between the two wheels of each anti-roll bar by their difference in
/// compression (a wheel off the ground counts as fully extended).
fn apply_anti_roll_bars(controller: &VehicleController, rows: &mut [WheelRows]) {
    for bar in &controller.anti_roll_bars {
        let transfer =
            bar.stiffness * (rows[bar.left_wheel].compression - rows[bar.right_wheel].compression);
        for (index, sign) in [(bar.left_wheel, 1.0), (bar.right_wheel, -1.0)] {
            let row = &mut rows[index];
            if row.contact.is_some() {
                row.suspension_force = (row.suspension_force + sign * transfer).max(0.0);
            }
        }
    }
}

/// Directions, effective masses, softness and limits of a wheel's rows, from the chassis's
/// velocities at the start of the step.
#[allow(clippy::too_many_arguments)]
fn prepare_rows(
    row: &mut WheelRows,
    wheel: &Wheel,
    state: &WheelState,
    input: &VehicleInput,
    brake: Scalar,
    rolling_resistance: Scalar,
    start: &Chassis,
    dt: Scalar,
) {
    let brake_torque =
        brake * wheel.max_brake_torque + input.handbrake * wheel.max_handbrake_torque;
    row.brake_limit = brake_torque * dt;
    let Some(contact) = row.contact else {
        return;
    };
    let normal = contact.normal;
    let axle = start.rotation * steering_rotation(state.steer_angle) * Vector::X;
    let Ok(right) = Dir3::new(axle - normal * axle.dot(normal)) else {
        return;
    };
    row.right = *right;
    row.forward = normal.cross(row.right);
    row.forward_mass = start.inverse_mass_along(row.forward, contact.point);
    row.has_friction = true;
    row.right_mass = start.inverse_mass_along(row.right, contact.point);
    row.normal_mass = start.inverse_mass_along(normal, contact.point);

    let load = row.suspension_force;
    row.brake_limit += rolling_resistance * load * wheel.radius * dt;
    let velocity = start.velocity_at(contact.point);
    let ground_speed = velocity.dot(row.forward);
    let rim_speed = state.angular_velocity * wheel.radius;
    let (long, lat) = slip(ground_speed, rim_speed, velocity.dot(row.right));
    row.longitudinal_slip = long;
    row.lateral_slip = lat;
    row.normal_impulse = load * dt;
    row.friction = friction_coefficient(&wheel.tyre, Vector::new(long, lat, 0.0).length());
    let reference = ground_speed.abs().max(rim_speed.abs());
    row.forward_softness = softness(wheel.tyre.longitudinal_stiffness, load, reference, dt);
    row.right_softness = softness(wheel.tyre.lateral_stiffness, load, reference, dt);
    if contact.length < wheel.suspension.min_length {
        row.bump_stop = Some(0.0);
        row.bump_stop_bias =
            BUMP_STOP_CORRECTION * (wheel.suspension.min_length - contact.length) / dt;
    }
}

/// One Gauss–Seidel pass over a wheel's rows: the bump stop, then the tyre's two friction
/// rows and the brake solved together, clamped to the friction circle and the brake torque.
fn solve_rows(row: &mut WheelRows, wheel: &Wheel, state: &mut WheelState, chassis: &mut Chassis) {
    let Some(contact) = row.contact.filter(|_| row.has_friction) else {
        let brake = clamp_brake(
            row,
            row.brake_impulse - state.angular_velocity * wheel.inertia,
        );
        state.angular_velocity += (brake - row.brake_impulse) / wheel.inertia;
        row.brake_impulse = brake;
        return;
    };
    if let Some(accumulated) = row.bump_stop {
        let approach = chassis.velocity_at(contact.point).dot(contact.normal);
        let total = (accumulated + (row.bump_stop_bias - approach) / row.normal_mass).max(0.0);
        chassis.apply_impulse(contact.normal * (total - accumulated), contact.point);
        row.bump_stop = Some(total);
    }
    let velocity = chassis.velocity_at(contact.point);
    let (forward, right) = tyre_impulses(row, wheel, state, velocity);
    let limit = row.friction * (row.normal_impulse + row.bump_stop.unwrap_or(0.0));
    let length = Vector::new(forward, right, 0.0).length();
    let scale = if length > limit { limit / length } else { 1.0 };
    let (forward, right) = (forward * scale, right * scale);
    let delta_forward = forward - row.forward_impulse;
    let delta_right = right - row.right_impulse;
    chassis.apply_impulse(
        row.forward * delta_forward + row.right * delta_right,
        contact.point,
    );
    // The brake holds the wheel against the tyre's pull as far as its torque goes.
    let spin_impulse = state.angular_velocity * wheel.inertia - delta_forward * wheel.radius;
    let brake = clamp_brake(row, row.brake_impulse - spin_impulse);
    state.angular_velocity +=
        (brake - row.brake_impulse - delta_forward * wheel.radius) / wheel.inertia;
    row.brake_impulse = brake;
    row.forward_impulse = forward;
    row.right_impulse = right;
}

/// The brake's accumulated impulse `wanted`, limited by its torque over the step.
fn clamp_brake(row: &WheelRows, wanted: Scalar) -> Scalar {
    wanted.clamp(-row.brake_limit, row.brake_limit)
}

/// The tyre's accumulated impulses after this pass, before the friction circle.
///
/// Longitudinally the wheel is either held by its brake (the wheel then stands still relative
/// to the chassis, and the row sees the chassis alone) or turns with the brake slipping at its
/// limit (the row sees the chassis and the wheel's spin): solving the brake and the tyre as one
/// block keeps a light wheel from slowing the convergence of a heavy chassis.
fn tyre_impulses(
    row: &WheelRows,
    wheel: &Wheel,
    state: &WheelState,
    velocity: Vector,
) -> (Scalar, Scalar) {
    let ground = velocity.dot(row.forward);
    let spin_momentum = state.angular_velocity * wheel.inertia;
    let held = soft_row(
        row.forward_impulse,
        ground,
        row.forward_mass,
        row.forward_softness,
    );
    let brake_to_hold =
        row.brake_impulse + (held - row.forward_impulse) * wheel.radius - spin_momentum;
    let forward = if brake_to_hold.abs() <= row.brake_limit {
        held
    } else {
        let brake_change = clamp_brake(row, brake_to_hold) - row.brake_impulse;
        let slip_after_brake =
            ground - (state.angular_velocity + brake_change / wheel.inertia) * wheel.radius;
        let wheel_mass = wheel.radius * wheel.radius / wheel.inertia;
        soft_row(
            row.forward_impulse,
            slip_after_brake,
            row.forward_mass + wheel_mass,
            row.forward_softness,
        )
    };
    let right = soft_row(
        row.right_impulse,
        velocity.dot(row.right),
        row.right_mass,
        row.right_softness,
    );
    (forward, right)
}

/// The accumulated impulse of a soft row after one more pass: `J − (u + γ J) / (k + γ)`,
/// which converges to the implicit linear force `J = −u_start / (k + γ)`; zero for an
/// infinitely soft row (a tyre without load).
fn soft_row(
    accumulated: Scalar,
    slip_velocity: Scalar,
    inverse_mass: Scalar,
    softness: Scalar,
) -> Scalar {
    if !softness.is_finite() {
        return 0.0;
    }
    accumulated - (slip_velocity + softness * accumulated) / (inverse_mass + softness)
}

/// Writes a wheel's read-back after the solve: contact, forces, slip, spin angle and pose.
fn record_wheel(wheel: &Wheel, row: &WheelRows, state: &mut WheelState, dt: Scalar) {
    let suspension = &wheel.suspension;
    state.in_contact = row.contact.is_some();
    state.suspension_length = row.contact.map_or(suspension.max_length, |c| {
        c.length.clamp(suspension.min_length, suspension.max_length)
    });
    if let Some(contact) = row.contact {
        state.contact_point = contact.point;
        state.contact_normal = contact.normal;
    }
    state.suspension_force = row.suspension_force + row.bump_stop.unwrap_or(0.0) / dt;
    state.longitudinal_force = row.forward_impulse / dt;
    state.lateral_force = row.right_impulse / dt;
    state.longitudinal_slip = row.longitudinal_slip;
    state.lateral_slip = row.lateral_slip;
    state.rotation_angle = wrap_angle(state.rotation_angle + state.angular_velocity * dt);
    state.local_translation = wheel.position - Vector::Y * state.suspension_length;
    // Rolling forward (towards −Z) turns the wheel's top forward: a negative turn about +X.
    state.local_rotation =
        steering_rotation(state.steer_angle) * rotation_about(Vector::X, -state.rotation_angle);
}

/// `angle` brought into `[−π, π]`.
fn wrap_angle(angle: Scalar) -> Scalar {
    if angle.abs() <= PI {
        angle
    } else {
        angle - TAU * (angle / TAU).round()
    }
}
