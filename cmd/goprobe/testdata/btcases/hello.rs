// Build: rustc -g -o hello-rust hello.rs
// A Rust program for listing: a function of its own among std's.
#[inline(never)]
fn fun1(n: u64) -> u64 {
    n * 3
}

fn main() {
    println!("{}", fun1(std::env::args().count() as u64));
}
