// URM's CMakeLists gives libUrmClient SOVERSION 1: programs linked against
// URM's library record `libUrmClient.so.1` as their NEEDED entry, so the
// drop-in carries the same soname.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libUrmClient.so.1");
}
