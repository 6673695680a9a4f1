//! The scenes, each one function over [`Scene`]'s primitives, and [`SceneKind`], the timed
//! ones with their timing windows.

use bevy::math::{Quat, UVec3, Vec3};

use crate::{BodyDef, Engine, JointDef, JointKind, Motion, Scene, Shape};

/// The ground of the pyramid (base 20), the piles and the ragdolls: 200 × 1 × 200 m.
pub const GROUND: Vec3 = Vec3::new(200.0, 1.0, 200.0);

/// The ground of the large pyramid (base 100), as in Box3D's benchmark: 400 × 2 × 400 m.
pub const LARGE_GROUND: Vec3 = Vec3::new(400.0, 2.0, 400.0);

/// A static box of full size `size` centred on the y axis whose top face is at y = 0.
fn ground(scene: &mut Scene, size: Vec3) {
    let position = Vec3::new(0.0, -0.5 * size.y, 0.0);
    scene.add(BodyDef::new(
        Motion::Static,
        Shape::Cuboid(0.5 * size),
        position,
    ));
}

/// A dynamic unit cube.
fn cube(scene: &mut Scene, position: Vec3) -> usize {
    let shape = Shape::Cuboid(Vec3::splat(0.5));
    scene.add(BodyDef::new(Motion::Dynamic, shape, position))
}

/// A ball, static or dynamic, colliding with everything or with nothing.
fn ball(scene: &mut Scene, position: Vec3, radius: f32, dynamic: bool, collides: bool) -> usize {
    let motion = if dynamic {
        Motion::Dynamic
    } else {
        Motion::Static
    };
    scene.add(BodyDef {
        collides,
        ..BodyDef::new(motion, Shape::Ball(radius), position)
    })
}

/// A fixed pseudo-random sequence (xorshift), the same in every engine and on every machine.
struct Random(u32);

impl Random {
    /// A number in `[0, 1)`.
    fn unit(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        (self.0 >> 8) as f32 / (1u32 << 24) as f32
    }

    /// A number in `[a, b)`.
    fn range(&mut self, a: f32, b: f32) -> f32 {
        a + (b - a) * self.unit()
    }

    /// A rotation, not uniformly distributed but varied.
    fn rotation(&mut self) -> Quat {
        let tau = std::f32::consts::TAU;
        Quat::from_euler(
            bevy::math::EulerRot::YXZ,
            self.range(0.0, tau),
            self.range(0.0, tau),
            self.range(0.0, tau),
        )
    }
}

/// Scenes 1 and 2: a one-layer pyramid of `base` rows of unit cubes (rows of `base`, `base` − 1,
/// …, 1: 210 cubes for a base of 20, 5050 for a base of 100) on a static `ground` box (full size,
/// top face at y = 0), symmetric about x = 0, in the plane z = 0, cubes exactly touching. The
/// last body is the top cube.
pub fn pyramid(engine: Engine, base: usize, ground_size: Vec3) -> Scene {
    let mut scene = Scene::empty(engine);
    ground(&mut scene, ground_size);
    for row in 0..base {
        let count = base - row;
        for i in 0..count {
            let position = Vec3::new(i as f32 - 0.5 * (count - 1) as f32, 0.5 + row as f32, 0.0);
            cube(&mut scene, position);
        }
    }
    scene
}

/// Box3D's many-pyramids benchmark: `n × n` one-layer pyramids of `base` rows of unit cubes
/// (each as in [`pyramid`]), `spacing` m apart on the x–z grid around the origin, on the
/// 200 × 1 × 200 m [`GROUND`]: 8 × 8 pyramids of base 8 are 2,304 cubes in 64 separate stacks.
pub fn many_pyramids(engine: Engine, n: usize, base: usize, spacing: f32) -> Scene {
    let mut scene = Scene::empty(engine);
    ground(&mut scene, GROUND);
    let offset = 0.5 * (n - 1) as f32 * spacing;
    for i in 0..n {
        for k in 0..n {
            let centre = Vec3::new(
                i as f32 * spacing - offset,
                0.0,
                k as f32 * spacing - offset,
            );
            for row in 0..base {
                let count = base - row;
                for c in 0..count {
                    let x = c as f32 - 0.5 * (count - 1) as f32;
                    cube(&mut scene, centre + Vec3::new(x, 0.5 + row as f32, 0.0));
                }
            }
        }
    }
    scene
}

