//! Sleeping: bodies at rest fall asleep after `time_to_sleep`, and wake when disturbed.

use crate::common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

fn resting_box(app: &mut App) -> Entity {
    ground(app);
    spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 0.55, 0.0),
        ),
    )
}

/// Steps until `e` sleeps, at most `max` steps; returns the steps taken.
fn steps_until_asleep(app: &mut App, e: Entity, max: usize) -> Option<usize> {
    (1..=max).find(|_| {
        app.update();
        is_sleeping(app, e)
    })
}

#[test]
fn resting_body_falls_asleep() {
    let mut app = app();
    let body = resting_box(&mut app);
    let threshold = SleepThreshold::default();
    // Within a few seconds: 3 s = 192 steps.
    let asleep_after =
        steps_until_asleep(&mut app, body, 192).expect("box did not sleep within 3 s");
    // Not before it has been slow for time_to_sleep (0.5 s = 32 steps).
    assert!(
        asleep_after as f32 * DT >= threshold.time_to_sleep,
        "slept after {asleep_after} steps, before time_to_sleep"
    );
    // Sleep zeroes the velocities, and a sleeping body stays exactly where it is.
    assert_eq!(velocity(&app, body), Vec3::ZERO);
    assert_eq!(angular_velocity(&app, body), Vec3::ZERO);
    let p = position(&app, body);
    assert!((p.y - 0.5).abs() <= slop(), "fell asleep at height {}", p.y);
    // Nothing touches it, so it stays asleep, exactly where it is.
    for k in 1..=64 {
        app.update();
        assert!(
            is_sleeping(&app, body),
            "woke up again {k} steps after falling asleep, untouched"
        );
    }
    assert_eq!(position(&app, body), p);
}

#[test]
fn falling_body_does_not_sleep() {
    let mut app = app();
    let body = spawn(&mut app, (RigidBody::Dynamic, Collider::sphere(0.5)));
    for k in 0..64 {
        app.update();
        assert!(
            !is_sleeping(&app, body),
            "fell asleep in free fall at step {k}"
        );
    }
}

#[test]
fn sleeping_disabled_never_sleeps() {
    let mut app = app();
    let body = resting_box(&mut app);
    set(&mut app, body, SleepingDisabled);
    for k in 0..192 {
        app.update();
        assert!(
            !is_sleeping(&app, body),
            "slept at step {k} despite SleepingDisabled"
        );
    }
}

/// A body's rest while sleeping was disabled does not count: once allowed again, it sleeps only
/// after a whole `time_to_sleep` at rest. (With every dynamic body disabled the sleeping stage
/// builds no islands; it must still restart the timers.)
#[test]
fn rest_while_sleeping_is_disabled_does_not_count() {
    let mut app = app();
    let body = resting_box(&mut app);
    let time_to_sleep = SleepThreshold::default().time_to_sleep;
    let steps_to_sleep = (time_to_sleep / DT).ceil() as usize;
    // At rest for most of `time_to_sleep`, then disabled for as long, then allowed again.
    for _ in 0..steps_to_sleep - 4 {
        app.update();
    }
    assert!(!is_sleeping(&app, body), "slept before time_to_sleep");
    set(&mut app, body, SleepingDisabled);
    for _ in 0..steps_to_sleep {
        app.update();
    }
    app.world_mut()
        .entity_mut(body)
        .remove::<SleepingDisabled>();
    let asleep_after =
        steps_until_asleep(&mut app, body, 4 * steps_to_sleep).expect("never slept again");
    assert!(
        asleep_after >= steps_to_sleep,
        "slept {asleep_after} steps after sleeping was allowed again, before time_to_sleep \
         ({steps_to_sleep} steps)"
    );
}

