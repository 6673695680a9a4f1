mod common;
use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

#[test]
fn pendulum_scratch() {
    let mut app = app();
    let anchor = spawn(&mut app, (RigidBody::Static, Transform::default()));
    let th: f32 = 10f32.to_radians();
    let l = 1.0;
    let bob = spawn(&mut app, (RigidBody::Dynamic, Collider::sphere(0.05), Transform::from_xyz(l * th.sin(), -l * th.cos(), 0.0), SleepingDisabled));
    spawn(&mut app, DistanceJoint::new(anchor, bob).with_rest_length(l));
    let mut xs = vec![];
    for _ in 0..64 * 10 {
        step(&mut app, 1);
        xs.push(position(&app, bob).x);
    }
    let mut crossings = vec![];
    for i in 1..xs.len() {
        if xs[i - 1] < 0.0 && xs[i] >= 0.0 {
            let t = (i as f32 - 1.0 + (-xs[i - 1]) / (xs[i] - xs[i - 1])) * DT;
            crossings.push(t);
        }
    }
    let periods: Vec<f32> = crossings.windows(2).map(|w| w[1] - w[0]).collect();
    let t0 = 2.0 * std::f32::consts::PI * (l / 9.81f32).sqrt() * (1.0 + th * th / 16.0);
    println!("periods {:?} expected {t0}", periods);
    let p = position(&app, bob);
    println!("final len {}", p.length());
}

#[test]
fn chain_scratch() {
    let mut app = app();
    let anchor = spawn(&mut app, (RigidBody::Static, Transform::default()));
    let mut prev = anchor;
    let mut links = vec![];
    for i in 0..100 {
        let b = spawn(&mut app, (RigidBody::Dynamic, Collider::sphere(0.25), Transform::from_xyz(0.0, -(i as f32) - 1.0, 0.0), SleepingDisabled));
        let j = SphericalJoint::new(prev, b).with_local_anchor_1(if i == 0 { Vec3::ZERO } else { Vec3::new(0.0, -0.5, 0.0) }).with_local_anchor_2(Vec3::new(0.0, if i == 0 { 1.0 } else { 0.5 }, 0.0));
        spawn(&mut app, j);
        links.push(b);
        prev = b;
    }
    for s in 0..4000 {
        step(&mut app, 1);
        if s % 500 == 0 {
            let last = position(&app, *links.last().unwrap());
            println!("step {s} last {last:?} stretch {}", (-last.y - 100.0) / 100.0);
        }
    }
}

#[test]
fn grid_scratch() {
    #[allow(non_snake_case)] let LOCK = if std::env::var("LOCK").is_ok() { LockedAxes::ROTATION_LOCKED } else { LockedAxes::new() };
    let mut app = app_with_dt(1.0 / 60.0);
    let sub: u32 = std::env::var("SUB").ok().and_then(|v| v.parse().ok()).unwrap_or(4);
    app.insert_resource(SubstepCount(sub));
    if let Some(i) = std::env::var("ITERS").ok().and_then(|v| v.parse().ok()) { app.insert_resource(impetus3d::solver::xpbd::XpbdIterations(i)); }
    let n: usize = std::env::var("N").ok().and_then(|v| v.parse().ok()).unwrap_or(40);
    let mut ids = vec![vec![Entity::PLACEHOLDER; n]; n];
    for i in 0..n {
        for j in 0..n {
            let corner = i == 0 && (j == 0 || j == n - 1);
            let rb = if corner { RigidBody::Static } else { RigidBody::Dynamic };
            ids[i][j] = spawn(&mut app, (rb, Collider::sphere(0.4), CollisionLayers::new(1, 2), LOCK, Transform::from_xyz(j as f32, -(i as f32), 0.0), SleepingDisabled));
        }
    }
    let mut joints = vec![];
    for i in 0..n {
        for j in 0..n {
            if j + 1 < n {
                joints.push(spawn(&mut app, SphericalJoint::new(ids[i][j], ids[i][j + 1]).with_local_anchor_1(Vec3::X * 0.5).with_local_anchor_2(-Vec3::X * 0.5)));
            }
            if i + 1 < n {
                joints.push(spawn(&mut app, SphericalJoint::new(ids[i][j], ids[i + 1][j]).with_local_anchor_1(-Vec3::Y * 0.5).with_local_anchor_2(Vec3::Y * 0.5)));
            }
        }
    }
    let t = std::time::Instant::now();
    for s in 0..300 {
        step(&mut app, 1);
        if s < 10 || s % 50 == 49 {
            let world = app.world();
            let mut max_err: f32 = 0.0;
            let mut worst = Entity::PLACEHOLDER;
            for &j in &joints {
                let joint = world.get::<SphericalJoint>(j).unwrap();
                let b = joint.base();
                let p1 = world.get::<Position>(b.entity1).unwrap().0 + world.get::<Rotation>(b.entity1).unwrap().0 * b.local_anchor1;
                let p2 = world.get::<Position>(b.entity2).unwrap().0 + world.get::<Rotation>(b.entity2).unwrap().0 * b.local_anchor2;
                if (p1 - p2).length() > max_err { max_err = (p1 - p2).length(); worst = j; }
            }
            let b = world.get::<SphericalJoint>(worst).unwrap().base();
            println!("step {s} max anchor error {max_err} at {:?} {:?}", world.get::<Position>(b.entity1).unwrap().0, world.get::<Position>(b.entity2).unwrap().0);
        }
    }
    println!("time per step {:?}", t.elapsed() / 300);
}