/// Scene 3: an `n × n × n` grid of unit cubes `spacing` m apart, its bottom layer's centres
/// 3.5 m above the [`GROUND`], dropped.
pub fn pile(engine: Engine, n: usize, spacing: f32) -> Scene {
    let mut scene = Scene::empty(engine);
    ground(&mut scene, GROUND);
    let offset = 0.5 * (n - 1) as f32 * spacing;
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                let position = Vec3::new(
                    i as f32 * spacing - offset,
                    3.5 + j as f32 * spacing,
                    k as f32 * spacing - offset,
                );
                cube(&mut scene, position);
            }
        }
    }
    scene
}

/// Scene 4: an `n × n` grid of balls (radius 0.4 m, 1 m apart in the vertical x–y plane,
/// colliding with nothing), each joined to its right and lower neighbours by a spherical joint
/// with anchors ±0.5 m; the two top corners are static; no ground.
pub fn joint_grid(engine: Engine, n: usize) -> Scene {
    let mut scene = Scene::empty(engine);
    let mut balls = Vec::with_capacity(n * n);
    for row in 0..n {
        for column in 0..n {
            let corner = row == 0 && (column == 0 || column == n - 1);
            let position = Vec3::new(column as f32, -(row as f32), 0.0);
            balls.push(ball(&mut scene, position, 0.4, !corner, false));
        }
    }
    for row in 0..n {
        for column in 0..n {
            let here = balls[row * n + column];
            let mut join = |other: usize, anchor_a: Vec3| {
                scene.join(JointDef {
                    kind: JointKind::Spherical,
                    a: here,
                    b: other,
                    anchor_a,
                    anchor_b: -anchor_a,
                });
            };
            if column + 1 < n {
                join(balls[row * n + column + 1], Vec3::new(0.5, 0.0, 0.0));
            }
            if row + 1 < n {
                join(balls[(row + 1) * n + column], Vec3::new(0.0, -0.5, 0.0));
            }
        }
    }
    scene
}

/// Scene 5: `links` balls (radius 0.25 m, colliding normally) whose centres are 1 m apart straight
/// below a static anchor body at the origin, each joined to the one above (the first to the
/// anchor) by a spherical joint with anchors ±0.5 m; no ground. With `kick`, the last link
/// starts at 5 m/s sideways so the chain keeps swinging (the timing scene); without, it hangs
/// at rest (the stretch measurement).
pub fn chain(engine: Engine, links: usize, kick: bool) -> Scene {
    let mut scene = Scene::empty(engine);
    let anchor = scene.add(BodyDef {
        shape: None,
        ..BodyDef::new(Motion::Static, Shape::Ball(0.0), Vec3::ZERO)
    });
    scene.anchor = Some(anchor);
    let mut previous = anchor;
    let up = Vec3::new(0.0, 0.5, 0.0);
    for i in 0..links {
        let position = Vec3::new(0.0, -(i as f32 + 1.0), 0.0);
        let mut link = BodyDef::new(Motion::Dynamic, Shape::Ball(0.25), position);
        if kick && i == links - 1 {
            link.linear_velocity = Vec3::new(5.0, 0.0, 0.0);
        }
        let link = scene.add(link);
        scene.join(JointDef {
            kind: JointKind::Spherical,
            a: previous,
            b: link,
            anchor_a: -up,
            anchor_b: up,
        });
        previous = link;
    }
    scene
}

/// Height of the lowest layer of [`free_balls`], m.
pub const FREE_BALLS_BOTTOM: f32 = 10.0;

/// Scene 6: a 3D grid of `counts.x × counts.y × counts.z` dynamic balls of radius 0.5 m,
/// colliding normally, `spacing` m apart (centre to centre) with the lowest layer's centres at
/// [`FREE_BALLS_BOTTOM`], no ground: all fall freely under gravity, side by side, and never
/// touch. What it costs is the per-body work of a step: integration, broad-phase updates,
/// writing poses back.
pub fn free_balls(engine: Engine, counts: UVec3, spacing: f32) -> Scene {
    let mut scene = Scene::empty(engine);
    let centre = 0.5 * (counts.as_vec3() - Vec3::ONE) * spacing;
    for i in 0..counts.x {
        for j in 0..counts.y {
            for k in 0..counts.z {
                let position = Vec3::new(
                    i as f32 * spacing - centre.x,
                    FREE_BALLS_BOTTOM + j as f32 * spacing,
                    k as f32 * spacing - centre.z,
                );
                ball(&mut scene, position, 0.5, true, true);
            }
        }
    }
    scene
}

