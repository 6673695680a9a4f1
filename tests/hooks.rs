//! Collision hooks: pair filtering, one-way platforms (disabled points), conveyor belts
//! (tangent velocity), friction and restitution overrides, and hooks that read the world.

use crate::common;

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

/// Substep length with the default 4 substeps.
const H: f32 = DT / 4.0;

// ---------------------------------------------------------------------------------------------
// Pair filtering

/// Colliders the filter hook lets pass through everything.
#[derive(Component)]
struct Ghost;

/// Every pair the filter hook was asked about.
#[derive(Resource, Default)]
struct FilterLog(Mutex<Vec<(Entity, Entity)>>);

#[derive(SystemParam)]
struct GhostHooks<'w, 's> {
    ghosts: Query<'w, 's, (), With<Ghost>>,
    log: Res<'w, FilterLog>,
}

impl CollisionHooks for GhostHooks<'_, '_> {
    fn filter_pairs(&self, collider1: Entity, collider2: Entity, _: &mut Commands) -> bool {
        self.log.0.lock().unwrap().push((collider1, collider2));
        !self.ghosts.contains(collider1) && !self.ghosts.contains(collider2)
    }
}

fn ball(app: &mut App, x: f32, y: f32, extra: impl Bundle) -> Entity {
    spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_xyz(x, y, 0.0),
            SleepingDisabled,
            extra,
        ),
    )
}

