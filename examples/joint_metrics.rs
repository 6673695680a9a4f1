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
//! Sleeping is off, as in the comparison. With arguments `SCENE N` it only builds that scene,
//! steps it 10 times, then N more times, and prints nothing but the time: a fixed amount of
//! work for an instruction-count profiler. Scenes: `grid`, `chain` (at rest), `bodies` (the
//! grid's balls without joints or gravity: the cost of the bodies alone), `chains` and `user`
//! (100 chains of 10 balls, as in the `joints_1000` benchmark, joined by spherical joints or by
//! a user XPBD constraint).
//!
//! ```text
//! cargo run --release --example joint_metrics
//! valgrind --tool=callgrind target/release/examples/joint_metrics grid 20
//! ```

use std::time::Instant;

use bevy::ecs::entity::{EntityMapper, MapEntities};
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
                        .with_local_anchor1(anchor)
                        .with_local_anchor2(-anchor),
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
                .with_local_anchor1(a1)
                .with_local_anchor2(a2),
        );
        joints.push((previous, link, a1, a2));
        previous = link;
    }
    (app, joints)
}

/// A user constraint joining two anchors, written with the helpers of [`PositionConstraint`]
/// (the custom-constraint path, `solve_constraint::<UserPoint, 2>`).
#[derive(Component)]
struct UserPoint {
    bodies: [Entity; 2],
    anchors: [Vec3; 2],
    lagrange: f32,
}

impl PositionConstraint for UserPoint {}

impl XpbdConstraint<2> for UserPoint {
    fn entities(&self) -> [Entity; 2] {
        self.bodies
    }

    fn clear_lagrange_multipliers(&mut self) {
        self.lagrange = 0.0;
    }

    fn solve(&mut self, [b1, b2]: [&mut RigidBodyQueryItem; 2], dt: f32) {
        let r1 = b1.rotation * (self.anchors[0] - b1.center_of_mass());
        let r2 = b2.rotation * (self.anchors[1] - b2.center_of_mass());
        let delta = (b1.current_center_of_mass() + r1) - (b2.current_center_of_mass() + r2);
        let Some((n, c)) = delta.try_normalize().map(|n| (n, delta.length())) else {
            return;
        };
        let w1 = self.compute_generalized_inverse_mass(b1, r1, n);
        let w2 = self.compute_generalized_inverse_mass(b2, r2, n);
        let dl = self.compute_lagrange_update(self.lagrange, c, &[w1, w2], 0.0, dt);
        self.lagrange += dl;
        self.apply_positional_correction(b1, b2, dl, n, r1, r2);
    }
}

impl MapEntities for UserPoint {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.bodies = self.bodies.map(|e| mapper.get_mapped(e));
    }
}

/// 100 chains of 10 balls hanging from static anchors (the `joints_1000` bench scene), joined
/// by spherical joints or, with `user`, by [`UserPoint`] constraints.
fn chains(user: bool) -> (App, Vec<Spec>) {
    let mut app = impetus3d::headless_app(DT);
    if user {
        app.add_systems(
            SubstepSchedule,
            solve_constraint::<UserPoint, 2>.in_set(SubstepSolverSet::SolveUserConstraints),
        );
    }
    let mut joints = Vec::new();
    let (a1, a2) = (Vec3::new(0.0, -0.5, 0.0), Vec3::new(0.0, 0.5, 0.0));
    for chain in 0..100 {
        let (x, z) = ((chain % 10) as f32 * 1.5, (chain / 10) as f32 * 1.5);
        let world = app.world_mut();
        let mut previous = world
            .spawn((RigidBody::Static, Transform::from_xyz(x, 0.0, z)))
            .id();
        for i in 0..10 {
            let mut link = world.spawn((
                RigidBody::Dynamic,
                Collider::sphere(0.25),
                CollisionLayers::NONE,
                SleepingDisabled,
                Transform::from_xyz(x, -(i as f32 + 1.0), z),
            ));
            if i == 9 {
                link.insert(LinearVelocity(Vec3::new(5.0, 0.0, 0.0)));
            }
            let link = link.id();
            if user {
                world.spawn(UserPoint {
                    bodies: [previous, link],
                    anchors: [a1, a2],
                    lagrange: 0.0,
                });
            } else {
                world.spawn(
                    SphericalJoint::new(previous, link)
                        .with_local_anchor1(a1)
                        .with_local_anchor2(a2),
                );
            }
            joints.push((previous, link, a1, a2));
            previous = link;
        }
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
            "chains" => chains(false),
            "user" => chains(true),
            other => panic!("unknown scene {other}: grid or chain"),
        };
        run(&mut app, 10);
        println!("{scene}: {:.3} ms/step", run(&mut app, steps));
        return;
    }

    if std::env::var_os("GRID_TRACE").is_some() {
        let (mut app, joints) = grid(40);
        let mut worst = Vec::new();
        for k in 0..400 {
            app.update();
            if k >= 199 {
                worst.push(joint_errors(&app, &joints).0);
            }
        }
        let mean = worst.iter().sum::<f32>() / worst.len() as f32;
        let max = worst.iter().copied().fold(0.0, f32::max);
        println!(
            "worst joint error over steps 200..400: mean {:.2} cm, max {:.2} cm",
            100.0 * mean,
            100.0 * max
        );
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