/// The `index`-th shape of a mixed set, 0.7–1.1 m across and within 0.55 m of its origin: a box, a ball, a capsule, a
/// cylinder or a convex hull (a rock of 12 points), in turn.
fn mixed_shape(index: usize, random: &mut Random) -> Shape {
    match index % 5 {
        0 => Shape::Cuboid(Vec3::new(0.35, 0.3, 0.3)),
        1 => Shape::Ball(0.45),
        2 => Shape::Capsule {
            half_height: 0.25,
            radius: 0.3,
        },
        3 => Shape::Cylinder {
            half_height: 0.3,
            radius: 0.35,
        },
        _ => Shape::Hull(rock(random)),
    }
}

/// 12 points about 0.45 m from the origin in directions spread over the sphere (a golden-angle
/// spiral), each at its own radius.
fn rock(random: &mut Random) -> Vec<Vec3> {
    const POINTS: usize = 12;
    (0..POINTS)
        .map(|i| {
            let y = 1.0 - 2.0 * (i as f32 + 0.5) / POINTS as f32;
            let ring = (1.0 - y * y).sqrt();
            let angle = i as f32 * 2.399_963;
            let direction = Vec3::new(ring * angle.cos(), y, ring * angle.sin());
            direction * random.range(0.35, 0.5)
        })
        .collect()
}

/// Half the inside width of the [`mixed_pile`]'s box, m.
pub const BIN_HALF_WIDTH: f32 = 8.0;

/// The points of an `n × n × n` lattice `spacing` apart, centred on the y axis with its bottom
/// layer at height `bottom`, layer by layer from the bottom.
fn lattice(n: usize, spacing: f32, bottom: f32) -> impl Iterator<Item = Vec3> {
    let offset = 0.5 * (n - 1) as f32 * spacing;
    (0..n).flat_map(move |j| {
        (0..n).flat_map(move |i| {
            (0..n).map(move |k| {
                Vec3::new(
                    i as f32 * spacing - offset,
                    bottom + j as f32 * spacing,
                    k as f32 * spacing - offset,
                )
            })
        })
    })
}

/// A dynamic body of `shape` at `position`, turned by `rotation`.
fn tumbling(shape: Shape, position: Vec3, rotation: Quat) -> BodyDef {
    BodyDef {
        rotation,
        ..BodyDef::new(Motion::Dynamic, shape, position)
    }
}

/// Mixed shapes in a bin: `n³` bodies (boxes, balls, capsules, cylinders, hulls in turn, each
/// turned its own way) on a 1.2 m lattice whose bottom layer is 2 m up, dropped into a box of
/// 16 × 16 m inside with walls 12 m high.
pub fn mixed_pile(engine: Engine, n: usize) -> Scene {
    let mut scene = Scene::empty(engine);
    ground(&mut scene, GROUND);
    let (half, height, thickness) = (BIN_HALF_WIDTH, 12.0, 0.5);
    for (centre, size) in [
        (Vec3::X, Vec3::new(thickness, height, 2.0 * half)),
        (Vec3::NEG_X, Vec3::new(thickness, height, 2.0 * half)),
        (Vec3::Z, Vec3::new(2.0 * half, height, thickness)),
        (Vec3::NEG_Z, Vec3::new(2.0 * half, height, thickness)),
    ] {
        let position = centre * (half + 0.5 * thickness) + Vec3::Y * 0.5 * height;
        scene.add(BodyDef::new(
            Motion::Static,
            Shape::Cuboid(0.5 * size),
            position,
        ));
    }
    let mut random = Random(0x2545_f491);
    for (index, position) in lattice(n, 1.2, 2.0).enumerate() {
        let shape = mixed_shape(index, &mut random);
        scene.add(tumbling(shape, position, random.rotation()));
    }
    scene
}

/// Rolling hills: `CELLS × CELLS` cells of [`CELL`] m, centred on the origin.
pub struct Terrain;

impl Terrain {
    /// Cells along each side.
    pub const CELLS: usize = 40;
    /// Cell width, m.
    pub const CELL: f32 = 2.0;

