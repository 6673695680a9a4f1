//! Asking the world questions: a hitscan shot, a piercing shot, a sphere sweep, a point test,
//! and a falling ball whose `RayCaster` measures its height above the ground every step.
//!
//! ```text
//! cargo run --example ray_casting
//! ```

use bevy::ecs::system::RunSystemOnce;
use bevy::prelude::*;
use impetus3d::prelude::*;

fn main() {
    let mut app = impetus3d::headless_app(1.0 / 64.0);
    let world = app.world_mut();
    world.spawn((
        Name::new("ground"),
        RigidBody::Static,
        Collider::cuboid(40.0, 1.0, 40.0),
        Transform::from_xyz(0.0, -0.5, 0.0),
    ));
    // Three targets in a row along +x, and a trigger volume in front of them that shots pass.
    for (i, name) in ["crate", "barrel", "statue"].into_iter().enumerate() {
        let collider = match i {
            0 => Collider::cuboid(1.0, 1.0, 1.0),
            1 => Collider::cylinder(0.4, 1.2),
            _ => Collider::capsule(0.5, 1.0),
        };
        world.spawn((
            Name::new(name),
            RigidBody::Static,
            collider,
            Transform::from_xyz(5.0 + 4.0 * i as f32, 1.0, 0.0),
        ));
    }
    world.spawn((
        Name::new("trigger zone"),
        Sensor,
        Collider::cuboid(1.0, 4.0, 4.0),
        Transform::from_xyz(2.5, 1.0, 0.0),
    ));
    let ball = world
        .spawn((
            Name::new("ball"),
            RigidBody::Dynamic,
            Collider::sphere(0.25),
            Transform::from_xyz(-3.0, 3.0, 0.0),
            // Its ray starts at its centre; its own collider is skipped.
            RayCaster::new(Vec3::ZERO, Dir3::NEG_Y).with_max_distance(10.0),
        ))
        .id();
    app.update();

    app.world_mut()
        .run_system_once(|query: SpatialQuery, names: Query<&Name>| {
            let name = |e: Entity| names.get(e).map_or("?".to_string(), |n| n.to_string());
            let filter = SpatialQueryFilter::default();
            let eye = Vec3::new(0.0, 1.0, 0.0);

            println!("hitscan from {eye} along +x:");
            if let Some(hit) = query.cast_ray(eye, Dir3::X, 100.0, true, &filter) {
                println!(
                    "  first hit: {} at {:.3} m, normal {:.3}",
                    name(hit.entity),
                    hit.distance,
                    hit.normal
                );
            }

            println!("piercing shot (every hit, nearest first; sensors skipped by default):");
            for hit in query.ray_hits(eye, Dir3::X, 100.0, 10, true, &filter) {
                println!("  {} at {:.3} m", name(hit.entity), hit.distance);
            }
            let with_sensors = filter.clone().with_sensors(true);
            let first = query.cast_ray(eye, Dir3::X, 100.0, true, &with_sensors);
            println!(
                "  with sensors included the first hit is: {}",
                first.map_or("nothing".into(), |h| name(h.entity))
            );

            println!("a 0.3 m sphere swept down from 5 m above the barrel:");
            let sweep = query.cast_shape(
                &Collider::sphere(0.3),
                Vec3::new(9.0, 5.0, 0.0),
                Quat::IDENTITY,
                Dir3::NEG_Y,
                &ShapeCastConfig::from_max_distance(10.0),
                &filter,
            );
            if let Some(hit) = sweep {
                println!(
                    "  touches {} after {:.3} m at {:.3} (barrel top at y = 1.6: expected 5 - 1.6 - 0.3 = 3.1)",
                    name(hit.entity),
                    hit.distance,
                    hit.point2
                );
            }

            let inside = query.point_intersections(Vec3::new(13.0, 1.2, 0.0), &filter);
            let names_inside: Vec<_> = inside.into_iter().map(name).collect();
            println!("colliders containing (13, 1.2, 0): {names_inside:?}");
        })
        .unwrap();

    println!("the ball falls; its RayCaster reports the ground distance every step:");
    for step in 1..=48 {
        app.update();
        if step % 8 == 0 {
            let world = app.world();
            let height = world.get::<Position>(ball).unwrap().y;
            let hit = world.get::<RayHits>(ball).unwrap().first().copied();
            match hit {
                Some(hit) => println!(
                    "  step {step:2}: centre at y = {height:.3}, ray hits the ground {:.3} m below",
                    hit.distance
                ),
                None => println!("  step {step:2}: centre at y = {height:.3}, nothing below"),
            }
        }
    }
}
