//! A user-defined velocity constraint: one [`ConstraintRow`] holds a 500 kg lift cabin on a
//! vertical rail and drives it with a velocity target, like a winch.
//!
//! The row's Jacobian is world Y on the cabin (against the static world), its geometric error
//! is how far the cabin is from where the winch has wound it to, and its velocity target is
//! the winch speed. The winch's force is limited to 7 kN (the cabin weighs 4.9 kN), so
//! the cabin accelerates at no more than (7000 − 4905) / 500 ≈ 4.2 m/s² up. The winch goes up
//! at 1 m/s for 3 s, stops for 1 s, then lowers at 0.5 m/s. A gust of wind pushes the
//! cabin sideways: one row holds only one direction, so the rail (the row) does not resist it.
//! Every quarter second the example prints the cabin's height, speed and the winch force read
//! back from the row's impulse.
//!
//! ```text
//! cargo run --example velocity_constraint
//! ```

use bevy::ecs::entity::{EntityMapper, MapEntities};
use bevy::prelude::*;
use impetus3d::prelude::*;

/// A winch pulling `cabin` along world Y at `speed`, with at most `max_force` newtons.
#[derive(Component)]
struct Winch {
    cabin: Entity,
    /// The rope's wound length: where the winch wants the cabin's centre of mass, m.
    wound_to: f32,
    speed: f32,
    max_force: f32,
    /// The force of the last step, N.
    force: f32,
}

impl VelocityConstraint<1> for Winch {
    fn entities(&self) -> [Entity; 1] {
        [self.cabin]
    }

    fn rows(&self, [cabin]: [&RigidBodyQueryItem; 1], rows: &mut RowSink) {
        let max = self.max_force * rows.step_duration();
        rows.add(
            ConstraintRow::linear(Vec3::Y, Vec3::ZERO, Vec3::ZERO)
                .with_error(cabin.current_center_of_mass().y - self.wound_to)
                .with_velocity_target(self.speed)
                .with_impulse_limits(-max, max),
        );
    }

    fn impulses(&mut self, impulses: &[f32]) {
        self.force = impulses[0] / DT as f32;
    }
}

impl MapEntities for Winch {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.cabin = mapper.get_mapped(self.cabin);
    }
}

/// Physics step, s.
const DT: f64 = 1.0 / 64.0;

fn main() {
    let mut app = impetus3d::headless_app(DT);
    app.add_systems(
        PhysicsSchedule,
        solve_velocity_constraint::<Winch, 1>.in_set(SolverSet::PrepareJoints),
    );
    let cabin = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid(2.0, 2.5, 2.0),
            Mass(500.0),
            SleepingDisabled,
            Transform::from_xyz(0.0, 1.25, 0.0),
        ))
        .id();
    let winch = app
        .world_mut()
        .spawn(Winch {
            cabin,
            wound_to: 1.25,
            speed: 0.0,
            max_force: 7000.0,
            force: 0.0,
        })
        .id();

    println!("  t (s)  winch (m/s)  height (m)  speed (m/s)  sideways (m)  force (N)");
    let steps_per_second = (1.0 / DT) as usize;
    for n in 1..=6 * steps_per_second {
        let t = n as f32 * DT as f32;
        let speed = match t {
            t if t <= 3.0 => 1.0,
            t if t <= 4.0 => 0.0,
            _ => -0.5,
        };
        if n == 2 * steps_per_second {
            // A gust: the one row holds only the vertical direction.
            app.world_mut()
                .entity_mut(cabin)
                .insert(ExternalImpulse::new(Vec3::new(250.0, 0.0, 0.0)));
        }
        app.world_mut().get_mut::<Winch>(winch).unwrap().speed = speed;
        app.update();
        // The rows of a step follow the target from where it was at the step's start.
        app.world_mut().get_mut::<Winch>(winch).unwrap().wound_to += speed * DT as f32;
        if n % (steps_per_second / 4) == 0 {
            let world = app.world();
            let p = world.get::<Position>(cabin).unwrap().0;
            let v = world.get::<LinearVelocity>(cabin).unwrap().0;
            let force = world.get::<Winch>(winch).unwrap().force;
            println!(
                "{t:7.2}  {speed:11.2}  {:10.3}  {:11.4}  {:12.3}  {force:9.0}",
                p.y, v.y, p.x
            );
        }
    }
}