    /// Half the terrain's width, m.
    pub fn half_width() -> f32 {
        0.5 * Self::CELLS as f32 * Self::CELL
    }

    /// The height of the grid vertex in column `i` (x) and row `j` (z), m.
    fn vertex_height(i: usize, j: usize) -> f32 {
        let (x, z) = (i as f32 * Self::CELL, j as f32 * Self::CELL);
        1.5 * (0.21 * x).sin() * (0.17 * z).cos() + 0.6 * (0.5 * x + 0.3 * z).sin()
    }

    /// The mesh: vertices and counter-clockwise (seen from above) triangles, two per cell,
    /// split along the cell's (i, j)–(i + 1, j + 1) diagonal.
    pub fn mesh() -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let n = Self::CELLS + 1;
        let half = Self::half_width();
        let vertices = (0..n)
            .flat_map(|j| (0..n).map(move |i| (i, j)))
            .map(|(i, j)| {
                Vec3::new(
                    i as f32 * Self::CELL - half,
                    Self::vertex_height(i, j),
                    j as f32 * Self::CELL - half,
                )
            })
            .collect();
        let at = |i: usize, j: usize| (j * n + i) as u32;
        let triangles = (0..Self::CELLS)
            .flat_map(|j| (0..Self::CELLS).map(move |i| (i, j)))
            .flat_map(|(i, j)| {
                [
                    [at(i, j), at(i + 1, j + 1), at(i + 1, j)],
                    [at(i, j), at(i, j + 1), at(i + 1, j + 1)],
                ]
            })
            .collect();
        (vertices, triangles)
    }

    /// The surface's height above (x, z), on the mesh's own triangles; `None` off the terrain.
    pub fn height_at(x: f32, z: f32) -> Option<f32> {
        let half = Self::half_width();
        let (u, v) = ((x + half) / Self::CELL, (z + half) / Self::CELL);
        if !(0.0..Self::CELLS as f32).contains(&u) || !(0.0..Self::CELLS as f32).contains(&v) {
            return None;
        }
        let (i, j) = (u as usize, v as usize);
        let (fu, fv) = (u - i as f32, v - j as f32);
        let h = |di, dj| Self::vertex_height(i + di, j + dj);
        // Below the diagonal (fu ≥ fv): the triangle (0,0), (1,1), (1,0); above it the other.
        Some(if fu >= fv {
            h(0, 0) + fu * (h(1, 0) - h(0, 0)) + fv * (h(1, 1) - h(1, 0))
        } else {
            h(0, 0) + fv * (h(0, 1) - h(0, 0)) + fu * (h(1, 1) - h(0, 1))
        })
    }
}

/// Rolling hills as a heightfield: `SAMPLES × SAMPLES` heights over `WIDTH × WIDTH` m centred
/// on the origin. The height function is even in x and z and symmetric between them, so every
/// engine's grid gives the same surface whichever way it orders rows and columns.
pub struct Hills;

impl Hills {
    /// Grid points along each side.
    pub const SAMPLES: usize = 41;
    /// The field's width along x and z, m.
    pub const WIDTH: f32 = 80.0;

    fn height(x: f32, z: f32) -> f32 {
        1.2 * ((0.25 * x).cos() + (0.25 * z).cos()) + 0.5 * (0.6 * x).cos() * (0.6 * z).cos()
    }

    /// The grid coordinate of sample `i` along x or z.
    fn coordinate(i: usize) -> f32 {
        i as f32 * Self::WIDTH / (Self::SAMPLES - 1) as f32 - 0.5 * Self::WIDTH
    }

    /// The heightfield shape.
    pub fn shape() -> Shape {
        let n = Self::SAMPLES;
        let heights = (0..n)
            .flat_map(|row| (0..n).map(move |column| (row, column)))
            .map(|(row, column)| Self::height(Self::coordinate(column), Self::coordinate(row)))
            .collect();
        Shape::Heightfield {
            heights,
            samples: n,
            size: Vec3::new(Self::WIDTH, 1.0, Self::WIDTH),
        }
    }

