//! The XPBD distance-constraint tutorial (Carmen Cincotti, "The Distance Constraint | XPBD",
//! one of the project's starting references) reproduced with a user constraint: two particles
//! of equal mass at (2, 2, 0) and (−2, −2, 0) with a rest length of 1 end at (±0.3536, ±0.3536, 0)
//! after the constraint first acts.

use crate::common;
use crate::joints_common;

use bevy::ecs::entity::{EntityMapper, MapEntities};
use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;
use joints_common::*;

/// The tutorial's distance constraint, written as in the tutorial:
/// `C(x₁, x₂) = |x₁ − x₂| − d`, `n = (x₁ − x₂) / |x₁ − x₂|`, `∇₁C = n`, `∇₂C = −n`,
/// `Δλ = −C / (w₁ + w₂ + α̃)`, `Δx₁ = +Δλ w₁ n`, `Δx₂ = −Δλ w₂ n`.
#[derive(Component)]
struct TutorialDistance {
    particle1: Entity,
    particle2: Entity,
    rest_length: f32,
    compliance: f32,
    lagrange: f32,
}

impl XpbdConstraint<2> for TutorialDistance {
    fn entities(&self) -> [Entity; 2] {
        [self.particle1, self.particle2]
    }

    fn clear_lagrange_multipliers(&mut self) {
        self.lagrange = 0.0;
    }

    fn solve(&mut self, [p1, p2]: [&mut RigidBodyQueryItem; 2], dt: f32) {
        let x12 = p1.current_position() - p2.current_position();
        let length = x12.length();
        let c = length - self.rest_length;
        let n = x12 / length;
        let (w1, w2) = (p1.inverse_mass(), p2.inverse_mass());
        let delta = self.compute_lagrange_update(self.lagrange, c, &[w1, w2], self.compliance, dt);
        self.lagrange += delta;
        p1.accumulated_translation += delta * w1 * n;
        p2.accumulated_translation -= delta * w2 * n;
    }
}

impl MapEntities for TutorialDistance {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.particle1 = mapper.get_mapped(self.particle1);
        self.particle2 = mapper.get_mapped(self.particle2);
    }
}

/// The same constraint written with the engine's [`PositionConstraint`] helpers.
#[derive(Component)]
struct HelperDistance {
    particle1: Entity,
    particle2: Entity,
    rest_length: f32,
    lagrange: f32,
}

impl PositionConstraint for HelperDistance {}

impl XpbdConstraint<2> for HelperDistance {
    fn entities(&self) -> [Entity; 2] {
        [self.particle1, self.particle2]
    }

    fn clear_lagrange_multipliers(&mut self) {
        self.lagrange = 0.0;
    }

    fn solve(&mut self, [p1, p2]: [&mut RigidBodyQueryItem; 2], dt: f32) {
        let x12 = p1.current_center_of_mass() - p2.current_center_of_mass();
        let length = x12.length();
        let n = x12 / length;
        let w1 = self.compute_generalized_inverse_mass(p1, Vec3::ZERO, n);
        let w2 = self.compute_generalized_inverse_mass(p2, Vec3::ZERO, n);
        let c = length - self.rest_length;
        let delta = self.compute_lagrange_update(self.lagrange, c, &[w1, w2], 0.0, dt);
        self.lagrange += delta;
        self.apply_positional_correction(p1, p2, delta, n, Vec3::ZERO, Vec3::ZERO);
    }
}

impl MapEntities for HelperDistance {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.particle1 = mapper.get_mapped(self.particle1);
        self.particle2 = mapper.get_mapped(self.particle2);
    }
}

/// The tutorial's expected coordinate: the particles end 1 m apart on the diagonal, centred on
/// the origin, so each is 0.5 m from it: 0.5 / √2 = 0.353553.
const EXPECTED: f32 = 0.353_553_4;

/// f32 round-off: the solve does ~10 operations on numbers of magnitude ≤ 6 (the initial
/// separation 4√2 = 5.66); ulp(4) = 4.8e-7, so 1e-5 allows ~20 ulps. The method itself is exact
/// here (one linear projection with equal masses, no other motion).
const ROUND_OFF: f32 = 1e-5;

/// A headless app with gravity off and a single substep, so that one `update` is exactly one
/// constraint solve (integration with zero velocity moves nothing).
fn one_substep_app() -> App {
    let mut app = app();
    no_gravity(&mut app);
    app.insert_resource(SubstepCount(1));
    app
}

/// Two particles as the tutorial has them: dynamic bodies with no collider, so the default
/// mass of 1 kg each (w₁ = w₂ = 1).
fn particles(app: &mut App) -> (Entity, Entity) {
    let p1 = spawn(
        app,
        (RigidBody::Dynamic, Transform::from_xyz(2.0, 2.0, 0.0)),
    );
    let p2 = spawn(
        app,
        (RigidBody::Dynamic, Transform::from_xyz(-2.0, -2.0, 0.0)),
    );
    (p1, p2)
}

fn assert_tutorial_result(app: &App, p1: Entity, p2: Entity) {
    let (x1, x2) = (position(app, p1), position(app, p2));
    println!("after one solve: P1 = {x1:.4}, P2 = {x2:.4}");
    let expected1 = Vec3::new(EXPECTED, EXPECTED, 0.0);
    assert!(
        (x1 - expected1).abs().max_element() <= ROUND_OFF,
        "P1 = {x1:?}, tutorial says {expected1:?}"
    );
    assert!(
        (x2 + expected1).abs().max_element() <= ROUND_OFF,
        "P2 = {x2:?}, tutorial says {:?}",
        -expected1
    );
    // The constraint is satisfied: |x₁ − x₂| = 1.
    assert!(((x1 - x2).length() - 1.0).abs() <= ROUND_OFF);
}

