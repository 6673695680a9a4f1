//! A kinematic character walks an obstacle course: a 0.2 m step (climbed), a 30° ramp up to a
//! platform (climbed, then it walks off the far edge and falls), a 0.5 m step (too high: it
//! stops), a 60° ramp (too steep: it stops), and walls it meets at 45° (it slides along them).
//!
//! The game's side is a script of headings: the character is told which way to walk and the
//! controller does the rest. The example prints the path every quarter second (position, foot
//! height, grounded, ground normal) and a line for each event (a step climbed, leaving or
//! landing on the ground, a new obstacle in the way), then a summary with the heights reached,
//! the distance slid along the wall, and how long the run took.
//!
//! Headless; run it with:
//!
//! ```text
//! cargo run --example character
//! ```

// Examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`); the rule
// against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

use std::time::Instant;

use bevy::prelude::*;
use impetus3d::prelude::*;

/// Physics step, s.
const DT: f64 = 1.0 / 64.0;
/// Walking speed, m/s.
const SPEED: f32 = 2.0;
/// Capsule radius and cylinder length: 1.6 m tall, centre 0.8 m above the foot.
const RADIUS: f32 = 0.3;
const HALF_HEIGHT: f32 = 0.8;

/// The script: (until t, heading, what the character is trying to do).
const SCRIPT: [(f32, [f32; 3], &str); 3] = [
    (
        7.0,
        [1.0, 0.0, 0.0],
        "+x over the 0.2 m step, up the 30° ramp, to the 0.5 m step",
    ),
    (9.0, [0.0, 0.0, 1.0], "+z into the 60° ramp"),
    (
        17.0,
        [1.0, 0.0, -1.0],
        "+x-z along the 0.5 m step, then into the wall at 45°",
    ),
];
/// The wall's face is the plane z = WALL_Z.
const WALL_Z: f32 = -3.5;
/// The 0.5 m step's near face is the plane x = STEP_X; the 60° ramp's foot is the line
/// z = RAMP_Z.
const STEP_X: f32 = 12.0;
const RAMP_Z: f32 = 2.5;
/// The controller's default skin width.
const SKIN: f32 = 0.01;

fn main() {
    let mut app = impetus3d::headless_app(DT);
    build_course(&mut app);
    let player = app
        .world_mut()
        .spawn((
            Name::new("player"),
            CharacterController::default(),
            Collider::capsule(RADIUS, 1.0),
            Transform::from_xyz(0.0, HALF_HEIGHT + SKIN, 0.0),
        ))
        .id();

    println!("   t/s    x       z      foot y  grounded  ground normal          speed m/s");
    let mut log = Log {
        last: Vec3::new(0.0, HALF_HEIGHT + SKIN, 0.0),
        ..default()
    };
    let started = Instant::now();
    let steps = (SCRIPT[SCRIPT.len() - 1].0 as f64 / DT).round() as u32;
    for k in 0..steps {
        let t = k as f32 * DT as f32;
        let leg = SCRIPT
            .iter()
            .position(|s| t < s.0)
            .unwrap_or(SCRIPT.len() - 1);
        if log.legs.len() <= leg {
            log.legs.push(Leg {
                highest_foot: f32::MIN,
                end: Vec3::ZERO,
            });
        }
        let heading = Vec3::from_array(SCRIPT[leg].1).normalize();
        app.world_mut()
            .get_mut::<CharacterController>(player)
            .expect("player")
            .desired_velocity = heading * SPEED;
        app.update();
        log.record(&app, player, t + DT as f32, k % 16 == 15);
    }
    let elapsed = started.elapsed();
    log.summary(steps, elapsed);
}

/// The static course, every piece named so the log can say what the character met.
fn build_course(app: &mut App) {
    let mut fixed = |name: &str, collider: Collider, at: Vec3| {
        app.world_mut().spawn((
            Name::new(name.to_string()),
            RigidBody::Static,
            collider,
            Transform::from_translation(at),
        ));
    };
    fixed(
        "floor",
        Collider::cuboid(80.0, 1.0, 80.0),
        Vec3::new(0.0, -0.5, 0.0),
    );
    fixed(
        "0.2 m step",
        Collider::cuboid(2.0, 0.2, 3.0),
        Vec3::new(3.0, 0.1, 0.0),
    );
    // 30° ramp from x = 6 to 8, up to a platform 2 m long.
    let h30 = 2.0 * 30f32.to_radians().tan();
    fixed(
        "30° ramp",
        wedge(2.0, h30, 3.0, Vec3::X),
        Vec3::new(6.0, 0.0, 0.0),
    );
    fixed(
        "platform",
        Collider::cuboid(2.0, h30, 3.0),
        Vec3::new(9.0, 0.5 * h30, 0.0),
    );
    fixed(
        "0.5 m step",
        Collider::cuboid(2.0, 0.5, 3.0),
        Vec3::new(STEP_X + 1.0, 0.25, 0.0),
    );
    // 60° ramp rising along +z from z = 2.5, across x = 10 to 13.
    let h60 = 1.0 * 60f32.to_radians().tan();
    fixed(
        "60° ramp",
        wedge(1.0, h60, 3.0, Vec3::Z),
        Vec3::new(11.5, 0.0, RAMP_Z),
    );
    fixed(
        "wall",
        Collider::cuboid(30.0, 3.0, 0.4),
        Vec3::new(25.0, 1.5, WALL_Z - 0.2),
    );
}

