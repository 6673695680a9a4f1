//! The kinematic character controller against geometry: ramps it climbs and ramps it must not
//! (and slides down), steps on both sides of the step height, sliding along a wall without
//! entering it, the ground and normal it reports, jumping and landing, pushing and being
//! pushed, bad input.
//!
//! Tolerances: shape casts are refined to 1e-6 m and the controller keeps a skin width
//! `SKIN` of gap (exact up to that refinement), so resting heights are checked to 1e-4 m.
//! Horizontal motion is preserved exactly by the method on ground and along walls; its
//! tolerance is f32 round-off of the solver integrating the kinematic body (4 substeps a
//! step, ~ulp(8 m)/2 = 4.8e-7 each) over the steps run: about 256 × 4 × 4.8e-7 ≈ 5e-4 m.

use crate::common;

use bevy::ecs::system::RunSystemOnce;
use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

/// Capsule radius and cylinder length: 1.6 m tall, its centre 0.8 m above its foot.
const RADIUS: f32 = 0.3;
const LENGTH: f32 = 1.0;
const HALF_HEIGHT: f32 = RADIUS + 0.5 * LENGTH;
/// The controller's default skin width.
const SKIN: f32 = 0.01;
/// Resting heights: skin gap exact up to the cast refinement (1e-6) and f32 round-off.
const REST_EPS: f32 = 1e-4;
/// Horizontal travel: f32 round-off of the kinematic integration (see the module docs).
const TRAVEL_EPS: f32 = 5e-4;
/// Ground normals are read from the face itself (a ray onto it), so they carry only the f32
/// round-off of the face normal parry computes from the hull's vertices (~1e-7).
const NORMAL_EPS: f32 = 1e-5;

fn capsule() -> Collider {
    Collider::capsule(RADIUS, LENGTH)
}

/// A character whose foot starts a skin width above `foot`, walking at `velocity`.
fn character(app: &mut App, foot: Vec3, velocity: Vec3) -> Entity {
    spawn(
        app,
        (
            CharacterController {
                desired_velocity: velocity,
                ..default()
            },
            capsule(),
            Transform::from_translation(foot + Vec3::Y * (HALF_HEIGHT + SKIN)),
            Position(foot + Vec3::Y * (HALF_HEIGHT + SKIN)),
        ),
    )
}

fn foot(app: &App, e: Entity) -> Vec3 {
    position(app, e) - Vec3::Y * HALF_HEIGHT
}

fn state(app: &App, e: Entity) -> CharacterControllerState {
    app.world()
        .get::<CharacterControllerState>(e)
        .unwrap()
        .clone()
}

fn set_velocity(app: &mut App, e: Entity, v: Vec3) {
    app.world_mut()
        .get_mut::<CharacterController>(e)
        .unwrap()
        .desired_velocity = v;
}

/// A static wedge rising along +x from `x0` at `angle` over `run` m (4 m wide in z), with a
/// flat platform of length `platform` on top. Returns the wedge and its height.
fn ramp(app: &mut App, x0: f32, run: f32, angle_deg: f32, platform: f32) -> (Entity, f32) {
    let height = run * angle_deg.to_radians().tan();
    let points = [-2.0, 2.0]
        .into_iter()
        .flat_map(|z| {
            [
                Vec3::new(x0, 0.0, z),
                Vec3::new(x0 + run, 0.0, z),
                Vec3::new(x0 + run, height, z),
            ]
        })
        .collect();
    let wedge = spawn(
        app,
        (RigidBody::Static, Collider::convex_hull(points).unwrap()),
    );
    if platform > 0.0 {
        spawn(
            app,
            (
                RigidBody::Static,
                Collider::cuboid(platform, height, 4.0),
                Transform::from_xyz(x0 + run + 0.5 * platform, 0.5 * height, 0.0),
            ),
        );
    }
    (wedge, height)
}

/// A static box from `x0` to `x0 + 4` in x, `height` tall, 4 m wide.
fn ledge(app: &mut App, x0: f32, height: f32) -> Entity {
    spawn(
        app,
        (
            RigidBody::Static,
            Collider::cuboid(4.0, height, 4.0),
            Transform::from_xyz(x0 + 2.0, 0.5 * height, 0.0),
        ),
    )
}

