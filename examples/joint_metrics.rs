//! The two joint scenes of the comparison with other engines (`compare/`), headless, with
//! their quality metrics and time per step:
//!
//! - the 40 × 40 joint grid (1600 balls of radius 0.4 m, 1 m apart, in no collision layer,
//!   joined to their right and lower neighbours by 3120 spherical joints with anchors ±0.5 m,
//!   the two top corners static), 300 steps of 1/60 s: the largest and mean distance between
//!   the two world anchor points of a joint;
//! - the 100-link chain (balls of radius 0.25 m, centres 1 m apart below a static anchor,
//!   spherical joints with anchors ±0.5 m) hanging at rest for 600 steps of 1/60 s: the
//!   stretch, (distance from the anchor point to the bottom of the last link) / 100 m − 1.
//!
//! Sleeping is off, as in the comparison. With an argument, `grid N` or `chain N`, it only
//! builds that scene, steps it 10 times, then N more times, and prints nothing but the time:
//! a fixed amount of work for an instruction-count profiler.
//!
//! ```text
//! cargo run --release --example joint_metrics
//! valgrind --tool=callgrind target/release/examples/joint_metrics grid 20
//! ```

use std::time::Instant;

use bevy::prelude::*;
use impetus3d::prelude::*;

const DT: f64 = 1.0 / 60.0;

/// A joint's two bodies and local anchors.
type Spec = (Entity, Entity, Vec3, Vec3);

fn grid(n: usize) -> (App, Vec<Spec>) {
    let mut app = impetus3d::headless_app(DT);
    let mut balls = Vec::with_capacity(n * n);
    for row in 0..n {
        for column in 0..n {
            let corner = row == 0 && (column == 0 || column == n - 1);
            let mut ball = app.world_mut().spawn((
                Collider::sphere(0.4),
                CollisionLayers::NONE,
                Transform::from_xyz(column as f32, -(row as f32), 0.0),
            ));
            if corner {
                ball.insert(RigidBody::Static);
            } else {
                ball.insert((RigidBody::Dynamic, SleepingDisabled));
            }
            balls.push(ball.id());
        }
    }
    let mut joints = Vec::new();
    for row in 0..n {
        for column in 0..n {
            let here = balls[row * n + column];
            let mut join = |other: Entity, anchor: Vec3| {
                app.world_mut().spawn(
                    SphericalJoint::new(here, other)
                        .with_local_anchor_1(anchor)
                        .with_local_anchor_2(-anchor),
                );
                joints.push((here, other, anchor, -anchor));
            };
            if column + 1 < n {
                join(balls[row * n + column + 1], Vec3::new(0.5, 0.0, 0.0));
            }
            if row + 1 < n {
                join(balls[(row + 1) * n + column], Vec3::new(0.0, -0.5, 0.0));
            }
        }
    }
    (app, joints)
}

fn chain(links: usize) -> (App, Vec<Spec>) {
    let mut app = impetus3d::headless_app(DT);
    let mut previous = app
        .world_mut()
        .spawn((RigidBody::Static, Transform::default()))
        .id();
    let mut joints = Vec::new();
    let (a1, a2) = (Vec3::new(0.0, -0.5, 0.0), Vec3::new(0.0, 0.5, 0.0));
    for i in 0..links {
        let link = app
            .world_mut()
            .spawn((
                RigidBody::Dynamic,
                Collider::sphere(0.25),
                SleepingDisabled,
                Transform::from_xyz(0.0, -(i as f32 + 1.0), 0.0),
            ))
            .id();
        app.world_mut().spawn(
            SphericalJoint::new(previous, link)
                .with_local_anchor_1(a1)
                .with_local_anchor_2(a2),
        );
        joints.push((previous, link, a1, a2));
        previous = link;
    }
    (app, joints)
}

fn world_point(app: &App, body: Entity, local: Vec3) -> Vec3 {
    let world = app.world();
    world.get::<Position>(body).unwrap().0 + world.get::<Rotation>(body).unwrap().0 * local
}

fn joint_errors(app: &App, joints: &[Spec]) -> (f32, f32) {
    let errors = joints
        .iter()
        .map(|&(a, b, la, lb)| (world_point(app, a, la) - world_point(app, b, lb)).length());
    let (max, sum) = errors.fold((0.0f32, 0.0f32), |(m, s), e| (m.max(e), s + e));
    (max, sum / joints.len() as f32)
}

/// Steps `steps` times; returns the mean wall-clock time per step, ms.
fn run(app: &mut App, steps: usize) -> f64 {
    let start = Instant::now();
    for _ in 0..steps {
        app.update();
    }
    start.elapsed().as_secs_f64() * 1e3 / steps as f64
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [scene, steps] = args.as_slice() {
        let steps: usize = steps.parse().expect("a step count");
        let (mut app, _) = match scene.as_str() {
            "grid" => grid(40),
            "bodies" => {
                let (mut app, joints) = grid(40);
                let world = app.world_mut();
                let mut q = world.query_filtered::<Entity, With<SphericalJoint>>();
                let js: Vec<Entity> = q.iter(world).collect();
                for j in js {
                    world.despawn(j);
                }
                world.insert_resource(Gravity(Vec3::ZERO));
                (app, joints)
            }
            "chain" => chain(100),
            other => panic!("unknown scene {other}: grid or chain"),
        };
        run(&mut app, 10);
        println!("{scene}: {:.3} ms/step", run(&mut app, steps));
        return;
    }

    let (mut app, joints) = grid(40);
    let ms = run(&mut app, 300);
    let (max, mean) = joint_errors(&app, &joints);
    println!(
        "joint grid 40x40, 300 steps: worst joint error {:.2} cm, mean {:.3} cm; {ms:.3} ms/step",
        100.0 * max,
        100.0 * mean
    );

    let (mut app, joints) = chain(100);
    let ms = run(&mut app, 600);
    let top = world_point(&app, joints[0].0, joints[0].2);
    let last = joints.last().unwrap();
    let bottom = world_point(&app, last.1, -last.3);
    let stretch = (top - bottom).length() / 100.0 - 1.0;
    let (gap, _) = joint_errors(&app, &joints);
    println!(
        "chain of 100 at rest, 600 steps: stretch {:.4} %, largest joint gap {:.2} mm; {ms:.3} ms/step",
        100.0 * stretch,
        1000.0 * gap
    );
}
