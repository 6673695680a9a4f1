//! How the XPBD solver is organised, seen from outside: joints and user constraints added or
//! removed in the middle of a step (by a user system in the substep schedule), which the
//! solver, resolving its dense lists once per step, must notice, solving every remaining
//! constraint exactly as often as any other substep would and still handing the joints' state
//! back to their components; and the fast path of plain spherical joints, which must move the
//! bodies exactly as the general path does.

use crate::common;
use crate::joints_common;

use bevy::ecs::entity::{EntityMapper, MapEntities};
use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

/// A user constraint that moves nothing and counts, per substep, the passes it was solved in
/// since its multipliers were last cleared.
#[derive(Component)]
struct Counting {
    entities: [Entity; 2],
    /// Passes since the last clear.
    passes: u32,
    /// Passes counted at each clear (the last substep's), then this substep's.
    history: Vec<u32>,
}

impl XpbdConstraint<2> for Counting {
    fn entities(&self) -> [Entity; 2] {
        self.entities
    }
    fn clear_lagrange_multipliers(&mut self) {
        self.history.push(self.passes);
        self.passes = 0;
    }
    fn solve(&mut self, _: [&mut RigidBodyQueryItem; 2], _: f32) {
        self.passes += 1;
    }
}

impl MapEntities for Counting {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.entities = self.entities.map(|e| mapper.get_mapped(e));
    }
}

/// What [`change_constraints`] does, and when.
#[derive(Resource)]
struct Change {
    step: u64,
    substep: u32,
    despawn: Vec<Entity>,
    spawn: Vec<[Entity; 2]>,
    spawned: Vec<Entity>,
}

/// In the chosen substep, despawns and spawns constraints (applied before the user
/// constraints are solved).
fn change_constraints(
    mut commands: Commands,
    time: Res<PhysicsStepTime>,
    change: Option<ResMut<Change>>,
) {
    let Some(mut change) = change else {
        return;
    };
    if time.step_count != change.step || time.substep != change.substep {
        return;
    }
    for entity in std::mem::take(&mut change.despawn) {
        commands.entity(entity).despawn();
    }
    for bodies in std::mem::take(&mut change.spawn) {
        let entity = commands
            .spawn(Counting {
                entities: bodies,
                passes: 0,
                history: Vec::new(),
            })
            .id();
        change.spawned.push(entity);
    }
}

fn counting(app: &App, entity: Entity) -> &Counting {
    app.world().get::<Counting>(entity).unwrap()
}

fn ball(app: &mut App, x: f32) -> Entity {
    spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.2),
            CollisionLayers::NONE,
            GravityScale(0.0),
            SleepingDisabled,
            Transform::from_xyz(x, 0.0, 0.0),
        ),
    )
}

#[test]
fn constraints_added_and_removed_mid_step_are_each_solved_once_per_pass() {
    let mut app = app();
    app.add_systems(
        SubstepSchedule,
        (
            change_constraints.in_set(SubstepSolverSet::SolveXpbdConstraints),
            solve_constraint::<Counting, 2>.in_set(SubstepSolverSet::SolveUserConstraints),
        ),
    );
    let balls: Vec<Entity> = (0..6).map(|i| ball(&mut app, 2.0 * i as f32)).collect();
    let constraints: Vec<Entity> = (0..5)
        .map(|i| {
            spawn(
                &mut app,
                Counting {
                    entities: [balls[i], balls[i + 1]],
                    passes: 0,
                    history: Vec::new(),
                },
            )
        })
        .collect();
    step(&mut app, 2);
    // In the third substep of the next step, the second constraint goes (the last one takes
    // its place in the query's table) and a new one comes.
    app.insert_resource(Change {
        step: steps(&app) + 1,
        substep: 2,
        despawn: vec![constraints[1]],
        spawn: vec![[balls[5], balls[0]]],
        spawned: Vec::new(),
    });
    step(&mut app, 1);
    // One more step closes the last substep's count.
    step(&mut app, 1);

    let passes = app.world().resource::<XpbdIterations>().0;
    let substeps = app.world().resource::<SubstepCount>().0 as usize;
    for &c in constraints.iter().filter(|&&c| c != constraints[1]) {
        let history = &counting(&app, c).history;
        // Every substep of the four steps (the first clear counts nothing before it).
        assert_eq!(history.len(), 4 * substeps, "constraint {c}: {history:?}");
        assert!(
            history[1..].iter().all(|&n| n == passes),
            "constraint {c} was not solved {passes} times in every substep: {history:?}"
        );
    }
    let added = app.world().resource::<Change>().spawned[0];
    let history = &counting(&app, added).history;
    // Spawned in the third substep of the third step: its two substeps there, four after.
    assert_eq!(history.len(), 2 + substeps, "new constraint: {history:?}");
    assert!(
        history[1..].iter().all(|&n| n == passes),
        "the new constraint was not solved {passes} times in every substep: {history:?}"
    );
}

