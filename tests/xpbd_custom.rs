//! User constraints with one and three bodies, registered with `solve_constraint::<C, N>`.

use crate::common;
use crate::joints_common;

use bevy::ecs::entity::{EntityMapper, MapEntities};
use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;
use joints_common::*;

/// Keeps a body's centre of mass at height `height` (one body, `C = y − h`, `∇C = ŷ`).
#[derive(Component)]
struct Height {
    body: Entity,
    height: f32,
    lagrange: f32,
}

impl XpbdConstraint<1> for Height {
    fn entities(&self) -> [Entity; 1] {
        [self.body]
    }
    fn clear_lagrange_multipliers(&mut self) {
        self.lagrange = 0.0;
    }
    fn solve(&mut self, [body]: [&mut RigidBodyQueryItem; 1], dt: f32) {
        let c = body.current_center_of_mass().y - self.height;
        let w = body.inverse_mass();
        let delta = self.compute_lagrange_update(self.lagrange, c, &[w], 0.0, dt);
        self.lagrange += delta;
        body.accumulated_translation.y += delta * w;
    }
}

impl MapEntities for Height {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.body = mapper.get_mapped(self.body);
    }
}

/// Keeps body 2 at the midpoint of bodies 1 and 3: `C = |x₂ − (x₁ + x₃)/2|`, with gradients
/// `−n/2`, `n`, `−n/2` (`n` the unit offset), solved through
/// `compute_lagrange_update_with_gradients`.
#[derive(Component)]
struct Midpoint {
    bodies: [Entity; 3],
    lagrange: f32,
}

impl XpbdConstraint<3> for Midpoint {
    fn entities(&self) -> [Entity; 3] {
        self.bodies
    }
    fn clear_lagrange_multipliers(&mut self) {
        self.lagrange = 0.0;
    }
    fn solve(&mut self, bodies: [&mut RigidBodyQueryItem; 3], dt: f32) {
        let [b1, b2, b3] = bodies;
        let offset = b2.current_center_of_mass()
            - 0.5 * (b1.current_center_of_mass() + b3.current_center_of_mass());
        let c = offset.length();
        if c <= f32::EPSILON {
            return;
        }
        let n = offset / c;
        let gradients = [-0.5 * n, n, -0.5 * n];
        let w = [b1.inverse_mass(), b2.inverse_mass(), b3.inverse_mass()];
        let delta =
            self.compute_lagrange_update_with_gradients(self.lagrange, c, &gradients, &w, 0.0, dt);
        self.lagrange += delta;
        for ((body, gradient), w) in [b1, b2, b3].into_iter().zip(gradients).zip(w) {
            body.accumulated_translation += delta * w * gradient;
        }
    }
}

impl MapEntities for Midpoint {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        for body in &mut self.bodies {
            *body = mapper.get_mapped(*body);
        }
    }
}

#[test]
fn one_body_constraint_holds_height_and_leaves_other_motion_free() {
    let mut app = app();
    app.add_systems(
        SubstepSchedule,
        solve_constraint::<Height, 1>.in_set(SubstepSolverSet::SolveUserConstraints),
    );
    let h = 2.0;
    let vx = 3.0;
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_xyz(0.0, 2.5, 0.0),
            LinearVelocity(Vec3::new(vx, 0.0, 0.0)),
        ),
    );
    spawn(
        &mut app,
        Height {
            body,
            height: h,
            lagrange: 0.0,
        },
    );
    let steps = 128;
    for k in 1..=steps {
        step(&mut app, 1);
        let p = position(&app, body);
        // The constraint is linear, so one projection satisfies it exactly; what is left is f32
        // round-off of y ≈ 2 (ulp 2.4e-7) over a few operations per substep, and of the
        // 0.5 m / h = 128 m/s velocity of the first correction.
        assert!(
            (p.y - h).abs() <= 1e-5,
            "step {k}: y = {}, constraint height {h}",
            p.y
        );
        if k >= 2 {
            // The first step's projection gave it −0.5 m/h downwards velocity, the next
            // projection takes it away again; after that v_y is round-off of that 128 m/s
            // (ulp(128) = 1.5e-5) over a few substeps.
            assert!(
                velocity(&app, body).y.abs() <= 1e-3,
                "step {k}: v_y = {}",
                velocity(&app, body).y
            );
        }
    }
    // Horizontal motion is untouched: x = vx t. Round-off bound: 512 substeps × ½ ulp(8)
    // = 2.4e-4 m.
    let t = steps as f32 * DT;
    let p = position(&app, body);
    assert!(
        (p.x - vx * t).abs() <= 2.4e-4,
        "x = {}, expected {}",
        p.x,
        vx * t
    );
    assert_eq!(p.z, 0.0);
    assert_eq!(rotation(&app, body), Quat::IDENTITY);
}