#[test]
fn sleeping_body_wakes_when_hit() {
    let mut app = app();
    let body = resting_box(&mut app);
    steps_until_asleep(&mut app, body, 192).expect("box did not sleep within 3 s");
    // Drop a ball onto it from 2 m above its top face: it arrives after sqrt(2·2/g) = 0.64 s.
    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.25),
            Transform::from_xyz(0.2, 3.25, 0.1),
        ),
    );
    let mut woke = None;
    for k in 0..64 {
        app.update();
        if !is_sleeping(&app, body) {
            woke = Some(k);
            break;
        }
        // Until it wakes, the sleeping box still stops the ball like a static body: at most
        // linear_slop of penetration.
        let gap = position(&app, ball).y - 0.25 - 1.0;
        assert!(gap >= -slop(), "ball sank {} m into the sleeping box", -gap);
    }
    let k = woke.expect("box still asleep 1 s after the ball was dropped on it");
    let gap = position(&app, ball).y - 0.25 - 1.0;
    // Woken by the touch, not before: the ball's bottom is within the speculative margin plus
    // one step of travel at impact speed (sqrt(2 g 2) = 6.3 m/s) of the box's top face.
    assert!(
        gap <= SolverConfig::default().speculative_distance() + 6.3 * DT,
        "box woke at step {k} while the ball was still {gap} m above it (nothing touched it)"
    );
    // And the pile settles and sleeps again.
    let both_asleep = (0..192).any(|_| {
        app.update();
        is_sleeping(&app, body) && is_sleeping(&app, ball)
    });
    assert!(
        both_asleep,
        "box and ball did not fall asleep again within 3 s"
    );
}

#[test]
fn sleeping_body_wakes_when_its_velocity_is_set() {
    let mut app = app();
    let body = resting_box(&mut app);
    steps_until_asleep(&mut app, body, 192).expect("box did not sleep within 3 s");
    set(&mut app, body, LinearVelocity(Vec3::new(0.0, 3.0, 0.0)));
    app.update();
    assert!(
        !is_sleeping(&app, body),
        "setting the velocity did not wake the body"
    );
    // And it actually moved up this step (3 m/s × 1/64 s minus gravity's share).
    assert!(
        position(&app, body).y > 0.5 + 0.04,
        "did not move: y = {}",
        position(&app, body).y
    );
}

#[test]
fn sleeping_body_wakes_when_support_is_removed() {
    // A box sleeping on another box falls when the lower one is despawned.
    let mut app = app();
    ground(&mut app);
    let lower = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 0.5, 0.0),
        ),
    );
    let upper = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 1.5, 0.0),
        ),
    );
    steps_until_asleep(&mut app, upper, 192).expect("stack did not sleep within 3 s");
    assert!(is_sleeping(&app, lower));
    app.world_mut().despawn(lower);
    step(&mut app, 32);
    assert!(
        !is_sleeping(&app, upper),
        "upper box kept sleeping in mid-air"
    );
    // After falling for a while it lands on the ground: 1 m drop, done in 0.45 s.
    assert!(
        position(&app, upper).y < 0.5 + slop(),
        "upper box still at {}",
        position(&app, upper).y
    );
}

/// A heavy ball fired into a stack of three cubes that has fallen asleep hands its momentum on,
/// as it does into an awake stack: the sleeper it is about to hit wakes before the step that
/// solves the impact. Over the first six steps (the impact is in the fourth) only the ground's
/// friction on the bottom cube can take horizontal momentum away, at most `μ m g t`.
#[test]
fn a_body_hitting_a_sleeping_stack_hands_on_its_momentum() {
    let mut app = app();
    ground(&mut app);
    let cubes = cube_column(&mut app, 3, ());
    step(&mut app, 120);
    assert!(
        cubes
            .iter()
            .all(|&c| app.world().get::<Sleeping>(c).is_some())
    );
    let speed = 35.0;
    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.4),
            ColliderDensity(3000.0),
            Transform::from_xyz(-3.0, 0.5, 0.0),
            LinearVelocity(Vec3::X * speed),
            GravityScale(0.0),
        ),
    );
    let ball_mass = 3000.0 * 4.0 / 3.0 * std::f32::consts::PI * 0.4f32.powi(3);
    let steps = 6;
    step(&mut app, steps);
    let momentum: f32 = std::iter::once(ball)
        .chain(cubes.iter().copied())
        .map(|e| {
            let mass = if e == ball { ball_mass } else { 1000.0 };
            mass * velocity(&app, e).x
        })
        .sum();
    let initial = ball_mass * speed;
    let friction = 0.5 * 3000.0 * 9.81 * steps as f32 * DT;
    assert!(
        velocity(&app, ball).x < speed * 0.9,
        "the ball has not hit yet"
    );
    assert!(
        momentum > initial - friction - 0.01 * initial && momentum < initial * 1.01,
        "momentum {momentum}, started with {initial} (friction may take {friction})"
    );
}

