//! Scratch: run the 4096-cube pile for profiling.
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use impetus3d::prelude::*;
use std::time::Duration;
fn main() {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, PhysicsPlugin::default()));
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 64.0,
    )));
    app.update();
    app.world_mut().spawn((
        RigidBody::Static,
        Collider::cuboid(200.0, 1.0, 200.0),
        Transform::from_xyz(0.0, -0.5, 0.0),
    ));
    for i in 0..16 {
        for j in 0..16 {
            for k in 0..16 {
                app.world_mut().spawn((
                    RigidBody::Dynamic,
                    Collider::cuboid(1.0, 1.0, 1.0),
                    SleepingDisabled,
                    Transform::from_xyz(
                        i as f32 * 1.1 - 8.0,
                        1.0 + j as f32 * 1.1,
                        k as f32 * 1.1 - 8.0,
                    ),
                ));
            }
        }
    }
    for _ in 0..60 {
        app.update();
    }
    let t = std::time::Instant::now();
    for _ in 0..100 {
        app.update();
    }
    println!("ms/step {}", t.elapsed().as_secs_f64() * 1000.0 / 100.0);
}