/// The colliders other than its own that the character's capsule overlaps.
fn overlaps(app: &mut App, e: Entity) -> Vec<Entity> {
    let (p, r) = (position(app, e), rotation(app, e));
    app.world_mut()
        .run_system_once(move |q: SpatialQuery| {
            let filter = SpatialQueryFilter::default().with_excluded_entities([e]);
            q.shape_intersections(&capsule(), p, r, &filter)
        })
        .unwrap()
}

/// Foot height a capsule resting on a plane through the x axis at `angle` keeps at `x`: its
/// bottom sphere's centre is `RADIUS + SKIN` from the plane along the normal.
fn foot_on_slope(x: f32, x0: f32, angle_deg: f32) -> f32 {
    let a = angle_deg.to_radians();
    (x - x0) * a.tan() + (RADIUS + SKIN) / a.cos() - RADIUS
}

/// The outward normal of a face rising along +x at `angle`.
fn slope_normal(angle_deg: f32) -> Vec3 {
    let (sin, cos) = angle_deg.to_radians().sin_cos();
    Vec3::new(-sin, cos, 0.0)
}

#[test]
fn climbs_a_30_degree_ramp_to_its_top() {
    let mut app = app();
    ground(&mut app);
    let (x0, run) = (1.0, 3.0);
    let (_, height) = ramp(&mut app, x0, run, 30.0, 4.0);
    let start = Vec3::new(-1.0, 0.0, 0.0);
    let speed = 2.0;
    let player = character(&mut app, start, Vec3::X * speed);
    let steps = 224; // 3.5 s: 7 m, ending 2 m onto the platform
    let face_normal = slope_normal(30.0);
    let mut on_face = 0;
    for _ in 0..steps {
        app.update();
        let f = foot(&app, player);
        // While the bottom sphere touches only the face (its contact point, RADIUS·sin 30°
        // ahead of the axis, inside the face), the foot follows the ramp's geometry.
        let contact_x = f.x + RADIUS * 0.5;
        if contact_x > x0 + 0.1 && contact_x < x0 + run - 0.1 {
            on_face += 1;
            let expected = foot_on_slope(f.x, x0, 30.0);
            assert!(
                (f.y - expected).abs() < REST_EPS,
                "at x = {}: foot {} against {expected}",
                f.x,
                f.y
            );
            let s = state(&app, player);
            assert!(s.grounded, "not grounded at x = {}", f.x);
            assert!(
                (s.ground_normal - face_normal).length() < NORMAL_EPS,
                "at x = {}: ground normal {} against {face_normal}",
                f.x,
                s.ground_normal
            );
        }
        assert!(overlaps(&mut app, player).is_empty(), "inside at {f}");
    }
    assert!(on_face > 40, "only {on_face} steps on the face");
    let f = foot(&app, player);
    // Horizontal speed is kept on the ramp: 3.5 s at 2 m/s.
    let t = steps as f32 * DT;
    assert!(
        (f.x - (start.x + speed * t)).abs() < TRAVEL_EPS,
        "ended at x = {}",
        f.x
    );
    // On the platform, a skin above its top: the height gained is the ramp's rise.
    assert!(
        (f.y - (height + SKIN)).abs() < REST_EPS,
        "foot {} against the top {height}",
        f.y
    );
    assert!(state(&app, player).grounded);
}

#[test]
fn stops_at_a_60_degree_ramp() {
    let mut app = app();
    ground(&mut app);
    let x0 = 1.0;
    ramp(&mut app, x0, 1.5, 60.0, 0.0);
    let player = character(&mut app, Vec3::new(-1.0, 0.0, 0.0), Vec3::X * 2.0);
    let start = foot(&app, player);
    let mut highest = start.y;
    for _ in 0..192 {
        app.update();
        highest = highest.max(foot(&app, player).y);
        assert!(overlaps(&mut app, player).is_empty());
    }
    assert!(
        highest - start.y < REST_EPS,
        "rose {} m on a 60° ramp",
        highest - start.y
    );
    // Stopped with its bottom sphere a skin from the face: the sphere's centre, RADIUS + SKIN
    // above the floor, is RADIUS + SKIN from the plane through (x0, 0) with normal
    // (-sin 60°, cos 60°).
    let (s, c) = 60f32.to_radians().sin_cos();
    let expected = x0 - (RADIUS + SKIN) * (1.0 - c) / s;
    let x = foot(&app, player).x;
    assert!(
        (x - expected).abs() < REST_EPS,
        "stopped at {x}, expected {expected}"
    );
}