#[test]
fn rejected_pairs_pass_through_and_unflagged_colliders_never_reach_the_hook() {
    let mut app = hooked_app::<GhostHooks>();
    app.init_resource::<FilterLog>();
    let floor = ground(&mut app);
    let y0 = 2.0;
    // Rejected by the hook: falls through the ground.
    let ghost = ball(
        &mut app,
        -5.0,
        y0,
        (Ghost, ActiveCollisionHooks::FILTER_PAIRS),
    );
    // Asked about and accepted: lands.
    let asked = ball(&mut app, 0.0, y0, ActiveCollisionHooks::FILTER_PAIRS);
    // Not opted in: lands, and the hook never sees its pair.
    let plain = ball(&mut app, 5.0, y0, ());
    let g = g();
    // In 1 s the ghost falls 4.9 m, clean through the 1 m thick ground (its top at y = -1.5
    // m is passed after 0.85 s).
    for k in 1..=64u32 {
        app.update();
        // Free fall exactly as tests/free_fall.rs derives it: semi-implicit Euler over
        // substeps lags the closed form by g h t / 2, and f32 rounding over 1 s and 5 m stays
        // under that file's ROUNDING bound of 3e-4 m.
        let t = k as f32 * DT;
        let expected = y0 - 0.5 * g * t * t - 0.5 * g * H * t;
        let y = position(&app, ghost).y;
        assert!(
            (y - expected).abs() <= 3e-4,
            "step {k}: the rejected ball is at y = {y}, free fall gives {expected}"
        );
    }
    // A second for the others to land (at 5.4 m/s after 0.55 s) and settle.
    step(&mut app, 64);
    // The others rest on the ground (centre at the radius, within the contact tolerance).
    for body in [asked, plain] {
        let y = position(&app, body).y;
        assert!(
            (y - 0.5).abs() <= slop(),
            "{body} is at y = {y}, expected to rest at 0.5"
        );
    }
    let log = app
        .world()
        .resource::<FilterLog>()
        .0
        .lock()
        .unwrap()
        .clone();
    // The floor was created first, so it is each pair's second collider.
    assert!(log.contains(&(ghost, floor)), "ghost pair never filtered");
    assert!(
        log.contains(&(asked, floor)),
        "opted-in pair never filtered"
    );
    assert!(
        log.iter().all(|&(a, b)| a != plain && b != plain),
        "the hook saw a pair of a collider without ActiveCollisionHooks: {log:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// One-way platforms

#[derive(Component)]
struct OneWay;

/// How deep a body may be in a one-way platform and still be held: deeper means it is on its
/// way up through. A landing body is caught by speculative contacts before it penetrates, and
/// rests about 0.3 mm deep, so 5 cm is generous on one side; on the other, a body rising at
/// v m/s crosses the top in steps of v dt (12 cm at 8 m/s), so at most one step's contact is
/// kept on the way up, and that one only pushes up.
const ONE_WAY_DEPTH: f32 = 0.05;

#[derive(SystemParam)]
struct PlatformHooks<'w, 's> {
    platforms: Query<'w, 's, (), With<OneWay>>,
}

impl CollisionHooks for PlatformHooks<'_, '_> {
    fn modify_contacts(&self, contacts: &mut ContactPairMut, _: &mut Commands) -> bool {
        // Normals point from collider 1 to collider 2; turn them to point out of the platform.
        let sign = if self.platforms.contains(contacts.collider1) {
            1.0
        } else {
            -1.0
        };
        contacts.retain_points(|p| sign * p.normal.y > 0.7 && p.separation > -ONE_WAY_DEPTH);
        true
    }
}

#[test]
fn one_way_platform_lets_a_body_up_through_and_holds_it_on_top() {
    let mut app = hooked_app::<PlatformHooks>();
    let top = 2.1;
    spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::cuboid(4.0, 0.2, 4.0),
            Transform::from_xyz(0.0, top - 0.1, 0.0),
            OneWay,
            ActiveCollisionHooks::MODIFY_CONTACTS,
        ),
    );
    // A half-metre box launched upward from 1.5 m below the platform's underside.
    let v0 = 8.0;
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(0.5, 0.5, 0.5),
            Transform::from_xyz(0.0, 0.25, 0.0),
            LinearVelocity(Vec3::Y * v0),
            SleepingDisabled,
        ),
    );
    let bottom = |app: &App| position(app, body).y - 0.25;
    let mut apex: f32 = 0.0;
    // Up for v0 / g = 0.82 s, down onto the platform in 0.49 s; 3 s leaves 1.7 s to settle.
    for _ in 0..192 {
        app.update();
        apex = apex.max(bottom(&app));
    }
    // Unhindered flight. Semi-implicit Euler over substeps gives y = v0 t − ½ g t² − ½ g h t
    // (tests/free_fall.rs), whose peak is (v0 − g h / 2)² / 2g, 1.6 cm under v0² / 2g; the
    // steps sample it at most dt / 2 from the peak, which costs at most g dt² / 8. Rounding
    // is bounded by 1e-4 m (tests/free_fall.rs: 3e-4 m over a whole second of 5 m falls).
    let g = g();
    let peak = (v0 - 0.5 * g * H).powi(2) / (2.0 * g);
    assert!(
        apex <= peak + 1e-4 && apex >= peak - g * DT * DT / 8.0 - 1e-4,
        "apex {apex} m: the platform got in the way (free flight peaks at {peak} m)"
    );
    let rest = bottom(&app);
    assert!(
        (rest - top).abs() <= slop(),
        "came to rest with its bottom at {rest} m, the platform top is at {top} m"
    );
    assert!(
        speed(&app, body) < 1e-2,
        "still moving at {}",
        speed(&app, body)
    );
}

// ---------------------------------------------------------------------------------------------
// Conveyor belts

/// A belt whose surface moves at `velocity`.
#[derive(Component)]
struct Belt {
    velocity: Vec3,
}

/// Marks bodies the belt hook has seen (queued with `Commands`).
#[derive(Component)]
struct Carried;

#[derive(SystemParam)]
struct BeltHooks<'w, 's> {
    belts: Query<'w, 's, &'static Belt>,
}

impl CollisionHooks for BeltHooks<'_, '_> {
    fn modify_contacts(&self, contacts: &mut ContactPairMut, commands: &mut Commands) -> bool {
        let (belt, rider) = if self.belts.contains(contacts.collider1) {
            (contacts.collider1, contacts.body2)
        } else {
            (contacts.collider2, contacts.body1)
        };
        if let Ok(surface) = self.belts.get(belt) {
            contacts.set_surface_velocity(belt, surface.velocity);
            if let Some(rider) = rider {
                commands.entity(rider).try_insert(Carried);
            }
        }
        true
    }
}