/// Three pendulums on spherical joints; in the middle of one step the first joint is
/// despawned (which moves the last one up in its query's table) and the last bob is kicked.
/// The kicked pendulum's joint reports that step's pull: its state reached its component
/// although the joints' query order changed while the step ran.
#[test]
fn joint_state_is_stored_after_a_joint_is_despawned_mid_step() {
    let mut app = app();
    app.add_systems(
        SubstepSchedule,
        despawn_joint_mid_step.in_set(SubstepSolverSet::IntegrateVelocities),
    );
    let mut joints = Vec::new();
    let mut bobs = Vec::new();
    for i in 0..3 {
        let x = 3.0 * i as f32;
        let anchor = spawn(
            &mut app,
            (RigidBody::Static, Transform::from_xyz(x, 0.0, 0.0)),
        );
        let bob = spawn(
            &mut app,
            (
                RigidBody::Dynamic,
                Collider::sphere(0.2),
                CollisionLayers::NONE,
                SleepingDisabled,
                Transform::from_xyz(x, -1.0, 0.0),
            ),
        );
        joints.push(spawn(
            &mut app,
            SphericalJoint::new(anchor, bob).with_local_anchor2(Vec3::Y),
        ));
        bobs.push(bob);
    }
    step(&mut app, 30);
    let weight = joints_common::mass(&app, bobs[2]) * g();
    let hanging = app
        .world()
        .get::<SphericalJoint>(joints[2])
        .unwrap()
        .force();
    assert!(
        (hanging.length() - weight).abs() < 0.05 * weight,
        "{hanging}"
    );

    app.insert_resource(DespawnAt {
        step: steps(&app) + 1,
        joint: joints[0],
    });
    set(&mut app, bobs[2], LinearVelocity(Vec3::new(4.0, 0.0, 0.0)));
    step(&mut app, 1);
    assert!(app.world().get_entity(joints[0]).is_err());
    // Swinging at 4 m/s on a 1 m string: the pull is about m (g + v²/r), 2.6 times the weight.
    let pull = app
        .world()
        .get::<SphericalJoint>(joints[2])
        .unwrap()
        .force();
    assert!(
        pull.length() > 2.0 * weight,
        "the kicked pendulum's joint reports {pull} (weight {weight}): last step's state"
    );
    let other = app
        .world()
        .get::<SphericalJoint>(joints[1])
        .unwrap()
        .force();
    assert!((other.length() - weight).abs() < 0.05 * weight, "{other}");
}

#[derive(Resource)]
struct DespawnAt {
    step: u64,
    joint: Entity,
}

fn despawn_joint_mid_step(
    mut commands: Commands,
    time: Res<PhysicsStepTime>,
    at: Option<Res<DespawnAt>>,
) {
    if let Some(at) = at
        && time.step_count == at.step
        && time.substep == 1
    {
        commands.entity(at.joint).despawn();
    }
}

/// A kicked chain of `links` boxes on spherical joints with anchors off the centre lines (so
/// the links turn), and where each body is after `steps` steps. With `limited`, every joint
/// has swing limits of [0, π], which the swing angle can never leave: the limit code measures
/// and does nothing, but the joints take the general path instead of the fast one. A tassel
/// (one more box) hangs from the middle link, so the plain joints do not form a path, which
/// the engine would solve directly, not in Gauss–Seidel passes
/// (`hundred_link_chain_hangs_at_its_rest_length`).
fn chain_poses(limited: bool, links: usize, steps: usize) -> Vec<(Vec3, Quat)> {
    let mut app = app();
    let mut previous = spawn(&mut app, (RigidBody::Static, Transform::default()));
    // A free box of size `size` at `position`, joined to `to` by a spherical joint.
    let hang = |app: &mut App, to: Entity, size: Vec3, position: Vec3, anchors: [Vec3; 2]| {
        let body = spawn(
            app,
            (
                RigidBody::Dynamic,
                Collider::cuboid(size.x, size.y, size.z),
                CollisionLayers::NONE,
                SleepingDisabled,
                Transform::from_translation(position),
            ),
        );
        let mut joint = SphericalJoint::new(to, body)
            .with_local_anchor1(anchors[0])
            .with_local_anchor2(anchors[1]);
        if limited {
            joint = joint.with_swing_limits(0.0, std::f32::consts::PI);
        }
        spawn(app, joint);
        body
    };
    let mut bodies = Vec::new();
    for i in 0..links {
        let anchors = [Vec3::new(0.5, 0.05, 0.1), Vec3::new(-0.5, -0.05, 0.1)];
        let at = Vec3::new(i as f32 + 1.0, 0.1 * i as f32, 0.0);
        previous = hang(&mut app, previous, Vec3::new(0.8, 0.3, 0.4), at, anchors);
        bodies.push(previous);
    }
    let middle = links / 2;
    let at = Vec3::new(middle as f32 + 1.0, 0.1 * middle as f32 - 1.0, 0.0);
    let anchors = [Vec3::new(0.0, -0.5, 0.0), Vec3::new(0.0, 0.5, 0.0)];
    let tassel = hang(
        &mut app,
        bodies[middle],
        Vec3::new(0.3, 0.8, 0.4),
        at,
        anchors,
    );
    bodies.push(tassel);
    set(&mut app, previous, LinearVelocity(Vec3::new(0.0, 2.0, 3.0)));
    step(&mut app, steps);
    bodies
        .iter()
        .map(|&b| (position(&app, b), rotation(&app, b)))
        .collect()
}