/// The default step height (0.3 m) is the limit the step tests probe from both sides.
const STEP_HEIGHT: f32 = 0.3;

#[test]
fn steps_onto_ledges_up_to_the_step_height() {
    assert_eq!(MoveAndSlideConfig::default().step_height, STEP_HEIGHT);
    for height in [0.1, 0.2, STEP_HEIGHT - 0.01] {
        let mut app = app();
        ground(&mut app);
        let ledge_top = ledge(&mut app, 1.0, height);
        let start = Vec3::new(-1.0, 0.0, 0.0);
        let player = character(&mut app, start, Vec3::X * 2.0);
        for _ in 0..160 {
            // 2.5 s: 5 m, ending 3 m onto the ledge.
            app.update();
            let inside = overlaps(&mut app, player);
            assert!(inside.is_empty(), "{height} m: inside {inside:?}");
        }
        let f = foot(&app, player);
        assert!(
            (f.y - (height + SKIN)).abs() < REST_EPS,
            "{height} m: foot at {}",
            f.y
        );
        // Stepping keeps the horizontal motion.
        assert!(
            (f.x - (start.x + 5.0)).abs() < TRAVEL_EPS,
            "{height} m: ended at x = {}",
            f.x
        );
        let s = state(&app, player);
        assert!(s.grounded && s.ground_entity == Some(ledge_top));
    }
}

#[test]
fn does_not_step_onto_ledges_above_the_step_height() {
    for height in [STEP_HEIGHT + 0.01, 0.5] {
        let mut app = app();
        ground(&mut app);
        ledge(&mut app, 1.0, height);
        let player = character(&mut app, Vec3::new(-1.0, 0.0, 0.0), Vec3::X * 2.0);
        let start = foot(&app, player);
        let mut highest = start.y;
        for _ in 0..160 {
            app.update();
            highest = highest.max(foot(&app, player).y);
            let inside = overlaps(&mut app, player);
            assert!(inside.is_empty(), "{height} m: inside {inside:?}");
        }
        assert!(
            highest - start.y < REST_EPS,
            "{height} m: rose {} m",
            highest - start.y
        );
        // Stopped a skin in front of the face with the capsule's straight side.
        let x = foot(&app, player).x;
        assert!(
            (x - (1.0 - RADIUS - SKIN)).abs() < REST_EPS,
            "{height} m: stopped at {x}"
        );
        assert!(state(&app, player).grounded);
    }
}

#[test]
fn slides_along_a_wall_it_walks_into_at_45_degrees() {
    let mut app = app();
    ground(&mut app);
    // A wall whose face is the plane z = 1.
    let wall = spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::cuboid(40.0, 3.0, 0.5),
            Transform::from_xyz(0.0, 1.5, 1.25),
        ),
    );
    let speed = 2.0;
    let dir = Vec3::new(1.0, 0.0, 1.0).normalize();
    let player = character(&mut app, Vec3::ZERO, dir * speed);
    let stop_z = 1.0 - RADIUS - SKIN;
    let mut contact: Option<(usize, Vec3)> = None;
    let steps = 192;
    for k in 1..=steps {
        app.update();
        let p = position(&app, player);
        assert!(p.z <= stop_z + 1e-5, "step {k}: z = {}", p.z);
        assert!(overlaps(&mut app, player).is_empty(), "step {k}: inside");
        let hit_wall = state(&app, player).hits.iter().any(|h| h.entity == wall);
        if contact.is_none() && hit_wall {
            contact = Some((k, p));
        }
    }
    let (k0, p0) = contact.expect("never reached the wall");
    let p = position(&app, player);
    assert!((p.z - stop_z).abs() < REST_EPS, "z = {}", p.z);
    // Along the wall the character keeps v·cos 45° from the step it met the wall.
    let t = (steps - k0) as f32 * DT;
    let along = p.x - p0.x;
    let expected = speed * 45f32.to_radians().cos() * t;
    assert!(
        (along - expected).abs() < TRAVEL_EPS,
        "slid {along} m along the wall, expected {expected}"
    );
}

