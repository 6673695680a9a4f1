//! Scenes shared by the benchmarks (`step.rs`) and the profiling harness (`profile.rs`), and
//! the quality figures the harness prints. Every dynamic body has [`SleepingDisabled`]: the
//! point is the work of an awake scene.

#![allow(dead_code)]

use bevy::prelude::*;
use impetus3d::prelude::*;

/// The ground of the small scenes: 200 × 1 × 200 m.
pub const GROUND: Vec3 = Vec3::new(200.0, 1.0, 200.0);

/// The ground of the large pyramid (as in Box3D's large-pyramid benchmark): 400 × 2 × 400 m.
pub const LARGE_GROUND: Vec3 = Vec3::new(400.0, 2.0, 400.0);

/// A headless app stepping `dt` per update with a static `ground` box (full size) whose top
/// face is at y = 0.
pub fn app_with_ground(dt: f64, ground: Vec3) -> App {
    let mut app = impetus3d::headless_app(dt);
    app.world_mut().spawn((
        RigidBody::Static,
        Collider::cuboid(ground.x, ground.y, ground.z),
        Transform::from_xyz(0.0, -0.5 * ground.y, 0.0),
    ));
    app
}

/// A unit cube that never sleeps.
pub fn cube(position: Vec3) -> impl Bundle {
    (
        RigidBody::Dynamic,
        Collider::cuboid(1.0, 1.0, 1.0),
        SleepingDisabled,
        Transform::from_translation(position),
    )
}

/// A one-layer pyramid with `base` cubes in the bottom row, symmetric about x = 0, cubes
/// exactly touching, on a `ground` box. Returns the app and the top cube with its spawn point.
pub fn pyramid(dt: f64, base: usize, ground: Vec3) -> (App, Entity, Vec3) {
    let mut app = app_with_ground(dt, ground);
    let mut top = (Entity::PLACEHOLDER, Vec3::ZERO);
    for row in 0..base {
        let count = base - row;
        for i in 0..count {
            let position = Vec3::new(i as f32 - 0.5 * (count - 1) as f32, 0.5 + row as f32, 0.0);
            top = (app.world_mut().spawn(cube(position)).id(), position);
        }
    }
    (app, top.0, top.1)
}

/// An `n × n × n` grid of cubes 1.1 m apart, its bottom layer 3.5 m above the ground.
pub fn pile(dt: f64, n: usize) -> App {
    let mut app = app_with_ground(dt, GROUND);
    let offset = 0.5 * (n - 1) as f32 * 1.1;
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                let position = Vec3::new(
                    i as f32 * 1.1 - offset,
                    3.5 + j as f32 * 1.1,
                    k as f32 * 1.1 - offset,
                );
                app.world_mut().spawn(cube(position));
            }
        }
    }
    app
}

/// 10,000 balls of radius 0.5 m in a 25 × 16 × 25 grid 3 m apart (their boxes never touch),
/// the lowest layer at y = 10 m, no ground: gravity only.
pub fn free_balls(dt: f64) -> App {
    let mut app = impetus3d::headless_app(dt);
    let (nx, ny, nz) = (25, 16, 25);
    let spacing = 3.0;
    let centre = 0.5 * (Vec3::new(nx as f32, ny as f32, nz as f32) - Vec3::ONE) * spacing;
    for i in 0..nx {
        for j in 0..ny {
            for k in 0..nz {
                let position = Vec3::new(
                    i as f32 * spacing - centre.x,
                    10.0 + j as f32 * spacing,
                    k as f32 * spacing - centre.z,
                );
                app.world_mut().spawn((
                    RigidBody::Dynamic,
                    Collider::sphere(0.5),
                    SleepingDisabled,
                    Transform::from_translation(position),
                ));
            }
        }
    }
    app
}

/// Runs `steps` physics steps.
pub fn step(app: &mut App, steps: usize) {
    for _ in 0..steps {
        app.update();
    }
}

/// Deepest cube–cube penetration (exact separating-axis depth of two unit cubes) and deepest
/// cube corner below the ground's top face (y = 0), over every dynamic cube of the world, m.
pub fn cube_penetrations(app: &mut App) -> (f32, f32) {
    let mut query = app
        .world_mut()
        .query_filtered::<(&Position, &Rotation), With<SleepingDisabled>>();
    let mut poses: Vec<(Vec3, Quat)> = query.iter(app.world()).map(|(p, r)| (p.0, r.0)).collect();
    let mut ground: f32 = 0.0;
    for &(p, q) in &poses {
        for corner in 0..8 {
            let local = Vec3::new(
                if corner & 1 == 0 { -0.5 } else { 0.5 },
                if corner & 2 == 0 { -0.5 } else { 0.5 },
                if corner & 4 == 0 { -0.5 } else { 0.5 },
            );
            ground = ground.max(-(p + q * local).y);
        }
    }
    // Sweep along x: two unit cubes can only touch if their centres are under √3 m apart.
    poses.sort_by(|a, b| a.0.x.total_cmp(&b.0.x));
    let mut deepest: f32 = 0.0;
    for i in 0..poses.len() {
        let (p, q) = poses[i];
        for &(p2, q2) in &poses[i + 1..] {
            if p2.x - p.x >= 1.75 {
                break;
            }
            if p.distance_squared(p2) < 3.0 {
                deepest = deepest.max(box_penetration(p, q, p2, q2));
            }
        }
    }
    (deepest, ground)
}