/// A sleep or wake message, with the physics step that sent it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Activation {
    Asleep(Entity),
    Woke(Entity),
}

/// Every `BodyFellAsleep` and `BodyWoke` message so far, in the order sent, with its step.
#[derive(Resource, Default)]
struct Activations(Vec<(u64, Activation)>);

fn record_activations(app: &mut App) {
    app.init_resource::<Activations>()
        .add_systems(PostUpdate, record_activation_messages);
}

fn record_activation_messages(
    mut log: ResMut<Activations>,
    mut asleep: MessageReader<BodyFellAsleep>,
    mut woke: MessageReader<BodyWoke>,
    time: Res<PhysicsStepTime>,
) {
    let step = time.step_count;
    // One of the two kinds per body and step, so sending them kind by kind loses no order
    // the tests check.
    (log.0).extend(asleep.read().map(|m| (step, Activation::Asleep(m.body))));
    (log.0).extend(woke.read().map(|m| (step, Activation::Woke(m.body))));
}

fn activations(app: &App) -> Vec<(u64, Activation)> {
    app.world().resource::<Activations>().0.clone()
}

/// A box settling on the ground sends one `BodyFellAsleep`, in the step it gets `Sleeping`, and
/// nothing while it sleeps; a ball dropped on it wakes it with one `BodyWoke`, in the step the
/// box loses `Sleeping`. That is the step the ball hits (the first whose end velocity of the
/// ball departs from free fall, `g k dt` after `k` steps of substepped semi-implicit Euler, see
/// free_fall.rs) or the one before: the box wakes as soon as the narrow phase finds contact
/// points, and speculative points reach up to one step of travel ahead of the surfaces.
#[test]
fn settling_sends_one_fell_asleep_and_a_hit_one_woke() {
    let mut app = app();
    record_activations(&mut app);
    let body = resting_box(&mut app);
    steps_until_asleep(&mut app, body, 192).expect("box did not sleep");
    let asleep_at = steps(&app);
    step(&mut app, 32);
    assert_eq!(
        activations(&app),
        vec![(asleep_at, Activation::Asleep(body))],
        "one message, in the step the box fell asleep"
    );

    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.25),
            Transform::from_xyz(0.2, 3.25, 0.1),
        ),
    );
    let dropped_at = steps(&app);
    let (mut hit_at, mut woke_at) = (None, None);
    for k in 1..=64u64 {
        app.update();
        if woke_at.is_none() && !is_sleeping(&app, body) {
            woke_at = Some(steps(&app));
        }
        // Free fall, up to the rounding of 4 k velocity updates (each ≤ ½ ulp(8 m/s) =
        // 4.8e-7 m/s): at most 1.2e-4 m/s in the 64 steps.
        let free_fall = -g() * k as f32 * DT;
        if (velocity(&app, ball).y - free_fall).abs() > 1e-3 {
            hit_at = Some(steps(&app));
            break;
        }
    }
    let hit_at = hit_at.expect("the ball never hit the box");
    let woke_at = woke_at.expect("the box did not wake");
    assert!(
        woke_at == hit_at || woke_at + 1 == hit_at,
        "woke at step {woke_at}, hit at {hit_at}"
    );
    step(&mut app, 8);
    let since_drop: Vec<_> = (activations(&app).into_iter())
        .filter(|&(step, _)| step > dropped_at)
        .collect();
    assert_eq!(
        since_drop,
        vec![(woke_at, Activation::Woke(body))],
        "one wake message, in the step the box woke"
    );
}