/// The `MoveAndSlide` parameter in a system of the game's own: a ball moved 2 m along X and
/// 2 m along Z into a wall whose face is the plane z = 1 stops a skin width from it, slides
/// along it the rest of the way (collide-and-slide keeps the part of the displacement along
/// the wall: 2 m along X in all), and its velocity loses exactly its part into the wall.
#[test]
fn move_and_slide_in_a_system_slides_along_a_wall_and_projects_the_velocity() {
    let mut app = app();
    let wall = spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::cuboid(40.0, 3.0, 0.5),
            Transform::from_xyz(0.0, 1.5, 1.25),
        ),
    );
    app.update();
    let (out, velocity) = app
        .world_mut()
        .run_system_once(move |slide: MoveAndSlide| {
            let ball = Collider::sphere(RADIUS);
            let start = Vec3::new(0.0, 1.5, 0.0);
            let config = MoveAndSlideConfig::default();
            let filter = SpatialQueryFilter::default();
            let step = Vec3::new(2.0, 0.0, 2.0);
            let out = slide.move_and_slide(&ball, start, Quat::IDENTITY, step, &config, &filter);
            let velocity = out.projected_velocity(Vec3::new(1.0, -0.5, 1.0));
            (out, velocity)
        })
        .unwrap();
    let stop_z = 1.0 - RADIUS - SKIN;
    assert!(
        (out.position - Vec3::new(2.0, 1.5, stop_z)).length() < REST_EPS,
        "ended at {}",
        out.position
    );
    assert_eq!(out.hits.first().map(|hit| hit.entity), Some(wall));
    // The face's normal is −Z to f32 round-off; the velocity keeps X and Y.
    assert!(
        (velocity - Vec3::new(1.0, -0.5, 0.0)).length() < NORMAL_EPS,
        "projected velocity {velocity}"
    );
}

/// A character spawned standing on the ground is grounded from the next `PreUpdate`, before
/// any physics step has run (at a fixed rate the first step may come frames later); one
/// spawned in the air is not.
#[test]
fn is_grounded_before_its_first_step() {
    let mut app = app();
    let floor = ground(&mut app);
    let standing = character(&mut app, Vec3::ZERO, Vec3::ZERO);
    let flying = character(&mut app, Vec3::new(3.0, 2.0, 0.0), Vec3::ZERO);
    let before = steps(&app);
    app.world_mut().run_schedule(PreUpdate);
    assert_eq!(steps(&app), before, "no physics step ran");
    let standing = state(&app, standing);
    assert!(standing.grounded, "standing character not grounded");
    assert_eq!(standing.ground_entity, Some(floor));
    assert!((standing.ground_normal - Vec3::Y).length() < NORMAL_EPS);
    assert!(!state(&app, flying).grounded);
}

#[test]
fn reports_ground_and_its_normal_on_a_30_degree_ramp() {
    let mut app = app();
    ground(&mut app);
    let x0 = 0.0;
    let (wedge, _) = ramp(&mut app, x0, 4.0, 30.0, 0.0);
    // Dropped 0.3 m above the face at x = 2.
    let x = 2.0;
    let y = foot_on_slope(x, x0, 30.0) + 0.3;
    let player = character(&mut app, Vec3::new(x, y - SKIN, 0.0), Vec3::ZERO);
    step(&mut app, 32);
    let s = state(&app, player);
    assert!(s.grounded, "not grounded: {s:?}");
    assert_eq!(s.ground_entity, Some(wedge));
    let normal = slope_normal(30.0);
    assert!(
        (s.ground_normal - normal).length() < NORMAL_EPS,
        "ground normal {} against {normal}",
        s.ground_normal
    );
    // It stands: 30° is walkable, so it does not slide down.
    let before = foot(&app, player);
    step(&mut app, 32);
    assert!((foot(&app, player) - before).length() < 1e-5);
}

#[test]
fn stays_grounded_walking_down_a_30_degree_ramp() {
    let mut app = app();
    ground(&mut app);
    let (x0, run) = (0.0, 3.0);
    let (_, height) = ramp(&mut app, x0, run, 30.0, 3.0);
    // Start on the platform, walk down the ramp at 3 m/s onto the floor.
    let player = character(&mut app, Vec3::new(4.5, height, 0.0), Vec3::NEG_X * 3.0);
    for k in 0..112 {
        app.update();
        let s = state(&app, player);
        assert!(
            s.grounded,
            "step {k}: left the ground at {}",
            foot(&app, player)
        );
        let f = foot(&app, player);
        let contact_x = f.x + RADIUS * 0.5;
        if contact_x > x0 + 0.1 && contact_x < x0 + run - 0.1 {
            let expected = foot_on_slope(f.x, x0, 30.0);
            assert!((f.y - expected).abs() < REST_EPS, "step {k}: foot {f}");
        }
    }
    assert!(foot(&app, player).x < -0.5, "did not reach the floor");
}