/// Penetration depth of two unit cubes (the smallest overlap over the 15 separating axes), or
/// a non-positive number when they are apart.
fn box_penetration(p1: Vec3, q1: Quat, p2: Vec3, q2: Quat) -> f32 {
    let a = [q1 * Vec3::X, q1 * Vec3::Y, q1 * Vec3::Z];
    let b = [q2 * Vec3::X, q2 * Vec3::Y, q2 * Vec3::Z];
    let d = p2 - p1;
    let mut depth = f32::INFINITY;
    let mut test = |axis: Vec3| {
        let len = axis.length();
        if len < 1e-6 {
            return;
        }
        let n = axis / len;
        let r1: f32 = a.iter().map(|u| 0.5 * u.dot(n).abs()).sum();
        let r2: f32 = b.iter().map(|u| 0.5 * u.dot(n).abs()).sum();
        depth = depth.min(r1 + r2 - d.dot(n).abs());
    };
    for &u in a.iter().chain(b.iter()) {
        test(u);
    }
    for &u in &a {
        for &v in &b {
            test(u.cross(v));
        }
    }
    depth
}

/// The `n × n` joint grid of the tests (`tests/joints_chain.rs`): balls of radius 0.4 m, 1 m
/// apart in the vertical x–y plane, in no collision layer, each joined to its right and lower
/// neighbours by spherical joints with anchors ±0.5 m, the two top corners static; steps of
/// `dt`.
pub fn joint_grid(dt: f64, n: usize) -> App {
    let mut app = impetus3d::headless_app(dt);
    let mut balls = Vec::with_capacity(n * n);
    for row in 0..n {
        for column in 0..n {
            let corner = row == 0 && (column == 0 || column == n - 1);
            let position = Vec3::new(column as f32, -(row as f32), 0.0);
            let mut ball = app.world_mut().spawn((
                Collider::sphere(0.4),
                CollisionLayers::NONE,
                Transform::from_translation(position),
            ));
            if corner {
                ball.insert(RigidBody::Static);
            } else {
                ball.insert((RigidBody::Dynamic, SleepingDisabled));
            }
            balls.push(ball.id());
        }
    }
    for row in 0..n {
        for column in 0..n {
            let here = balls[row * n + column];
            if column + 1 < n {
                app.world_mut().spawn(
                    SphericalJoint::new(here, balls[row * n + column + 1])
                        .with_local_anchor1(Vec3::new(0.5, 0.0, 0.0))
                        .with_local_anchor2(Vec3::new(-0.5, 0.0, 0.0)),
                );
            }
            if row + 1 < n {
                app.world_mut().spawn(
                    SphericalJoint::new(here, balls[(row + 1) * n + column])
                        .with_local_anchor1(Vec3::new(0.0, -0.5, 0.0))
                        .with_local_anchor2(Vec3::new(0.0, 0.5, 0.0)),
                );
            }
        }
    }
    app
}

/// The chain of the tests: `links` balls of radius 0.25 m, centres 1 m apart straight below a
/// static anchor, joined by spherical joints with anchors ±0.5 m; the last link is kicked
/// sideways so the chain keeps moving.
pub fn chain(dt: f64, links: usize) -> App {
    let mut app = impetus3d::headless_app(dt);
    let mut previous = app
        .world_mut()
        .spawn((RigidBody::Static, Transform::default()))
        .id();
    for i in 0..links {
        let mut link = app.world_mut().spawn((
            RigidBody::Dynamic,
            Collider::sphere(0.25),
            SleepingDisabled,
            Transform::from_xyz(0.0, -(i as f32 + 1.0), 0.0),
        ));
        if i == links - 1 {
            link.insert(LinearVelocity(Vec3::new(5.0, 0.0, 0.0)));
        }
        let link = link.id();
        app.world_mut().spawn(
            SphericalJoint::new(previous, link)
                .with_local_anchor1(Vec3::new(0.0, -0.5, 0.0))
                .with_local_anchor2(Vec3::new(0.0, 0.5, 0.0)),
        );
        previous = link;
    }
    app
}
