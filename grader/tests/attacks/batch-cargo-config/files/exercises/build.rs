// The batch-cargo-config attack: runs before the build if cargo reads the submission's manifest.
fn main() {
    let _ = std::fs::write("@DROP@/batch-cargo-config-build-script.txt", "build script ran\n");
}