/// A static 40 m belt with its top at y = 0 moving at `velocity`, and a unit box resting on
/// it with friction `mu` (the belt's is 0.5; geometric mean).
fn belt_scene(app: &mut App, velocity: Vec3, mu: f32, z: f32) -> (Entity, Entity) {
    let belt = spawn(
        app,
        (
            RigidBody::Static,
            Collider::cuboid(40.0, 1.0, 2.0),
            Transform::from_xyz(0.0, -0.5, z),
            Belt { velocity },
            ActiveCollisionHooks::MODIFY_CONTACTS,
        ),
    );
    let body = spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 0.5, z),
            Friction::new(mu),
            SleepingDisabled,
        ),
    );
    (belt, body)
}

/// Steady-state tolerance on the carried speed. Once the box moves with the belt the friction
/// rows need almost no impulse, well inside the cone, so every friction solve sets the
/// patch's relative tangential speed to the target exactly up to f32 rounding, and the next
/// step starts from there (nothing accumulates). The velocity goes through about a hundred
/// operations per step at ulp(2 m/s) = 2.4e-7 each, 2.4e-5 m/s at worst; the bound is four
/// times that. (The normal rows act along y and do not touch it.)
const CARRY_TOLERANCE: f32 = 1e-4;

#[test]
fn conveyor_carries_a_box_at_belt_speed_and_not_a_frictionless_one() {
    let mut app = hooked_app::<BeltHooks>();
    let v = Vec3::new(2.0, 0.0, 0.0);
    let (_, rider) = belt_scene(&mut app, v, 0.5, 0.0);
    let (_, slider) = belt_scene(&mut app, v, 0.0, 5.0);
    // Kinetic phase: the belt drags the box at μ g = 4.9 m/s² (the friction cone is μ times
    // the normal impulse m g h per substep), so it reaches 2 m/s after v / (μ g) = 0.41 s.
    step(&mut app, 16);
    let early = velocity(&app, rider).x;
    let t = 16.0 * DT;
    let mu_g = 0.5 * g();
    // Each substep's friction is μ times the normal impulse, m g h once the soft contact has
    // settled, which it does in the first steps from the exact resting pose; 1 % covers that
    // transient.
    assert!(
        (early - mu_g * t).abs() <= 0.01 * mu_g * t,
        "after {t} s the box moves at {early} m/s, μ g t = {}",
        mu_g * t
    );
    step(&mut app, 48);
    let carried = velocity(&app, rider);
    assert!(
        (carried - v).length() <= CARRY_TOLERANCE,
        "box on the belt moves at {carried}, the belt surface at {v}"
    );
    // μ = 0: the belt cannot pull it.
    let frictionless = velocity(&app, slider);
    assert!(
        frictionless.length() <= CARRY_TOLERANCE,
        "a frictionless box was carried at {frictionless}"
    );
}

// ---------------------------------------------------------------------------------------------
// Friction and restitution overrides

/// What the material hook sets, read from a resource every step.
#[derive(Resource, Default, Clone, Copy)]
struct Overrides {
    friction: Option<f32>,
    restitution: Option<f32>,
}

/// How many times the material hook ran.
#[derive(Resource, Default)]
struct ModifyCalls(AtomicU32);

#[derive(SystemParam)]
struct MaterialHooks<'w> {
    overrides: Res<'w, Overrides>,
    calls: Res<'w, ModifyCalls>,
}

impl CollisionHooks for MaterialHooks<'_> {
    fn modify_contacts(&self, contacts: &mut ContactPairMut, _: &mut Commands) -> bool {
        self.calls.0.fetch_add(1, Ordering::Relaxed);
        if let Some(mu) = self.overrides.friction {
            contacts.set_friction(mu);
        }
        if let Some(e) = self.overrides.restitution {
            contacts.set_restitution(e);
        }
        true
    }
}

fn material_app(overrides: Overrides) -> App {
    let mut app = hooked_app::<MaterialHooks>();
    app.insert_resource(overrides)
        .init_resource::<ModifyCalls>();
    app
}

const RADIUS: f32 = 0.5;
const HEIGHT: f32 = 5.0;

