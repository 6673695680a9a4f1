use bevy::prelude::*;
use avian3d::prelude::*;
fn main() {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, TransformPlugin, PhysicsPlugins::default()));
    app.update();
    println!("first update ok");
    app.update();
    println!("second update ok");
}