#[test]
fn pushes_a_dynamic_box_it_walks_into() {
    let mut app = app();
    ground(&mut app);
    // A 1 m cube (1000 kg) whose near face is at x = 1, left to fall asleep.
    let crate_box = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(1.5, 0.5, 0.0),
        ),
    );
    step(&mut app, 48);
    assert!(is_sleeping(&app, crate_box), "the box did not fall asleep");
    let speed = 1.5;
    let start = Vec3::new(-1.0, 0.0, 0.0);
    let player = character(&mut app, start, Vec3::X * speed);
    // The gap between the capsule's front and the box's near face.
    let gap = |app: &App| (position(app, crate_box).x - 0.5) - (foot(app, player).x + RADIUS);
    let mut closest = f32::MAX;
    for _ in 0..128 {
        app.update();
        closest = closest.min(gap(&app));
    }
    // The box is woken in the step the character reaches it, so the contact solver keeps the
    // two apart within its tolerance (slop) throughout; a box left asleep for that step would
    // be entered by up to a step's walk, v dt = 2.3 cm.
    assert!(
        closest > -slop(),
        "the capsule entered the box by {}",
        -closest
    );
    // The character's walk has infinite mass: it kept its speed for all 2 s...
    let f = foot(&app, player);
    assert!(
        (f.x - (start.x + 3.0)).abs() < TRAVEL_EPS,
        "character at {}",
        f.x
    );
    // ...and the box moved ahead of it by what the character walked after reaching its face
    // (at x = 1 - RADIUS, after 1.7 m): 3 - 1.7 = 1.3 m, its near face against the capsule
    // within the solver's contact tolerance (slop) and the skin.
    let pushed = position(&app, crate_box).x - 1.5;
    assert!(
        (pushed - 1.3).abs() < slop() + SKIN,
        "box moved {pushed} m, expected 1.3"
    );
    let gap = gap(&app);
    assert!(
        gap.abs() < slop() + SKIN,
        "gap {gap} between capsule and box"
    );
}

#[test]
fn slides_down_a_60_degree_slope_like_a_frictionless_incline() {
    let mut app = app();
    ground(&mut app);
    let x0 = 0.0;
    ramp(&mut app, x0, 2.0, 60.0, 0.0);
    // Let go a skin from the face, its foot 1.9 m above the floor.
    let x = 0.9;
    let y0 = foot_on_slope(x, x0, 60.0);
    let player = character(&mut app, Vec3::new(x, y0 - SKIN, 0.0), Vec3::ZERO);
    // Too steep to stand on, it falls; the face takes the part of each step's fall into it,
    // so the foot drops by sin² 60° of the free fall's sum_{i=1..k} i g dt², staying a skin
    // from the face (the frictionless incline: g sin 60° along it, g sin² 60° of it down).
    let sin2 = 60f32.to_radians().sin().powi(2);
    for k in 1..=24 {
        app.update();
        let f = foot(&app, player);
        let t = k as f32;
        let drop = sin2 * g() * DT * DT * t * (t + 1.0) / 2.0;
        assert!(
            (y0 - f.y - drop).abs() < REST_EPS,
            "step {k}: dropped {}, expected {drop}",
            y0 - f.y
        );
        let on_face = foot_on_slope(f.x, x0, 60.0);
        assert!(
            (f.y - on_face).abs() < REST_EPS,
            "step {k}: foot {f}, face at {on_face}"
        );
        assert!(
            !state(&app, player).grounded,
            "step {k}: grounded on a 60° face"
        );
    }
}