/// The highest the bottom of a ball dropped from `HEIGHT` gets after it first touches the
/// ground (the procedure of tests/restitution.rs).
fn rebound_apex(mut app: App, floor_extra: impl Bundle, ball_extra: impl Bundle) -> f32 {
    let floor = ground(&mut app);
    set(&mut app, floor, floor_extra);
    let ball = ball(&mut app, 0.0, RADIUS + HEIGHT, ball_extra);
    let mut touched = false;
    let mut apex = f32::NEG_INFINITY;
    for _ in 0..192 {
        app.update();
        let v = velocity(&app, ball).y;
        let bottom = position(&app, ball).y - RADIUS;
        if !touched {
            touched = v >= 0.0 && bottom < 0.1 * HEIGHT;
        } else {
            apex = apex.max(bottom);
            if v < 0.0 && bottom < apex {
                break;
            }
        }
    }
    assert!(touched, "the ball never reached the ground");
    apex
}

#[test]
fn hook_restitution_bounces_like_the_restitution_component() {
    let bounce = Overrides {
        restitution: Some(1.0),
        ..default()
    };
    let hooked = rebound_apex(
        material_app(bounce),
        (),
        ActiveCollisionHooks::MODIFY_CONTACTS,
    );
    // The same drop with e = 1 from components, no hook.
    let component = rebound_apex(app(), Restitution::new(1.0), Restitution::new(1.0));
    // Same contacts, same coefficient, same arithmetic: the same apex.
    assert!(
        hooked == component,
        "apex {hooked} m with the hook, {component} m with Restitution::new(1.0)"
    );
    // And e² = 1 within the 10 % of tests/restitution.rs.
    assert!((hooked / HEIGHT - 1.0).abs() <= 0.1, "apex {hooked} m");
    // Without the override the same hooked app does not bounce (e = 0).
    let dead = rebound_apex(
        material_app(Overrides::default()),
        (),
        ActiveCollisionHooks::MODIFY_CONTACTS,
    );
    assert!(dead.abs() <= slop(), "apex {dead} m with e = 0");
}

const THETA: f32 = std::f32::consts::FRAC_PI_6;

/// A box on a 30° incline, both with friction 0.8 > tan 30° (so it holds), the box opted in
/// to the material hook. Returns the app, the box and the down-slope direction.
fn incline(overrides: Overrides) -> (App, Entity, Vec3) {
    let mut app = material_app(overrides);
    let tilt = Quat::from_rotation_z(THETA);
    let normal = tilt * Vec3::Y;
    spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::cuboid(40.0, 1.0, 10.0),
            Transform::from_translation(-0.5 * normal).with_rotation(tilt),
            Friction::new(0.8),
        ),
    );
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_translation(0.5 * normal).with_rotation(tilt),
            Friction::new(0.8),
            SleepingDisabled,
            ActiveCollisionHooks::MODIFY_CONTACTS,
        ),
    );
    (app, body, -(tilt * Vec3::X))
}

/// Acceleration down the slope from the second difference of three positions T apart (exact
/// for semi-implicit Euler under constant acceleration, as in tests/friction.rs).
fn slope_acceleration(app: &mut App, body: Entity, down: Vec3) -> f32 {
    let along = |app: &App| position(app, body).dot(down);
    step(app, 16);
    let s0 = along(app);
    step(app, 32);
    let s1 = along(app);
    step(app, 32);
    let s2 = along(app);
    let t = 32.0 * DT;
    (s2 - 2.0 * s1 + s0) / (t * t)
}

#[test]
fn hook_friction_zero_lets_a_box_slide_at_g_sin_theta() {
    let frictionless = Overrides {
        friction: Some(0.0),
        ..default()
    };
    let (mut app, body, down) = incline(frictionless);
    let a = slope_acceleration(&mut app, body, down);
    let expected = g() * THETA.sin();
    // Without friction only gravity acts along the slope (contact impulses are along the
    // normal), so only rounding is left: each 32-step span adds 128 position updates of
    // ½ ulp(4 m) = 2.4e-7 m, 3e-5 m per span, 1.2e-4 m/s² in the second difference over
    // T² = 0.25 s², 2.5e-5 of g sin θ. The bound is four times that.
    assert!(
        (a - expected).abs() <= 1e-4 * expected,
        "slid at {a} m/s², g sin θ = {expected}"
    );
    assert!(
        app.world()
            .resource::<ModifyCalls>()
            .0
            .load(Ordering::Relaxed)
            > 0
    );
    // The same box with the hook not overriding anything holds (μ = 0.8 > tan θ).
    let (mut app, body, down) = incline(Overrides::default());
    let a = slope_acceleration(&mut app, body, down);
    assert!(
        a.abs() <= 1e-4 * expected,
        "held box accelerates at {a} m/s²"
    );
}