/// Bodies falling asleep or waking in one step are reported in creation order, however their
/// `Entity` values and archetypes are ordered: two worlds spawn the same boxes (at positions
/// in a scrambled order) after churning entities differently and tagging other boxes with a
/// component of their own, and send the same messages, by creation index.
#[test]
fn activation_messages_follow_creation_order() {
    #[derive(Component)]
    struct Tag;
    let run = |churn: usize, tag_every: usize| {
        let mut app = app();
        record_activations(&mut app);
        let world = app.world_mut();
        let churned: Vec<Entity> = (0..churn).map(|_| world.spawn_empty().id()).collect();
        for (i, &e) in churned.iter().enumerate() {
            if i % 3 != 1 {
                world.despawn(e);
            }
        }
        ground(&mut app);
        let slots = [7, 2, 9, 0, 4, 11, 5, 1, 10, 3, 8, 6];
        let boxes: Vec<Entity> = (slots.iter().enumerate())
            .map(|(i, &slot)| {
                let cube = spawn(
                    &mut app,
                    (
                        RigidBody::Dynamic,
                        Collider::cuboid(1.0, 1.0, 1.0),
                        Transform::from_xyz(2.0 * slot as f32 - 11.0, 0.5, 0.0),
                    ),
                );
                if i % tag_every == 0 {
                    set(&mut app, cube, Tag);
                }
                cube
            })
            .collect();
        step(&mut app, 128);
        assert!(boxes.iter().all(|&b| is_sleeping(&app, b)));
        // Wake them all by the user, in reverse creation order.
        for &b in boxes.iter().rev() {
            set(&mut app, b, LinearVelocity(Vec3::Y));
        }
        step(&mut app, 1);
        let index = |e: Entity| boxes.iter().position(|&b| b == e).unwrap();
        let log: Vec<_> = (activations(&app).into_iter())
            .map(|(step, a)| match a {
                Activation::Asleep(e) => (step, false, index(e)),
                Activation::Woke(e) => (step, true, index(e)),
            })
            .collect();
        (log, boxes.len())
    };
    let (plain, count) = run(0, usize::MAX);
    let (scrambled, _) = run(40, 2);
    assert_eq!(plain, scrambled, "the same messages in the same order");
    // Each box once asleep and once woken, and within each step in creation order.
    assert_eq!(plain.len(), 2 * count, "{plain:?}");
    for pair in plain.windows(2) {
        let ((s1, w1, i1), (s2, w2, i2)) = (pair[0], pair[1]);
        assert!(
            (s1, w1) != (s2, w2) || i1 < i2,
            "not in creation order: {pair:?}"
        );
    }
}

