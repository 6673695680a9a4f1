mod common;
use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

#[test]
fn pendulum_trace() {
    let mut app = app();
    let anchor = spawn(&mut app, (RigidBody::Static, Transform::default()));
    let bob = spawn(&mut app, (RigidBody::Dynamic, Collider::sphere(0.05), Transform::from_xyz(0.0, -1.0, 0.0), SleepingDisabled));
    let j = spawn(&mut app, DistanceJoint::new(anchor, bob).with_rest_length(1.0));
    for _ in 0..12 {
        step(&mut app, 1);
        let f = app.world().get::<DistanceJoint>(j).unwrap().force();
        println!("{:?} v {:?} f {:?}", position(&app, bob), velocity(&app, bob), f);
    }
}

#[test]
fn chain_trace() {
    let mut app = app();
    let anchor = spawn(&mut app, (RigidBody::Static, Transform::default()));
    let mut prev = anchor;
    let mut joints = vec![];
    let n = 20;
    for i in 0..n {
        let b = spawn(&mut app, (RigidBody::Dynamic, Collider::sphere(0.25), Transform::from_xyz(0.0, -(i as f32) - 1.0, 0.0), SleepingDisabled));
        let j = SphericalJoint::new(prev, b).with_local_anchor_1(if i == 0 { Vec3::ZERO } else { Vec3::new(0.0, -0.5, 0.0) }).with_local_anchor_2(Vec3::new(0.0, if i == 0 { 1.0 } else { 0.5 }, 0.0));
        joints.push(spawn(&mut app, j));
        prev = b;
    }
    for s in 0..400 {
        step(&mut app, 1);
        if s % 50 == 0 {
            let w = app.world();
            let fs: Vec<f32> = joints.iter().step_by(5).map(|&j| w.get::<SphericalJoint>(j).unwrap().force().y).collect();
            let errs: Vec<f32> = joints.iter().step_by(5).map(|&j| { let b = w.get::<SphericalJoint>(j).unwrap().base(); let p1 = w.get::<Position>(b.entity1).unwrap().0 + w.get::<Rotation>(b.entity1).unwrap().0 * b.local_anchor1; let p2 = w.get::<Position>(b.entity2).unwrap().0 + w.get::<Rotation>(b.entity2).unwrap().0 * b.local_anchor2; (p1-p2).y }).collect();
            println!("step {s} last y {} forces {:?} errs {:?}", position(&app, prev).y, fs, errs);
        }
    }
}