#[test]
fn colliders_without_the_flag_are_not_modified() {
    let mut app = material_app(Overrides {
        friction: Some(0.0),
        ..default()
    });
    ground(&mut app);
    ball(&mut app, 0.0, 0.5, ());
    step(&mut app, 32);
    assert_eq!(
        app.world()
            .resource::<ModifyCalls>()
            .0
            .load(Ordering::Relaxed),
        0,
        "modify_contacts ran for a pair without ActiveCollisionHooks"
    );
}

// ---------------------------------------------------------------------------------------------
// Hooks that read (and write) the world

#[test]
fn hooks_read_components_each_step_and_their_commands_apply() {
    // Registered as a plugin on an app that already has physics.
    let mut app = app();
    app.add_plugins(CollisionHooksPlugin::<BeltHooks>::default());
    let (belt, rider) = belt_scene(&mut app, Vec3::new(1.0, 0.0, 0.0), 0.5, 0.0);
    step(&mut app, 64);
    let v = velocity(&app, rider);
    assert!(
        (v - Vec3::X).length() <= CARRY_TOLERANCE,
        "moves at {v}, belt at 1 m/s"
    );
    assert!(
        app.world().get::<Carried>(rider).is_some(),
        "the hook's command was not applied"
    );
    // Reverse the belt through its component: the hook's query sees the new value. The box
    // turns around at μ g (3 m/s change in 0.61 s); 1.5 s is ample.
    app.world_mut().get_mut::<Belt>(belt).unwrap().velocity = Vec3::new(-2.0, 0.0, 0.0);
    step(&mut app, 96);
    let v = velocity(&app, rider);
    assert!(
        (v + 2.0 * Vec3::X).length() <= CARRY_TOLERANCE,
        "moves at {v}, belt now at -2 m/s"
    );
}

// ---------------------------------------------------------------------------------------------
// Bad input

#[derive(SystemParam)]
struct BadHooks;

impl CollisionHooks for BadHooks {
    fn modify_contacts(&self, contacts: &mut ContactPairMut, _: &mut Commands) -> bool {
        contacts.set_friction(f32::NAN);
        contacts.set_restitution(-1.0);
        contacts.set_tangent_velocity(Vec3::INFINITY);
        true
    }
}

#[test]
fn invalid_hook_values_are_ignored_and_reported_once() {
    let ((app, ball_entity), warnings) = capture_warnings(|| {
        let mut app = hooked_app::<BadHooks>();
        ground(&mut app);
        let b = ball(&mut app, 0.0, 0.5, ActiveCollisionHooks::MODIFY_CONTACTS);
        step(&mut app, 64);
        (app, b)
    });
    // One warning in 64 steps, about the hook, naming the ball; no other trouble (a value let
    // through would poison the ball's velocity, which the solver would report).
    assert_eq!(warnings.len(), 1, "warnings: {warnings:?}");
    assert!(
        warnings[0].contains("hook") && warnings[0].contains(&format!("{ball_entity}")),
        "the warning does not name the hook and the ball: {warnings:?}"
    );
    // Nothing was applied: the ball rests as usual.
    let y = position(&app, ball_entity).y;
    assert!((y - 0.5).abs() <= slop(), "ball at {y}");
}

#[derive(Resource)]
struct NeverInserted;

#[derive(SystemParam)]
struct MissingResourceHooks<'w> {
    _missing: Res<'w, NeverInserted>,
}

impl CollisionHooks for MissingResourceHooks<'_> {
    fn filter_pairs(&self, _: Entity, _: Entity, _: &mut Commands) -> bool {
        false
    }
}