    /// The lowest corner of the grid cell above (x, z), whichever way an engine splits the cell
    /// into triangles; `None` off the field.
    pub fn lowest_corner(x: f32, z: f32) -> Option<f32> {
        let cell = Self::WIDTH / (Self::SAMPLES - 1) as f32;
        let (u, v) = (
            (x + 0.5 * Self::WIDTH) / cell,
            (z + 0.5 * Self::WIDTH) / cell,
        );
        let last = (Self::SAMPLES - 1) as f32;
        if !(0.0..last).contains(&u) || !(0.0..last).contains(&v) {
            return None;
        }
        let (i, j) = (u as usize, v as usize);
        let corners = [(i, j), (i + 1, j), (i, j + 1), (i + 1, j + 1)];
        corners
            .iter()
            .map(|&(i, j)| Self::height(Self::coordinate(i), Self::coordinate(j)))
            .reduce(f32::min)
    }
}

/// Mixed shapes dropped on `ground` 2 m apart, `n × n` of them, 8.5 m up.
fn mixed_on(engine: Engine, ground: Shape, n: usize, seed: u32) -> Scene {
    let mut scene = Scene::empty(engine);
    scene.add(BodyDef::new(Motion::Static, ground, Vec3::ZERO));
    let mut random = Random(seed);
    let offset = 0.5 * (n - 1) as f32 * 2.0;
    for i in 0..n {
        for k in 0..n {
            let position = Vec3::new(i as f32 * 2.0 - offset, 8.5, k as f32 * 2.0 - offset);
            let shape = mixed_shape(i * n + k, &mut random);
            scene.add(tumbling(shape, position, random.rotation()));
        }
    }
    scene
}

/// Mixed shapes on a heightfield ([`Hills`]): as [`mesh_terrain`], on a heightfield.
pub fn heightfield_terrain(engine: Engine, n: usize) -> Scene {
    mixed_on(engine, Hills::shape(), n, 0x68e3_1da4)
}

/// Mixed shapes on a triangle-mesh terrain ([`Terrain`]): `n × n` bodies (boxes, balls,
/// capsules, cylinders, hulls in turn, each turned its own way) 2 m apart, 6 m above the
/// terrain's highest point, dropped.
pub fn mesh_terrain(engine: Engine, n: usize) -> Scene {
    let (vertices, triangles) = Terrain::mesh();
    let mesh = Shape::Trimesh {
        vertices,
        triangles,
    };
    mixed_on(engine, mesh, n, 0x9e37_79b9)
}

/// A joint of a ragdoll: the two parts' indices, the joint point, the kind of joint.
type RagdollJoint = (usize, usize, Vec3, JointKind);

/// One ragdoll's parts in its own frame, standing with its feet at y = 0 and facing +z: the
/// shape and centre of each, then the joints (part indices, the joint point, and the hinge
/// axis for a revolute joint). Parts that are not joined do not touch.
fn ragdoll_parts() -> (Vec<(Shape, Vec3)>, Vec<RagdollJoint>) {
    let capsule = |half_height, radius| Shape::Capsule {
        half_height,
        radius,
    };
    let parts = vec![
        (
            Shape::Cuboid(Vec3::new(0.18, 0.3, 0.1)),
            Vec3::new(0.0, 1.25, 0.0),
        ), // 0 torso
        (Shape::Ball(0.12), Vec3::new(0.0, 1.69, 0.0)), // 1 head
        (capsule(0.1, 0.055), Vec3::new(-0.27, 1.36, 0.0)), // 2 left upper arm
        (capsule(0.1, 0.05), Vec3::new(-0.27, 1.03, 0.0)), // 3 left forearm
        (capsule(0.1, 0.055), Vec3::new(0.27, 1.36, 0.0)), // 4 right upper arm
        (capsule(0.1, 0.05), Vec3::new(0.27, 1.03, 0.0)), // 5 right forearm
        (capsule(0.12, 0.07), Vec3::new(-0.1, 0.58, 0.0)), // 6 left thigh
        (capsule(0.1, 0.06), Vec3::new(-0.1, 0.2, 0.0)), // 7 left shin
        (capsule(0.12, 0.07), Vec3::new(0.1, 0.58, 0.0)), // 8 right thigh
        (capsule(0.1, 0.06), Vec3::new(0.1, 0.2, 0.0)), // 9 right shin
        (
            Shape::Cuboid(Vec3::new(0.17, 0.07, 0.09)),
            Vec3::new(0.0, 0.87, 0.0),
        ), // 10 pelvis
    ];
    let hinge = JointKind::Revolute(Vec3::X);
    let ball = JointKind::Spherical;
    let joints = vec![
        (0, 1, Vec3::new(0.0, 1.56, 0.0), ball),    // neck
        (0, 2, Vec3::new(-0.27, 1.53, 0.0), ball),  // left shoulder
        (2, 3, Vec3::new(-0.27, 1.19, 0.0), hinge), // left elbow
        (0, 4, Vec3::new(0.27, 1.53, 0.0), ball),   // right shoulder
        (4, 5, Vec3::new(0.27, 1.19, 0.0), hinge),  // right elbow
        (0, 10, Vec3::new(0.0, 0.945, 0.0), ball),  // waist
        (10, 6, Vec3::new(-0.1, 0.785, 0.0), ball), // left hip
        (6, 7, Vec3::new(-0.1, 0.375, 0.0), hinge), // left knee
        (10, 8, Vec3::new(0.1, 0.785, 0.0), ball),  // right hip
        (8, 9, Vec3::new(0.1, 0.375, 0.0), hinge),  // right knee
    ];
    (parts, joints)
}

