//! A one-way platform made with a contact hook: a box launched from below flies up through a
//! thin platform, falls back onto it and stays there.
//!
//! The hook keeps a contact point only where the normal points up out of the platform and the
//! box is at most 5 cm into it. Coming from below, the normal points down (or, once the box is
//! more than halfway through, the box is deep inside), so every point is disabled; landing from
//! above, speculative contacts catch the box at the surface and hold it.
//!
//! Prints the box's bottom height every 0.125 s, and its apex: free flight peaks at
//! `v0² / 2g` = 3.26 m (less 1.6 cm of integrator lag), well above the platform top at 2.1 m.
//!
//! Headless; run it with:
//!
//! ```text
//! cargo run --example one_way_platform
//! ```

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use impetus3d::prelude::*;

/// Physics step, s.
const DT: f64 = 1.0 / 64.0;
/// Height of the platform's top face, m.
const TOP: f32 = 2.1;
/// Launch speed, m/s.
const V0: f32 = 8.0;
/// Half the box's side, m.
const HALF: f32 = 0.25;

/// Marks one-way platforms.
#[derive(Component)]
struct OneWay;

/// The hooks: they read which colliders are one-way platforms.
#[derive(SystemParam)]
struct PlatformHooks<'w, 's> {
    platforms: Query<'w, 's, (), With<OneWay>>,
}

impl CollisionHooks for PlatformHooks<'_, '_> {
    fn modify_contacts(&self, contacts: &mut ContactPairMut, _: &mut Commands) -> bool {
        // Contact normals point from collider 1 to collider 2: make them point out of the
        // platform.
        let sign = if self.platforms.contains(contacts.collider1) {
            1.0
        } else {
            -1.0
        };
        contacts.retain_points(|p| sign * p.normal.y > 0.7 && p.separation > -0.05);
        true
    }
}

fn main() {
    let mut app = impetus3d::headless_app(DT);
    app.add_plugins(CollisionHooksPlugin::<PlatformHooks>::default());

    app.world_mut().spawn((
        RigidBody::Static,
        Collider::cuboid(4.0, 0.2, 4.0),
        Transform::from_xyz(0.0, TOP - 0.1, 0.0),
        OneWay,
        ActiveCollisionHooks::MODIFY_CONTACTS,
    ));
    let body = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid(2.0 * HALF, 2.0 * HALF, 2.0 * HALF),
            Transform::from_xyz(0.0, HALF, 0.0),
            LinearVelocity(Vec3::Y * V0),
        ))
        .id();

    println!("platform top at {TOP} m; box launched up at {V0} m/s from y = 0");
    println!("{:>6} {:>10} {:>10}", "t (s)", "bottom (m)", "vy (m/s)");
    let mut apex = 0.0_f32;
    for step in 1..=192 {
        app.update();
        let bottom = app.world().get::<Position>(body).unwrap().y - HALF;
        let vy = app.world().get::<LinearVelocity>(body).unwrap().y;
        apex = apex.max(bottom);
        if step % 8 == 0 {
            println!("{:>6.3} {:>10.4} {:>10.4}", step as f64 * DT, bottom, vy);
        }
    }
    let rest = app.world().get::<Position>(body).unwrap().y - HALF;
    println!(
        "apex {apex:.4} m (free flight {:.4} m); resting at {rest:.4} m, {:.1} mm from the top",
        V0 * V0 / (2.0 * 9.81),
        (rest - TOP).abs() * 1000.0
    );
}