/// Every way of waking a sleeping body sends one `BodyWoke` (in the next step for changes made
/// between steps); what is not a change of state sends nothing: `Sleeping` removed from a body
/// at rest whose sleep timer has run out (it falls asleep again in the same step), a body
/// spawned asleep, a sleeping body despawned, a snapshot restore.
#[test]
fn each_way_of_waking_sends_one_woke() {
    type Poke = fn(&mut App, Entity);
    let pokes: [(&str, Poke); 6] = [
        ("velocity", |app, e| set(app, e, LinearVelocity(Vec3::X))),
        ("force", |app, e| set(app, e, ConstantForce(Vec3::X))),
        ("impulse", |app, e| {
            set(app, e, ExternalImpulse::new(Vec3::X))
        }),
        ("pose", |app, e| {
            set(app, e, Transform::from_xyz(0.0, 0.6, 0.0));
        }),
        ("Sleeping removed, timer restarted", |app, e| {
            app.world_mut().entity_mut(e).remove::<Sleeping>();
            set(app, e, impetus3d::body::SleepTimer(0.0));
        }),
        ("joint", |app, e| {
            let other = spawn(app, (RigidBody::Dynamic, Collider::sphere(0.2)));
            set(app, other, Transform::from_xyz(0.0, 3.0, 0.0));
            spawn(app, DistanceJoint::new(e, other));
        }),
    ];
    for (what, poke) in pokes {
        let mut app = app();
        record_activations(&mut app);
        let body = resting_box(&mut app);
        steps_until_asleep(&mut app, body, 192).expect("box did not sleep");
        let poked_at = steps(&app);
        poke(&mut app, body);
        step(&mut app, 1);
        let woke: Vec<_> = (activations(&app).into_iter())
            .filter(|&(_, a)| a == Activation::Woke(body))
            .collect();
        assert_eq!(woke, vec![(poked_at + 1, Activation::Woke(body))], "{what}");
    }

    // Only `Sleeping` removed: simulated for a step, still at rest, asleep again at its end.
    let mut app = app();
    record_activations(&mut app);
    let body = resting_box(&mut app);
    steps_until_asleep(&mut app, body, 192).expect("box did not sleep");
    let before = activations(&app);
    app.world_mut().entity_mut(body).remove::<Sleeping>();
    step(&mut app, 1);
    assert!(is_sleeping(&app, body));
    assert_eq!(activations(&app), before);

    // Spawned asleep: never awake, so no message; despawned while asleep: none either.
    let mut app = common::app();
    record_activations(&mut app);
    ground(&mut app);
    let sleeper = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 0.5, 0.0),
            Sleeping,
        ),
    );
    step(&mut app, 4);
    assert!(is_sleeping(&app, sleeper));
    app.world_mut().despawn(sleeper);
    step(&mut app, 4);
    assert!(activations(&app).is_empty(), "{:?}", activations(&app));

    // A restore that puts `Sleeping` back (or takes it away) sends nothing.
    let body = resting_box(&mut app);
    let snapshot = PhysicsSnapshot::capture(app.world_mut());
    steps_until_asleep(&mut app, body, 192).expect("box did not sleep");
    let before = activations(&app).len();
    snapshot.restore(app.world_mut());
    step(&mut app, 1);
    assert!(!is_sleeping(&app, body));
    assert_eq!(activations(&app).len(), before, "{:?}", activations(&app));
}

/// With `SleepEventsEnabled`, observers on the body see each change once, after the message.
#[test]
fn sleep_observers_run_once_per_change_on_opted_in_bodies() {
    #[derive(Resource, Default)]
    struct Seen(Vec<&'static str>);
    let mut app = app();
    app.init_resource::<Seen>();
    let observed = resting_box(&mut app);
    let plain = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(3.0, 0.55, 0.0),
        ),
    );
    set(&mut app, observed, SleepEventsEnabled);
    for (e, name) in [(observed, "observed"), (plain, "plain")] {
        app.world_mut()
            .entity_mut(e)
            .observe(move |_: On<BodyFellAsleep>, mut seen: ResMut<Seen>| {
                seen.0.push(name);
            })
            .observe(move |_: On<BodyWoke>, mut seen: ResMut<Seen>| {
                seen.0.push(name);
            });
    }
    steps_until_asleep(&mut app, observed, 192).expect("box did not sleep");
    step(&mut app, 4);
    set(&mut app, observed, LinearVelocity(Vec3::Y));
    set(&mut app, plain, LinearVelocity(Vec3::Y));
    step(&mut app, 2);
    assert_eq!(
        app.world().resource::<Seen>().0,
        vec!["observed", "observed"]
    );
}