/// Ragdolls dropped in a pile: `count` ragdolls of 11 parts (a box torso and pelvis, a ball
/// head, capsule limbs; spherical neck, waist, shoulders and hips, revolute elbows and knees,
/// none limited) lying on their backs in layers of 16 (4 × 4, 0.9 m apart side by side and
/// 2 m head to foot), each layer turned a quarter turn from the one below, the layers 0.6 m
/// apart, the lowest 1 m up.
pub fn ragdolls(engine: Engine, count: usize) -> Scene {
    let mut scene = Scene::empty(engine);
    ground(&mut scene, GROUND);
    let (parts, joints) = ragdoll_parts();
    for doll in 0..count {
        let (layer, slot) = (doll / 16, doll % 16);
        let across = (slot % 4) as f32 * 0.9 - 1.35;
        let along = (slot / 4) as f32 * 2.0 - 3.0;
        let quarter = Quat::from_rotation_y(layer as f32 * std::f32::consts::FRAC_PI_2);
        let centre = Vec3::Y * (1.0 + layer as f32 * 0.6) + quarter * Vec3::new(across, 0.0, along);
        // On its back (head towards −z before the quarter turns), about its middle.
        let turn = quarter * Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2);
        let place = |local: Vec3| centre + turn * (local - Vec3::Y * 0.9);
        let bodies: Vec<usize> = parts
            .iter()
            .map(|(shape, at)| scene.add(tumbling(shape.clone(), place(*at), turn)))
            .collect();
        for &(a, b, point, kind) in &joints {
            scene.join(JointDef {
                kind,
                a: bodies[a],
                b: bodies[b],
                anchor_a: point - parts[a].1,
                anchor_b: point - parts[b].1,
            });
        }
    }
    scene
}

/// A table (a top on four legs) or a chair (a seat on four legs, with a back): boxes of one
/// body, about its centre.
fn furniture(index: usize) -> Shape {
    let leg = |x: f32, z: f32, half_height: f32, half_width: f32| {
        (
            Vec3::new(x, -half_height, z),
            Vec3::new(half_width, half_height, half_width),
        )
    };
    if index.is_multiple_of(2) {
        let mut boxes = vec![(Vec3::new(0.0, 0.05, 0.0), Vec3::new(0.6, 0.05, 0.4))];
        for (x, z) in [(-0.52, -0.32), (-0.52, 0.32), (0.52, -0.32), (0.52, 0.32)] {
            boxes.push(leg(x, z, 0.35, 0.05));
        }
        Shape::Boxes(boxes)
    } else {
        let mut boxes = vec![
            (Vec3::new(0.0, 0.04, 0.0), Vec3::new(0.25, 0.04, 0.25)),
            (Vec3::new(0.0, 0.38, -0.22), Vec3::new(0.25, 0.3, 0.03)),
        ];
        for (x, z) in [(-0.21, -0.21), (-0.21, 0.21), (0.21, -0.21), (0.21, 0.21)] {
            boxes.push(leg(x, z, 0.22, 0.03));
        }
        Shape::Boxes(boxes)
    }
}