#[test]
fn is_pushed_by_a_dynamic_body_moving_into_it() {
    let mut app = app();
    ground(&mut app);
    let player = character(&mut app, Vec3::ZERO, Vec3::ZERO);
    let controller = app
        .world()
        .get::<CharacterController>(player)
        .unwrap()
        .clone();
    let (m, a) = (controller.mass, controller.push_deceleration);
    // An 80 kg frictionless box sliding at 2 m/s towards the character.
    let (big_m, u) = (80.0, 2.0);
    let pusher = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Mass(big_m),
            Friction::new(0.0).with_combine_rule(CoefficientCombine::Min),
            Transform::from_xyz(-2.0, 0.5, 0.0),
            LinearVelocity(Vec3::X * u),
            SleepingDisabled,
        ),
    );
    let mut top_speed: f32 = 0.0;
    for _ in 0..128 {
        app.update();
        top_speed = top_speed.max(velocity(&app, player).x);
    }
    // Perfectly inelastic along the normal: the shared speed M u / (M + m).
    let shared = big_m * u / (big_m + m);
    assert!(
        (top_speed - shared).abs() < 1e-3,
        "top speed {top_speed}, expected {shared}"
    );
    // Then the pair slows as one under the character's braking force m a: deceleration
    // m a / (M + m), distance V² / (2 a_pair) + V dt / 2 (steps of V, V - a_pair dt, ...).
    // The share is taken in the step the box reaches the character, so the character may
    // start up to one step (V dt) before the touch; and the contact leaves a gap of up to
    // slop + skin.
    let a_pair = m * a / (big_m + m);
    let expected = shared * shared / (2.0 * a_pair) + shared * DT / 2.0;
    let moved = foot(&app, player).x;
    let slack = slop() + SKIN;
    assert!(
        moved > expected - slack && moved < expected + shared * DT + slack,
        "pushed {moved} m, expected {expected} to {}",
        expected + shared * DT
    );
    assert!(velocity(&app, pusher).x.abs() < 1e-2, "pusher still moving");
}

/// How many warnings name `entity` as a whole token.
fn names(warnings: &[String], entity: Entity) -> usize {
    let name = format!("{entity}");
    warnings
        .iter()
        .filter(|w| {
            w.split(|c: char| !c.is_ascii_alphanumeric())
                .any(|token| token == name)
        })
        .count()
}

/// A dynamic ball far from everything, falling freely: the rest of the world.
fn witness(app: &mut App) -> Entity {
    spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_xyz(50.0, 50.0, 0.0),
        ),
    )
}

/// 0.5 s (32 steps) of free fall from rest moves a body 1.2 m; it has fallen at least 1 m.
fn fell(app: &App, witness: Entity) -> bool {
    position(app, witness).y < 49.0
}

#[test]
fn nan_desired_velocity_warns_once_and_stays_put() {
    let ((player, start, end, v, fell, finite, walked), warnings) = capture_warnings(|| {
        let mut app = app();
        ground(&mut app);
        let player = character(&mut app, Vec3::ZERO, Vec3::new(f32::NAN, 0.0, 1.0));
        let witness = witness(&mut app);
        step(&mut app, 1);
        let start = position(&app, player);
        step(&mut app, 32);
        let end = position(&app, player);
        let v = velocity(&app, player);
        let (fell, finite) = (fell(&app, witness), all_bodies_finite(&mut app));
        // Once the input is good again the character walks on: 0.5 s at 1 m/s.
        set_velocity(&mut app, player, Vec3::X);
        step(&mut app, 32);
        let walked = position(&app, player).x - end.x;
        (player, start, end, v, fell, finite, walked)
    });
    assert_eq!(names(&warnings, player), 1, "warnings: {warnings:?}");
    assert_eq!(start, end, "the character moved");
    assert_eq!(v, Vec3::ZERO);
    assert!(finite, "a body went non-finite");
    assert!(fell, "the rest of the world stopped");
    assert!((walked - 0.5).abs() < TRAVEL_EPS, "walked {walked} m");
}