/// A wedge rising along `along` (+X or +Z) over `run` m to `height`, `width` m wide, its low
/// edge centred on the local origin.
fn wedge(run: f32, height: f32, width: f32, along: Vec3) -> Collider {
    let side = Vec3::Y.cross(along);
    let points = [-0.5 * width, 0.5 * width]
        .into_iter()
        .flat_map(|s| {
            [
                side * s,
                side * s + along * run,
                side * s + along * run + Vec3::Y * height,
            ]
        })
        .collect();
    Collider::convex_hull(points).expect("a wedge has volume")
}

/// One leg of the script: the highest the foot got, and where it ended.
struct Leg {
    highest_foot: f32,
    end: Vec3,
}

/// What happened so far.
#[derive(Default)]
struct Log {
    grounded: Option<bool>,
    /// The obstacles in the way in the last step.
    blocked_by: Vec<String>,
    legs: Vec<Leg>,
    highest_foot: f32,
    climbed: f32,
    wall_contact: Option<(f32, Vec3)>,
    last: Vec3,
    last_t: f32,
}

impl Log {
    fn record(&mut self, app: &App, player: Entity, t: f32, sample: bool) {
        let world = app.world();
        let p = world.get::<Position>(player).expect("player").0;
        let s = world
            .get::<CharacterControllerState>(player)
            .expect("player")
            .clone();
        let foot = p.y - HALF_HEIGHT;
        self.highest_foot = self.highest_foot.max(foot);
        if let Some(leg) = self.legs.last_mut() {
            leg.highest_foot = leg.highest_foot.max(foot);
            leg.end = p;
        }
        let name = |e: Entity| {
            world
                .get::<Name>(e)
                .map_or_else(|| format!("{e}"), |n| n.as_str().to_string())
        };
        if s.step_climbed > 0.0 {
            self.climbed += s.step_climbed;
            println!(
                "{t:6.2}  stepped up {:.3} m at x = {:.2} (foot now {foot:.3} m)",
                s.step_climbed, p.x
            );
        }
        if self.grounded != Some(s.grounded) {
            match s.ground_entity {
                Some(ground) if s.grounded => println!(
                    "{t:6.2}  on the ground: {} (foot {foot:.3} m, normal {:.3})",
                    name(ground),
                    s.ground_normal
                ),
                _ => println!(
                    "{t:6.2}  left the ground at x = {:.2}, foot {foot:.3} m",
                    p.x
                ),
            }
            self.grounded = Some(s.grounded);
        }
        let mut now: Vec<String> = Vec::new();
        for hit in &s.hits {
            let what = name(hit.entity);
            if what == "floor" || now.contains(&what) {
                continue;
            }
            if !self.blocked_by.contains(&what) {
                println!(
                    "{t:6.2}  in the way: {what}, contact normal {:.3}",
                    hit.normal
                );
                if what == "wall" && self.wall_contact.is_none() {
                    self.wall_contact = Some((t, p));
                }
            }
            now.push(what);
        }
        self.blocked_by = now;
        if sample {
            let speed = (p - self.last).length() / (t - self.last_t);
            println!(
                "{t:6.2} {:6.2} {:7.2} {foot:8.3}  {:>8}  {:<22} {speed:6.2}",
                p.x,
                p.z,
                s.grounded,
                format!("{:.3}", s.ground_normal),
            );
            self.last = p;
            self.last_t = t;
        }
    }

    fn summary(&self, steps: u32, elapsed: std::time::Duration) {
        println!();
        for (leg, (_, _, what)) in self.legs.iter().zip(SCRIPT) {
            println!(
                "{what}: ended at x {:.3}, z {:.3}, foot {:.3} m; highest foot {:.3} m",
                leg.end.x,
                leg.end.z,
                leg.end.y - HALF_HEIGHT,
                leg.highest_foot
            );
        }
        if let [first, second, ..] = &self.legs[..] {
            let (sin, cos) = 60f32.to_radians().sin_cos();
            println!(
                "stopped {:.4} m from the 0.5 m step's face (radius + skin = {:.4} m) and {:.4} m \
                 before the 60° ramp's foot (a skin from its face: {:.4} m)",
                STEP_X - first.end.x,
                RADIUS + SKIN,
                RAMP_Z - second.end.z,
                (RADIUS + SKIN) * (1.0 - cos) / sin
            );
        }
        if let (Some((t0, p0)), Some(last)) = (self.wall_contact, self.legs.last()) {
            let along = last.end.x - p0.x;
            let t = SCRIPT[SCRIPT.len() - 1].0 - t0;
            let expected = SPEED * 45f32.to_radians().cos() * t;
            println!(
                "slid {along:.4} m along the wall in {t:.3} s (v cos 45° t = {expected:.4} m), \
                 {:.4} m from its face",
                (last.end.z - RADIUS) - WALL_Z
            );
        }
        println!(
            "{:.3} m gained by step-ups (the capsule rolls over the rest of an edge); \
             highest foot {:.3} m (platform top {:.3} m)",
            self.climbed,
            self.highest_foot,
            2.0 * 30f32.to_radians().tan()
        );
        println!(
            "{steps} steps in {:.1} ms: {:.1} µs per step",
            elapsed.as_secs_f64() * 1e3,
            elapsed.as_secs_f64() * 1e6 / steps as f64
        );
    }
}