/// Compound bodies tumbling: `n³` tables and chairs (boxes fixed together, see [`furniture`]),
/// each turned its own way, on a 2.2 m lattice whose bottom layer is 2 m up, dropped on the
/// [`GROUND`].
pub fn furniture_pile(engine: Engine, n: usize) -> Scene {
    let mut scene = Scene::empty(engine);
    ground(&mut scene, GROUND);
    let mut random = Random(0xc2b2_ae35);
    for (index, position) in lattice(n, 2.2, 2.0).enumerate() {
        scene.add(tumbling(furniture(index), position, random.rotation()));
    }
    scene
}

/// Inner radius and half length of the [`drum`], m.
pub const DRUM: (f32, f32) = (5.0, 3.5);

/// A drum turning about z at 1 rad/s (a washing machine, as in Box3D's samples): a kinematic
/// body of 64 bars around the axis (0.6 m square, overlapping their neighbours) and two end
/// plates, holding `n³` boxes of 0.5 m on a 0.6 m lattice, dropped inside it.
pub fn drum(engine: Engine, n: usize) -> Scene {
    let mut scene = Scene::empty(engine);
    let (radius, half_length) = DRUM;
    const BARS: usize = 64;
    let mut boxes: Vec<(Vec3, Vec3)> = (0..BARS)
        .map(|bar| {
            let (sin, cos) = (bar as f32 * std::f32::consts::TAU / BARS as f32).sin_cos();
            let centre = Vec3::new(cos, sin, 0.0) * (radius + 0.3);
            (centre, Vec3::new(0.3, 0.3, half_length))
        })
        .collect();
    for z in [-1.0, 1.0] {
        let plate = Vec3::new(radius + 0.6, radius + 0.6, 0.25);
        boxes.push((Vec3::new(0.0, 0.0, z * (half_length + 0.25)), plate));
    }
    scene.add(BodyDef {
        angular_velocity: Vec3::new(0.0, 0.0, 1.0),
        ..BodyDef::new(Motion::Kinematic, Shape::Boxes(boxes), Vec3::ZERO)
    });
    for position in lattice(n, 0.6, -0.5 * (n - 1) as f32 * 0.6) {
        let shape = Shape::Cuboid(Vec3::splat(0.25));
        scene.add(BodyDef::new(Motion::Dynamic, shape, position));
    }
    scene
}

/// The timed scenes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SceneKind {
    /// [`pyramid`] of base 20 (210 cubes) on the 200 × 1 × 200 m [`GROUND`].
    Pyramid,
    /// [`pyramid`] of base 100 (5050 cubes) on the 400 × 2 × 400 m [`LARGE_GROUND`] (Box3D's
    /// large-pyramid benchmark).
    LargePyramid,
    /// [`many_pyramids`]: 8 × 8 pyramids of base 8 (2,304 cubes), 12 m apart (Box3D's
    /// benchmark).
    ManyPyramids,
    /// [`pile`] of 16 × 16 × 16 = 4096 cubes 1.1 m apart, timed after it landed.
    Pile,
    /// [`pile`] of 4096 cubes 1.2 m apart, timed from its first step.
    PileFromStart,
    /// [`joint_grid`] of 40 × 40 balls, 3120 joints.
    JointGrid,
    /// [`chain`] of 100 links, the last kicked sideways so it keeps swinging.
    Chain,
    /// [`chain`] of 100 links hanging at rest (the stretch measurement).
    ChainAtRest,
    /// [`free_balls`]: 25 × 16 × 25 = 10,000 balls 3 m apart in free fall.
    Free10k,
    /// [`mixed_pile`] of 12³ = 1,728 mixed shapes in a bin.
    MixedPile,
    /// [`mesh_terrain`]: 30 × 30 = 900 mixed shapes on a triangle-mesh terrain.
    MeshTerrain,
    /// [`heightfield_terrain`]: 30 × 30 = 900 mixed shapes on a heightfield.
    HeightfieldTerrain,
    /// [`ragdolls`]: 48 ragdolls (528 bodies, 480 joints).
    Ragdolls,
    /// [`furniture_pile`]: 8³ = 512 tables and chairs.
    Furniture,
    /// [`drum`] of 10³ = 1,000 boxes.
    Drum,
}