#[test]
fn bad_settings_warn_once_each_and_stay_put() {
    let nan_skin = CharacterController {
        config: MoveAndSlideConfig {
            skin_width: f32::NAN,
            ..default()
        },
        ..default()
    };
    let steep_limit = CharacterController {
        config: MoveAndSlideConfig {
            max_slope_angle: 2.0,
            ..default()
        },
        ..default()
    };
    let negative_mass = CharacterController {
        mass: -1.0,
        ..default()
    };
    let ((bad, moved, finite, fell, walked), warnings) = capture_warnings(|| {
        let mut app = app();
        ground(&mut app);
        let mut bad = Vec::new();
        for (k, controller) in [nan_skin, steep_limit, negative_mass]
            .into_iter()
            .enumerate()
        {
            let at = Vec3::new(2.0 * k as f32, HALF_HEIGHT + SKIN, 5.0);
            bad.push(spawn(
                &mut app,
                (
                    CharacterController {
                        desired_velocity: Vec3::X,
                        ..controller
                    },
                    capsule(),
                    Transform::from_translation(at),
                ),
            ));
        }
        let at = Vec3::new(8.0, HALF_HEIGHT + SKIN, 5.0);
        bad.push(spawn(
            &mut app,
            (
                CharacterController {
                    desired_velocity: Vec3::X,
                    ..default()
                },
                Transform::from_translation(at),
            ),
        ));
        // A good character beside them, whose state the game then poisons.
        let poisoned = character(&mut app, Vec3::new(10.0, 0.0, 5.0), Vec3::X);
        bad.push(poisoned);
        let good = character(&mut app, Vec3::new(0.0, 0.0, -5.0), Vec3::X);
        let witness = witness(&mut app);
        step(&mut app, 1);
        app.world_mut()
            .get_mut::<CharacterControllerState>(poisoned)
            .unwrap()
            .jump(f32::NAN);
        let starts: Vec<Vec3> = bad.iter().map(|&e| position(&app, e)).collect();
        let good_start = position(&app, good);
        step(&mut app, 32);
        let moved: Vec<f32> = bad
            .iter()
            .zip(starts)
            .map(|(&e, p)| (position(&app, e) - p).length())
            .collect();
        let walked = position(&app, good).x - good_start.x;
        let (finite, fell) = (all_bodies_finite(&mut app), fell(&app, witness));
        (bad, moved, finite, fell, walked)
    });
    for (e, moved) in bad.iter().zip(moved) {
        assert_eq!(names(&warnings, *e), 1, "{e}: warnings {warnings:?}");
        assert_eq!(moved, 0.0, "{e} moved");
    }
    assert!(finite, "a body went non-finite");
    assert!(fell, "the rest of the world stopped");
    assert!(
        (walked - 0.5).abs() < TRAVEL_EPS,
        "good character walked {walked} m"
    );
}

#[test]
fn jumps_and_lands_under_gravity() {
    let mut app = app();
    ground(&mut app);
    let player = character(&mut app, Vec3::ZERO, Vec3::ZERO);
    step(&mut app, 2);
    assert!(state(&app, player).grounded);
    let y0 = foot(&app, player).y;
    let v0 = 4.0;
    app.world_mut()
        .get_mut::<CharacterControllerState>(player)
        .unwrap()
        .jump(v0);
    // Semi-implicit Euler, as the controller integrates: the speed is updated first, then the
    // step moves by it, so after k steps the rise is sum_{i=1..k} (v0 - i g dt) dt. Checked
    // to the f32 round-off of the kinematic integration (~60 steps × 4 substeps × ulp(1)).
    let eps = 1e-4;
    let mut landed = None;
    let mut apex: f32 = 0.0;
    for k in 1..=64 {
        app.update();
        let y = foot(&app, player).y;
        let s = state(&app, player);
        let t = k as f32;
        let flight = y0 + t * v0 * DT - g() * DT * DT * t * (t + 1.0) / 2.0;
        apex = apex.max(y - y0);
        if flight > 0.0 {
            // Above the floor (y = 0): in the air.
            assert!(
                (y - flight).abs() < eps,
                "step {k}: foot {y}, flight {flight}"
            );
            assert!(!s.grounded, "step {k}: grounded in the air");
        } else {
            // The step that would pass the floor lands a skin above it instead.
            assert!(
                (y - SKIN).abs() < REST_EPS,
                "step {k}: foot {y} after landing"
            );
            assert!(s.grounded && s.vertical_speed == 0.0, "step {k}: {s:?}");
            landed.get_or_insert(k);
        }
    }
    // The apex of the continuous flight is v0² / 2g; the discrete one lies below it by at
    // most v0 dt / 2 (the sum's g dt² k / 2 term at k = v0 / (g dt)).
    let top = v0 * v0 / (2.0 * g());
    assert!(
        apex <= top && apex > top - v0 * DT / 2.0,
        "apex {apex}, continuous {top}"
    );
    // The discrete flight reaches the floor at the first k with k + 1 >= 2 v0 / (g dt): the
    // 52nd step (the continuous flight takes 2 v0 / g = 0.815 s, 52.2 steps).
    assert_eq!(landed, Some((2.0 * v0 / (g() * DT) - 1.0).ceil() as usize));
}