#[test]
fn tutorial_distance_constraint_moves_particles_to_rest_length() {
    let mut app = one_substep_app();
    app.add_systems(
        SubstepSchedule,
        solve_constraint::<TutorialDistance, 2>.in_set(SubstepSolverSet::SolveUserConstraints),
    );
    let (p1, p2) = particles(&mut app);
    spawn(
        &mut app,
        TutorialDistance {
            particle1: p1,
            particle2: p2,
            rest_length: 1.0,
            compliance: 0.0,
            lagrange: 0.0,
        },
    );
    // Not stepped yet: the pose is the spawn pose (filled when the body is spawned).
    assert_eq!(
        position(&app, p1),
        Vec3::new(2.0, 2.0, 0.0),
        "not stepped yet"
    );
    step(&mut app, 1);
    assert_tutorial_result(&app, p1, p2);

    // Velocity projection turned the correction into velocity: Δx / h with h = dt (one
    // substep). Each particle moved 2.5 m / √2 along each axis; same round-off bound scaled by
    // 1/h = 64.
    let moved = 2.0 - EXPECTED;
    let v1 = velocity(&app, p1);
    assert!(
        (v1 - Vec3::new(-moved, -moved, 0.0) / DT)
            .abs()
            .max_element()
            <= ROUND_OFF / DT,
        "v1 = {v1:?}"
    );
    assert!((velocity(&app, p2) + v1).length() <= ROUND_OFF / DT);
}

#[test]
fn tutorial_result_with_position_constraint_helpers() {
    let mut app = one_substep_app();
    app.add_systems(
        SubstepSchedule,
        solve_constraint::<HelperDistance, 2>.in_set(SubstepSolverSet::SolveUserConstraints),
    );
    let (p1, p2) = particles(&mut app);
    spawn(
        &mut app,
        HelperDistance {
            particle1: p1,
            particle2: p2,
            rest_length: 1.0,
            lagrange: 0.0,
        },
    );
    step(&mut app, 1);
    assert_tutorial_result(&app, p1, p2);
    // The correction acts through the centres of mass: no rotation.
    assert_eq!(rotation(&app, p1), Quat::IDENTITY);
    assert_eq!(rotation(&app, p2), Quat::IDENTITY);
}

#[test]
fn tutorial_with_unequal_masses_splits_correction_by_inverse_mass() {
    // The tutorial's Δx₁ = −w₁/(w₁+w₂) C n, Δx₂ = +w₂/(w₁+w₂) C n with m₁ = 3 kg, m₂ = 1 kg:
    // C = 4√2 − 1, so particle 1 moves C/4 and particle 2 moves 3C/4 along the diagonal.
    let mut app = one_substep_app();
    app.add_systems(
        SubstepSchedule,
        solve_constraint::<TutorialDistance, 2>.in_set(SubstepSolverSet::SolveUserConstraints),
    );
    let (p1, p2) = particles(&mut app);
    set(&mut app, p1, Mass(3.0));
    spawn(
        &mut app,
        TutorialDistance {
            particle1: p1,
            particle2: p2,
            rest_length: 1.0,
            compliance: 0.0,
            lagrange: 0.0,
        },
    );
    step(&mut app, 1);
    let c = 4.0 * 2f32.sqrt() - 1.0;
    let diagonal = Vec3::new(1.0, 1.0, 0.0).normalize();
    let expected1 = Vec3::new(2.0, 2.0, 0.0) - 0.25 * c * diagonal;
    let expected2 = Vec3::new(-2.0, -2.0, 0.0) + 0.75 * c * diagonal;
    let (x1, x2) = (position(&app, p1), position(&app, p2));
    assert!(
        (x1 - expected1).abs().max_element() <= ROUND_OFF,
        "P1 = {x1:?}, expected {expected1:?}"
    );
    assert!(
        (x2 - expected2).abs().max_element() <= ROUND_OFF,
        "P2 = {x2:?}, expected {expected2:?}"
    );
}

#[test]
fn compliant_tutorial_constraint_moves_by_xpbd_fraction() {
    // With compliance α the first solve gives Δλ = −C / (w₁ + w₂ + α/h²): choosing α = 2 h²
    // (α̃ = 2 = w₁ + w₂) halves the correction, so each particle covers half the way to the
    // tutorial's result.
    let mut app = one_substep_app();
    app.add_systems(
        SubstepSchedule,
        solve_constraint::<TutorialDistance, 2>.in_set(SubstepSolverSet::SolveUserConstraints),
    );
    let (p1, p2) = particles(&mut app);
    spawn(
        &mut app,
        TutorialDistance {
            particle1: p1,
            particle2: p2,
            rest_length: 1.0,
            compliance: 2.0 * DT * DT,
            lagrange: 0.0,
        },
    );
    step(&mut app, 1);
    let halfway = 0.5 * (2.0 + EXPECTED);
    let x1 = position(&app, p1);
    assert!(
        (x1 - Vec3::new(halfway, halfway, 0.0)).abs().max_element() <= ROUND_OFF,
        "P1 = {x1:?}, expected ({halfway}, {halfway}, 0)"
    );
}
