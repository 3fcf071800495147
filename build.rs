fn main() {
    println!("cargo:rerun-if-changed=grammar");
    lalrpop::Configuration::new()
        .set_in_dir("grammar")
        .emit_rerun_directives(true)
        .process()
        .unwrap();
}