impl SceneKind {
    /// Every timed scene, in the order the tables list them.
    pub const ALL: [SceneKind; 15] = [
        SceneKind::Pyramid,
        SceneKind::LargePyramid,
        SceneKind::ManyPyramids,
        SceneKind::Pile,
        SceneKind::PileFromStart,
        SceneKind::JointGrid,
        SceneKind::Chain,
        SceneKind::ChainAtRest,
        SceneKind::Free10k,
        SceneKind::MixedPile,
        SceneKind::MeshTerrain,
        SceneKind::HeightfieldTerrain,
        SceneKind::Ragdolls,
        SceneKind::Furniture,
        SceneKind::Drum,
    ];

    /// The short name used on the command line, in bench ids and in the summary table.
    pub fn name(self) -> &'static str {
        match self {
            SceneKind::Pyramid => "pyramid",
            SceneKind::LargePyramid => "large_pyramid",
            SceneKind::ManyPyramids => "many_pyramids",
            SceneKind::Pile => "pile",
            SceneKind::PileFromStart => "pile_from_start",
            SceneKind::JointGrid => "grid",
            SceneKind::Chain => "chain",
            SceneKind::ChainAtRest => "chain_at_rest",
            SceneKind::Free10k => "free10k",
            SceneKind::MixedPile => "mixed",
            SceneKind::MeshTerrain => "terrain",
            SceneKind::HeightfieldTerrain => "heightfield",
            SceneKind::Ragdolls => "ragdolls",
            SceneKind::Furniture => "furniture",
            SceneKind::Drum => "drum",
        }
    }

    /// Builds the scene in `engine`.
    pub fn build(self, engine: Engine) -> Scene {
        match self {
            SceneKind::Pyramid => pyramid(engine, 20, GROUND),
            SceneKind::LargePyramid => pyramid(engine, 100, LARGE_GROUND),
            SceneKind::ManyPyramids => many_pyramids(engine, 8, 8, 12.0),
            SceneKind::Pile => pile(engine, 16, 1.1),
            SceneKind::PileFromStart => pile(engine, 16, 1.2),
            SceneKind::JointGrid => joint_grid(engine, 40),
            SceneKind::Chain => chain(engine, 100, true),
            SceneKind::ChainAtRest => chain(engine, 100, false),
            SceneKind::Free10k => free_balls(engine, UVec3::new(25, 16, 25), 3.0),
            SceneKind::MixedPile => mixed_pile(engine, 12),
            SceneKind::MeshTerrain => mesh_terrain(engine, 30),
            SceneKind::HeightfieldTerrain => heightfield_terrain(engine, 30),
            SceneKind::Ragdolls => ragdolls(engine, 48),
            SceneKind::Furniture => furniture_pile(engine, 8),
            SceneKind::Drum => drum(engine, 10),
        }
    }

    /// `(warm_up, end)`: the steps run untimed after building the scene, and the step at which
    /// timing stops, so that every engine is timed over the same window of the scene's life
    /// (steps `warm_up + 1 ..= end`). The binary measures quality at `end`; the criterion bench
    /// starts over from a freshly built scene when it reaches `end`.
    pub fn timing_window(self) -> (usize, usize) {
        match self {
            SceneKind::Pyramid => (5, 600),
            SceneKind::LargePyramid => (5, 200),
            SceneKind::ManyPyramids => (5, 200),
            SceneKind::Pile => (60, 300),
            SceneKind::PileFromStart => (0, 300),
            SceneKind::JointGrid => (10, 300),
            SceneKind::Chain => (10, 610),
            SceneKind::ChainAtRest => (10, 600),
            SceneKind::Free10k => (5, 125),
            SceneKind::MixedPile => (0, 360),
            SceneKind::MeshTerrain => (0, 300),
            SceneKind::HeightfieldTerrain => (0, 300),
            SceneKind::Ragdolls => (0, 300),
            SceneKind::Furniture => (0, 300),
            SceneKind::Drum => (0, 360),
        }
    }

    /// The number of timed steps, `end − warm_up`.
    pub fn timed_steps(self) -> usize {
        let (warm_up, end) = self.timing_window();
        end - warm_up
    }
}

/// Builds the chain that hangs at rest (no kick) in `engine`.
pub fn resting_chain(engine: Engine) -> Scene {
    SceneKind::ChainAtRest.build(engine)
}

/// A single dynamic ball falling freely for a sanity check of the stepping.
pub fn free_fall(engine: Engine) -> Scene {
    let mut scene = Scene::empty(engine);
    ball(&mut scene, Vec3::ZERO, 0.5, true, true);
    scene
}
