//! Box3D through boxddd 0.4, the binding bevy_boxddd 0.4 is built on, without Bevy:
//! `World::step(1/60, 4)` on the calling thread (no task system). bevy_boxddd's own collider
//! components cannot describe an arbitrary hull or triangle mesh, so the scenes use the
//! binding's world directly. Box3D has no round cylinder (a 16-sided prism stands in), puts
//! meshes and height fields on static bodies only, starts a height field at its body's origin
//! and stores its heights in 16 bits; a body of several boxes is several shapes on one body.

use bevy::math::{Quat, Vec3};
use boxddd as bd;

use super::prism;
use crate::{BodyDef, DT, JointDef, JointKind, Motion, Shape, Sim};

/// Substeps per step: what Box3D's samples use.
const SUBSTEPS: i32 = 4;

/// A Box3D world and its bodies, in the order they were added.
pub(super) struct Box3dSim {
    foundation: &'static bd::Foundation,
    world: bd::World,
    bodies: Vec<bd::BodyId>,
}

fn vector(v: Vec3) -> bd::Vec3 {
    bd::Vec3::new(v.x, v.y, v.z)
}

fn rotation(q: Quat) -> bd::Quat {
    bd::Quat::new(bd::Vec3::new(q.x, q.y, q.z), q.w)
}

/// A rigid frame at `point`, turned so that its z axis (Box3D's hinge axis) is along `axis`.
fn frame(point: Vec3, axis: Vec3) -> bd::Transform {
    let turn = Quat::from_rotation_arc(Vec3::Z, axis.normalize());
    bd::Transform::new(vector(point), rotation(turn))
}

fn hull(points: &[Vec3]) -> bd::Hull {
    let points: Vec<bd::Vec3> = points.iter().map(|&p| vector(p)).collect();
    bd::Hull::from_points(&points, points.len() as i32).expect("a hull")
}

impl Box3dSim {
    pub(super) fn new() -> Self {
        let foundation = bd::Foundation::initialize_default().expect("Box3D's foundation");
        let def = foundation
            .world_def_builder()
            .gravity(bd::Vec3::new(0.0, -9.81, 0.0))
            .build()
            .expect("a world definition");
        Self {
            foundation,
            world: foundation.create_world(def).expect("a world"),
            bodies: Vec::new(),
        }
    }

    fn add_shape(&mut self, body: bd::BodyId, shape: &Shape, def: &bd::ShapeDef) {
        let world = &mut self.world;
        let result = match shape {
            Shape::Cuboid(half) => world.create_hull_shape(
                body,
                def,
                &bd::BoxHull::new(half.x, half.y, half.z).unwrap(),
            ),
            Shape::Ball(radius) => {
                world.create_sphere_shape(body, def, &bd::Sphere::new([0.0, 0.0, 0.0], *radius))
            }
            Shape::Capsule {
                half_height,
                radius,
            } => {
                let capsule =
                    bd::Capsule::new([0.0, -half_height, 0.0], [0.0, *half_height, 0.0], *radius);
                world.create_capsule_shape(body, def, &capsule)
            }
            Shape::Cylinder {
                half_height,
                radius,
            } => world.create_created_hull_shape(body, def, &hull(&prism(*half_height, *radius))),
            Shape::Hull(points) => world.create_created_hull_shape(body, def, &hull(points)),
            Shape::Boxes(boxes) => {
                for &(centre, half) in boxes {
                    let part = bd::BoxHull::offset(half.x, half.y, half.z, vector(centre)).unwrap();
                    world.create_hull_shape(body, def, &part).expect("a box");
                }
                return;
            }
            Shape::Heightfield {
                heights,
                samples,
                size,
            } => {
                // Box3D's grid starts at the body's origin and its scale is one cell: the body
                // was placed half the field back (see `add_body`).
                let n = *samples as i32;
                let cell = *size / Vec3::new((n - 1) as f32, 1.0, (n - 1) as f32);
                let field = bd::HeightFieldBuilder::new(n, n, heights.clone())
                    .build(vector(cell))
                    .expect("a height field");
                world.create_height_field_shape(body, def, field)
            }
            Shape::Trimesh {
                vertices,
                triangles,
            } => {
                let vertices: Vec<bd::Vec3> = vertices.iter().map(|&v| vector(v)).collect();
                let indices: Vec<i32> = triangles.iter().flatten().map(|&i| i as i32).collect();
                let mesh = bd::MeshDataBuilder::new(vertices, indices)
                    .build()
                    .expect("a mesh");
                world.create_mesh_shape(body, def, mesh, [1.0, 1.0, 1.0])
            }
        };
        result.expect("a shape");
    }
}

impl Sim for Box3dSim {
    fn add_body(&mut self, body: &BodyDef) -> usize {
        let kind = match body.motion {
            Motion::Static => bd::BodyType::Static,
            Motion::Dynamic => bd::BodyType::Dynamic,
            Motion::Kinematic => bd::BodyType::Kinematic,
        };
        // A Box3D height field starts at its body's origin instead of being centred on it.
        let position = match &body.shape {
            Some(Shape::Heightfield { size, .. }) => body.position - 0.5 * size.with_y(0.0),
            _ => body.position,
        };
        let def = self
            .foundation
            .body_def_builder()
            .body_type(kind)
            .position([position.x, position.y, position.z])
            .rotation(rotation(body.rotation))
            .linear_velocity(vector(body.linear_velocity))
            .angular_velocity(vector(body.angular_velocity))
            .enable_sleep(false)
            .build()
            .expect("a body definition");
        let id = self.world.create_body(def).expect("a body");
        if let Some(shape) = &body.shape {
            let mut def = self.foundation.shape_def_builder();
            if !body.collides {
                def = def.filter(bd::Filter {
                    category_bits: 0,
                    mask_bits: 0,
                    group_index: 0,
                });
            }
            let def = def.build().expect("a shape definition");
            self.add_shape(id, shape, &def);
        }
        self.bodies.push(id);
        self.bodies.len() - 1
    }

    fn add_joint(&mut self, joint: &JointDef) {
        let (a, b) = (self.bodies[joint.a], self.bodies[joint.b]);
        let result = match joint.kind {
            JointKind::Spherical => self.world.create_spherical_joint(
                bd::SphericalJointDef::new(a, b)
                    .local_frame_a(frame(joint.anchor_a, Vec3::Z))
                    .local_frame_b(frame(joint.anchor_b, Vec3::Z))
                    .collide_connected(false),
            ),
            JointKind::Revolute(axis) => self.world.create_revolute_joint(
                bd::RevoluteJointDef::new(a, b)
                    .local_frame_a(frame(joint.anchor_a, axis))
                    .local_frame_b(frame(joint.anchor_b, axis))
                    .collide_connected(false),
            ),
        };
        result.expect("a joint");
    }

    fn step(&mut self) {
        self.world.step(DT as f32, SUBSTEPS).expect("a step");
    }

    fn pose(&self, body: usize) -> (Vec3, Quat) {
        let t = self
            .world
            .body_transform(self.bodies[body])
            .expect("a body's pose");
        let (p, q) = (t.p, t.q);
        (
            Vec3::new(p.x, p.y, p.z),
            Quat::from_xyzw(q.v.x, q.v.y, q.v.z, q.s),
        )
    }
}