#[test]
fn three_body_constraint_keeps_midpoint_and_conserves_momentum() {
    let mut app = app();
    no_gravity(&mut app);
    app.add_systems(
        SubstepSchedule,
        solve_constraint::<Midpoint, 3>.in_set(SubstepSolverSet::SolveUserConstraints),
    );
    // No colliders: masses from `Mass` (1, 2, 4 kg), so the constraint's weights differ.
    let b1 = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Mass(1.0),
            Transform::from_xyz(-2.0, 0.0, 0.0),
            LinearVelocity(Vec3::new(0.0, 1.0, 0.0)),
        ),
    );
    let b2 = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Mass(2.0),
            Transform::from_xyz(0.1, 0.6, 0.05),
            LinearVelocity(Vec3::new(1.0, 0.0, 0.0)),
        ),
    );
    let b3 = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Mass(4.0),
            Transform::from_xyz(2.0, 1.0, 0.0),
            LinearVelocity(Vec3::new(0.0, 0.0, -1.0)),
        ),
    );
    let constraint = spawn(
        &mut app,
        Midpoint {
            bodies: [b1, b2, b3],
            lagrange: 0.0,
        },
    );
    let momentum = |app: &App| {
        [(b1, 1.0), (b2, 2.0), (b3, 4.0)]
            .iter()
            .map(|&(b, m)| m * velocity(app, b))
            .sum::<Vec3>()
    };
    let p0 = momentum(&app);
    // The spawn poses put body 2 0.15 m off the midpoint (0, 0.5, 0).
    for k in 1..=128 {
        step(&mut app, 1);
        let (x1, x2, x3) = (position(&app, b1), position(&app, b2), position(&app, b3));
        let error = (x2 - 0.5 * (x1 + x3)).length();
        // Linear constraint, solved exactly by one projection: f32 round-off on coordinates
        // of magnitude ≤ 4 (ulp 4.8e-7) over ~10 operations.
        assert!(error <= 1e-5, "step {k}: midpoint error {error} m");
        // The gradients sum to zero (−n/2 + n − n/2), so the constraint is internal and
        // conserves linear momentum. Round-off: the first correction's velocities are
        // ~0.6 m / h = 150 m/s (ulp 1.5e-5), later ones ~1 m/s, over 7 kg and 512 substeps.
        let dp = (momentum(&app) - p0).length();
        assert!(dp <= 1e-3, "step {k}: momentum changed by {dp} kg·m/s");
    }
    assert!(all_bodies_finite(&mut app));
    // Solved through the registered system: it holds a non-zero multiplier only while the
    // constraint works, and the entities are the ones spawned.
    let c = app.world().get::<Midpoint>(constraint).unwrap();
    assert_eq!(c.entities(), [b1, b2, b3]);
}

#[test]
fn three_body_constraint_with_a_static_body_moves_only_the_dynamic_ones() {
    let mut app = app();
    no_gravity(&mut app);
    app.add_systems(
        SubstepSchedule,
        solve_constraint::<Midpoint, 3>.in_set(SubstepSolverSet::SolveUserConstraints),
    );
    let b1 = spawn(
        &mut app,
        (RigidBody::Static, Transform::from_xyz(-2.0, 0.0, 0.0)),
    );
    let b2 = spawn(
        &mut app,
        (RigidBody::Dynamic, Transform::from_xyz(0.0, 1.0, 0.0)),
    );
    let b3 = spawn(
        &mut app,
        (RigidBody::Dynamic, Transform::from_xyz(2.0, 0.0, 0.0)),
    );
    spawn(
        &mut app,
        Midpoint {
            bodies: [b1, b2, b3],
            lagrange: 0.0,
        },
    );
    step(&mut app, 32);
    let (x1, x2, x3) = (position(&app, b1), position(&app, b2), position(&app, b3));
    assert_eq!(x1, Vec3::new(-2.0, 0.0, 0.0), "the static body moved");
    // Same round-off bound as above.
    let error = (x2 - 0.5 * (x1 + x3)).length();
    assert!(error <= 1e-5, "midpoint error {error} m (x2 {x2}, x3 {x3})");
}
