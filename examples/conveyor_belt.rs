//! Conveyor belts made with a contact hook: boxes dropped onto a static belt are carried along
//! at the belt's surface speed.
//!
//! The hook reads each belt's [`Belt`] component and sets the pair's surface velocity; the
//! friction solve then drives the box's speed relative to the belt toward that velocity
//! instead of zero. A box accelerates at most at μ g (here 0.5 × 9.81 = 4.9 m/s²), so it
//! reaches a 2 m/s belt about 0.4 s after it lands; the frictionless box is never carried.
//!
//! Prints the boxes' speeds along the belt every 0.25 s.
//!
//! Headless; run it with:
//!
//! ```text
//! cargo run --example conveyor_belt
//! ```

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use impetus3d::prelude::*;

/// Physics step, s.
const DT: f64 = 1.0 / 64.0;
/// Belt surface velocity, m/s.
const BELT: Vec3 = Vec3::new(2.0, 0.0, 0.0);

/// A belt whose surface moves at `velocity` (world space).
#[derive(Component)]
struct Belt {
    velocity: Vec3,
}

/// The hooks: they read the belts' speeds.
#[derive(SystemParam)]
struct BeltHooks<'w, 's> {
    belts: Query<'w, 's, &'static Belt>,
}

impl CollisionHooks for BeltHooks<'_, '_> {
    fn modify_contacts(&self, contacts: &mut ContactPairMut, _: &mut Commands) -> bool {
        for collider in [contacts.collider1, contacts.collider2] {
            if let Ok(belt) = self.belts.get(collider) {
                contacts.set_surface_velocity(collider, belt.velocity);
            }
        }
        true
    }
}

fn main() {
    let mut app = impetus3d::headless_app(DT);
    app.add_plugins(CollisionHooksPlugin::<BeltHooks>::default());

    app.world_mut().spawn((
        RigidBody::Static,
        Collider::cuboid(30.0, 1.0, 6.0),
        Transform::from_xyz(0.0, -0.5, 0.0),
        Belt { velocity: BELT },
        ActiveCollisionHooks::MODIFY_CONTACTS,
    ));
    // Boxes dropped from 1 m with friction 0.5 (μ = 0.5 with the belt's default 0.5) and 0.
    let boxes: Vec<(f32, Entity)> = [(0.5, -1.5), (0.0, 1.5)]
        .into_iter()
        .map(|(mu, z)| {
            let id = app
                .world_mut()
                .spawn((
                    RigidBody::Dynamic,
                    Collider::cuboid(1.0, 1.0, 1.0),
                    Friction::new(mu),
                    Transform::from_xyz(-10.0, 1.5, z),
                    SleepingDisabled,
                ))
                .id();
            (mu, id)
        })
        .collect();

    println!("belt surface moves at {} m/s along x", BELT.x);
    print!("{:>6}", "t (s)");
    for (mu, _) in &boxes {
        print!(" {:>14}", format!("vx μ={mu} (m/s)"));
    }
    println!();
    for step in 1..=192 {
        app.update();
        if step % 16 == 0 {
            print!("{:>6.2}", step as f64 * DT);
            for (_, id) in &boxes {
                let v = app.world().get::<LinearVelocity>(*id).unwrap().x;
                print!(" {v:>14.4}");
            }
            println!();
        }
    }
}