#[test]
fn plain_spherical_joints_move_bodies_exactly_as_the_general_path_does() {
    let fast = chain_poses(false, 12, 90);
    let general = chain_poses(true, 12, 90);
    // The chain really moved and turned.
    assert!(
        fast.iter()
            .any(|(_, q)| q.angle_between(Quat::IDENTITY) > 0.3)
    );
    assert_eq!(fast, general, "the two paths differ");
}

/// An `n` × `n` grid of bodies hanging from its two top corners, each joined to its right
/// and lower neighbours by a spherical joint with anchors off the bodies' centre lines, with
/// a break force that the joints near the corners exceed as the grid falls and swings; where
/// each body is after `steps` steps, and how many joints broke. The upper half are balls
/// (uniform bodies: the same inverse mass on every axis and an inverse inertia `s I`), one of
/// them with a locked translation axis, the lower half boxes, so that groups of four joints
/// have all, some or none of their bodies uniform. The joints of one level of the list's order
/// are solved four at a time on the fast path; with `limited` (swing limits that never bind)
/// every joint takes the general path, one at a time.
fn grid_poses(limited: bool, n: usize, steps: usize) -> (Vec<(Vec3, Quat)>, usize) {
    let mut app = app();
    let mut boxes = Vec::new();
    for row in 0..n {
        for column in 0..n {
            let corner = row == 0 && (column == 0 || column == n - 1);
            let body = spawn(
                &mut app,
                (
                    if corner {
                        RigidBody::Static
                    } else {
                        RigidBody::Dynamic
                    },
                    if row < n / 2 {
                        Collider::sphere(0.3)
                    } else {
                        Collider::cuboid(0.6, 0.3, 0.4)
                    },
                    CollisionLayers::NONE,
                    SleepingDisabled,
                    Transform::from_xyz(column as f32, -(row as f32), 0.0),
                ),
            );
            if (row, column) == (1, 2) {
                set(&mut app, body, LockedAxes::new().lock_translation_z());
            }
            boxes.push(body);
        }
    }
    let mut joints = Vec::new();
    for row in 0..n {
        for column in 0..n {
            let here = boxes[row * n + column];
            let mut join = |other: Entity, a1: Vec3, a2: Vec3| {
                let mut joint = SphericalJoint::new(here, other)
                    .with_local_anchor1(a1)
                    .with_local_anchor2(a2)
                    .with_break_force(5000.0);
                if limited {
                    joint = joint.with_swing_limits(0.0, std::f32::consts::PI);
                }
                joints.push(spawn(&mut app, joint));
            };
            if column + 1 < n {
                join(
                    boxes[row * n + column + 1],
                    Vec3::new(0.5, 0.1, 0.0),
                    Vec3::new(-0.5, 0.1, 0.0),
                );
            }
            if row + 1 < n {
                join(
                    boxes[(row + 1) * n + column],
                    Vec3::new(0.0, -0.5, 0.1),
                    Vec3::new(0.0, 0.5, 0.1),
                );
            }
        }
    }
    set(
        &mut app,
        boxes[n * n - 1],
        LinearVelocity(Vec3::new(0.0, 2.0, 3.0)),
    );
    step(&mut app, steps);
    let broken = joints
        .iter()
        .filter(|&&j| app.world().get::<SphericalJoint>(j).unwrap().is_broken())
        .count();
    let poses = boxes
        .iter()
        .map(|&b| (position(&app, b), rotation(&app, b)))
        .collect();
    (poses, broken)
}