#[test]
fn hooks_with_unavailable_parameters_are_skipped_with_a_warning() {
    let ((mut app, resting), warnings) = capture_warnings(|| {
        let mut app = app();
        app.add_plugins(CollisionHooksPlugin::<MissingResourceHooks>::default());
        // A second hooks type is refused.
        app.add_plugins(CollisionHooksPlugin::<BadHooks>::default());
        ground(&mut app);
        let resting = ball(&mut app, 0.0, 0.5, ActiveCollisionHooks::ALL);
        step(&mut app, 32);
        (app, resting)
    });
    let skipped = warnings.iter().filter(|w| w.contains("skipped")).count();
    assert_eq!(skipped, 1, "warnings: {warnings:?}");
    assert!(
        warnings.iter().any(|w| w.contains("already registered")),
        "warnings: {warnings:?}"
    );
    // The world kept simulating: the ball rests on the ground (the skipped filter rejects
    // nothing).
    assert!(all_bodies_finite(&mut app));
    let y = position(&app, resting).y;
    assert!((y - 0.5).abs() <= slop(), "ball at {y}");
}

// ---------------------------------------------------------------------------------------------
// Disabling some of a manifold's points

#[derive(SystemParam)]
struct RightSideHooks<'w, 's> {
    bodies: Query<'w, 's, &'static Position>,
}

impl CollisionHooks for RightSideHooks<'_, '_> {
    /// Disables the points right of the body's centre.
    fn modify_contacts(&self, contacts: &mut ContactPairMut, _: &mut Commands) -> bool {
        let body = contacts.body2.or(contacts.body1);
        if let Some(Ok(centre)) = body.map(|b| self.bodies.get(b)) {
            let x = centre.x;
            contacts.retain_points(|p| p.point.x < x);
        }
        true
    }
}

/// What `Collisions` reports for the only touching pair: each point's x, normal impulse and
/// whether it is enabled.
fn reported_points(app: &mut App) -> Vec<(f32, f32, bool)> {
    app.world_mut()
        .run_system_cached(|collisions: Collisions| {
            let pair = collisions.iter().next().expect("no touching pair");
            pair.points()
                .enumerate()
                .map(|(i, p)| (p.point.x, p.normal_impulse, pair.is_point_enabled(i)))
                .collect::<Vec<_>>()
        })
        .unwrap()
}

#[test]
fn disabling_some_points_tips_a_box_about_the_others() {
    let mut app = hooked_app::<RightSideHooks>();
    let floor = ground(&mut app);
    // μ = 1 keeps the pivot from slipping: at the start the pivot must supply a horizontal
    // force of 3/8 m g against a normal force of 5/8 m g (μ ≥ 0.6).
    set(&mut app, floor, Friction::new(1.0));
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 0.5, 0.0),
            Friction::new(1.0),
            ActiveCollisionHooks::MODIFY_CONTACTS,
        ),
    );
    // Resting on its left edge only, a unit cube pivots about it: torque m g a / 2 over the
    // edge inertia 2 m a² / 3 gives α = 3 g / 4a. Semi-implicit Euler over substeps leads the
    // closed form ½ α t² by ½ α h t (the free-fall offset of tests/free_fall.rs, with the sign
    // of a velocity-first update from rest). By t = 1/8 s the box has turned 0.06 rad, which
    // shortens the lever arm by a factor cos(45° + θ) / cos 45° ≥ 0.93 (about 2 % less turn
    // on average); 5 % covers that and the soft contact's give at the pivot.
    step(&mut app, 8);
    let t = 8.0 * DT;
    let alpha = 3.0 * g() / 4.0;
    let expected = 0.5 * alpha * t * t + 0.5 * alpha * H * t;
    let (_, angle) = rotation(&app, body).to_axis_angle();
    assert!(
        (angle - expected).abs() <= 0.05 * expected,
        "turned {angle} rad in {t} s, a box on one edge turns {expected} rad"
    );
    // The disabled (right) points carry no impulse, the enabled ones carry the load.
    let points = reported_points(&mut app);
    assert_eq!(points.len(), 4, "{points:?}");
    for &(x, impulse, enabled) in &points {
        if x > 0.0 {
            assert!(!enabled && impulse == 0.0, "right point {points:?}");
        } else {
            assert!(enabled && impulse > 0.0, "left point {points:?}");
        }
    }
}
