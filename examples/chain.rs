//! A 100-link chain: balls of radius 0.25 m, 1 m apart, joined by spherical joints with
//! anchors 0.5 m above and below each ball's centre, the first link hanging from a static
//! anchor. The chain starts straight out to the side, level with the anchor, and swings down
//! under gravity.
//!
//! Once per simulated second it prints the chain's stretch (the sum of the gaps between every
//! joint's two anchors over the 100 m rest length: the links are rigid, so that is how much
//! longer the chain is along its curve), the largest single gap, the straight-line distance
//! from the anchor to the chain's end, the fastest link's speed, and the wall-clock time per
//! step, headless, for 10 s of simulated time.
//!
//! ```text
//! cargo run --release --example chain
//! ```

use std::time::Instant;

use bevy::prelude::*;
use impetus3d::prelude::*;

/// Links in the chain.
const LINKS: usize = 100;
/// Distance between neighbouring link centres, m.
const SPACING: f32 = 1.0;
/// Physics step, s.
const DT: f64 = 1.0 / 64.0;
/// Simulated time, s.
const SECONDS: usize = 10;

fn main() {
    let mut app = impetus3d::headless_app(DT);

    let half = 0.5 * SPACING;
    let anchor = app
        .world_mut()
        .spawn((RigidBody::Static, Transform::default()))
        .id();
    // Link i lies at x = (i + 1) m; its joint anchors are ±0.5 m along the chain.
    let mut previous = anchor;
    let mut links = Vec::with_capacity(LINKS);
    let mut joints = Vec::with_capacity(LINKS);
    for i in 0..LINKS {
        let link = app
            .world_mut()
            .spawn((
                RigidBody::Dynamic,
                Collider::sphere(0.25),
                Transform::from_xyz((i as f32 + 1.0) * SPACING, 0.0, 0.0),
            ))
            .id();
        let joint = app
            .world_mut()
            .spawn(
                SphericalJoint::new(previous, link)
                    .with_local_anchor1(Vec3::new(half, 0.0, 0.0))
                    .with_local_anchor2(Vec3::new(-half, 0.0, 0.0)),
            )
            .id();
        links.push(link);
        joints.push(joint);
        previous = link;
    }
    let rest_length = LINKS as f32 * SPACING;

    println!(
        "chain: {LINKS} links, step {DT:.4} s, {} substeps",
        app.world().resource::<SubstepCount>().0
    );
    println!(
        "{:>4}  {:>10}  {:>11}  {:>8}  {:>14}  {:>9}",
        "t/s", "stretch/%", "max gap/mm", "reach/m", "fastest/(m/s)", "ms/step"
    );
    let steps_per_second = (1.0 / DT).round() as usize;
    for second in 1..=SECONDS {
        let start = Instant::now();
        for _ in 0..steps_per_second {
            app.update();
        }
        let elapsed = start.elapsed();
        let world = app.world();
        let point = |e: Entity, local: Vec3| {
            world.get::<Position>(e).expect("body").0
                + world.get::<Rotation>(e).expect("body").0 * local
        };
        let last = *links.last().expect("links");
        let reach = (point(anchor, Vec3::new(half, 0.0, 0.0))
            - point(last, Vec3::new(half, 0.0, 0.0)))
        .length();
        let gaps: Vec<f32> = joints
            .iter()
            .map(|&j| {
                let base = world.get::<SphericalJoint>(j).expect("joint").base();
                (point(base.entity1, base.local_anchor1) - point(base.entity2, base.local_anchor2))
                    .length()
            })
            .collect();
        let max_gap = gaps.iter().copied().fold(0.0, f32::max);
        let stretch = gaps.iter().sum::<f32>() / rest_length;
        let fastest = links
            .iter()
            .map(|&l| world.get::<LinearVelocity>(l).expect("link").0.length())
            .fold(0.0, f32::max);
        println!(
            "{second:>4}  {:>10.3}  {:>11.2}  {reach:>8.2}  {fastest:>14.2}  {:>9.3}",
            100.0 * stretch,
            1000.0 * max_gap,
            elapsed.as_secs_f64() * 1000.0 / steps_per_second as f64
        );
    }
}