#[test]
fn plain_spherical_joints_solved_four_at_a_time_move_bodies_as_the_general_path_does() {
    let (fast, fast_broken) = grid_poses(false, 8, 60);
    let (general, general_broken) = grid_poses(true, 8, 60);
    // The grid really turned, and some joints broke (in a group of four, which then takes
    // the one-at-a-time path) but not all.
    assert!(
        fast.iter()
            .any(|(_, q)| q.angle_between(Quat::IDENTITY) > 0.3)
    );
    assert!(
        (1..20).contains(&fast_broken),
        "{fast_broken} of 112 joints broke"
    );
    assert_eq!(fast_broken, general_broken);
    // Bit for bit, signs of zeros included.
    let bits = |poses: &[(Vec3, Quat)]| -> Vec<[u32; 7]> {
        poses
            .iter()
            .map(|(p, q)| {
                let [x, y, z] = p.to_array();
                [x, y, z, q.x, q.y, q.z, q.w].map(f32::to_bits)
            })
            .collect()
    };
    assert_eq!(bits(&fast), bits(&general), "the two paths differ");
}

/// World distance between the anchors of `joint` after `steps` steps of a cube and a ball
/// spawned with their anchors 0.85 m apart, in the air (a joint added between bodies that
/// are not where it wants them).
fn gap_after(limited: bool, steps: usize) -> f32 {
    let mut app = app();
    let world = app.world_mut();
    let cube = world
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 30.0, 0.0).with_rotation(Quat::from_rotation_z(0.3)),
            AngularVelocity(Vec3::new(0.0, 1.0, 2.0)),
        ))
        .id();
    let ball = world
        .spawn((
            RigidBody::Dynamic,
            Collider::sphere(0.3),
            Transform::from_xyz(1.5, 30.0, 0.0),
            ColliderDensity(500.0),
        ))
        .id();
    let (a1, a2) = (Vec3::new(0.5, 0.5, 0.0), Vec3::new(-0.6, 0.0, 0.0));
    let mut joint = SphericalJoint::new(cube, ball)
        .with_local_anchor1(a1)
        .with_local_anchor2(a2);
    if limited {
        // Wide enough never to bind: only the path taken differs.
        joint = joint.with_swing_limits(0.0, 3.0);
    }
    world.spawn(joint);
    step(&mut app, steps);
    let anchor = |body, arm| position(&app, body) + rotation(&app, body) * arm;
    (anchor(cube, a1) - anchor(ball, a2)).length()
}

#[test]
fn a_joint_spawned_far_from_its_pose_pulls_its_bodies_together() {
    // Rigid XPBD projects the anchors together every substep: sixteen Gauss–Seidel passes
    // (4 substeps × 4) of a Newton-like solve close even a gap that turns the ball by most of
    // a radian down to float rounding at 30 m (f32 spacing 2 µm), and it stays closed while the
    // pair tumbles. Both the fast path and the general (limited) path.
    for limited in [false, true] {
        let (first, later) = (gap_after(limited, 1), gap_after(limited, 10));
        assert!(first < 1e-4, "limited {limited}: {first} m after one step");
        assert!(later < 1e-4, "limited {limited}: {later} m after ten steps");
    }
}

/// Hangs a 1,000 kg, 1 m cube 1 m below a static anchor by a joint of the given kind whose
/// anchors sit at the cube's centre of mass, and returns how far the cube is from that point
/// after 2 s.
fn heavy_hang_error(kind: &str) -> f32 {
    let mut app = app();
    let anchor = spawn(
        &mut app,
        (RigidBody::Static, Transform::from_xyz(0.0, 10.0, 0.0)),
    );
    let cube = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Mass(1000.0),
            Transform::from_xyz(0.0, 9.0, 0.0),
        ),
    );
    let below = Vec3::new(0.0, -1.0, 0.0);
    let world = app.world_mut();
    match kind {
        "spherical" => world.spawn(SphericalJoint::new(anchor, cube).with_local_anchor1(below)),
        "revolute" => world.spawn(RevoluteJoint::new(anchor, cube).with_local_anchor1(below)),
        "fixed" => world.spawn(FixedJoint::new(anchor, cube).with_local_anchor1(below)),
        _ => unreachable!(),
    };
    step(&mut app, 128);
    (position(&app, cube) - Vec3::new(0.0, 9.0, 0.0)).length()
}

/// A 1,000 kg body held at its centre of mass by each point joint kind: its `K` is `1/m` on the
/// diagonal, so `det K = 1e-9`, far below `f32::EPSILON`, although the matrix is perfectly
/// conditioned. Rigid XPBD holds it where it hangs to float rounding at y = 9 m (1 µm
/// spacing; a millimetre allows for the sag of a step's gravity not yet corrected), where a
/// joint that gave up would let it fall 19.6 m in the two seconds.
#[test]
fn joints_hold_heavy_bodies() {
    for kind in ["spherical", "revolute", "fixed"] {
        let error = heavy_hang_error(kind);
        assert!(error < 1e-3, "{kind}: {error} m from the anchor");
    }
}
