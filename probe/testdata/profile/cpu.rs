// Build: rustc -C opt-level=3 -g -o cpu cpu.rs
// A release build (no frame pointers) that spends its time in
// main -> outer -> inner for the seconds given (default 1).
use std::time::{Duration, Instant};

#[inline(never)]
fn inner(mut x: u64) -> u64 {
    for _ in 0..4000 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407) ^ (x >> 17);
    }
    x
}

// Not a tail call: outer stays on the stack while inner runs.
#[inline(never)]
fn outer(x: u64) -> u64 {
    inner(x) ^ 1
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let (mut x, mut calls) = (1u64, 0u64);
    while Instant::now() < end {
        for _ in 0..100 {
            x = outer(std::hint::black_box(x));
            calls += 1;
        }
    }
    println!("calls {} x {}", calls, x);
}
