// Build: rustc -C opt-level=3 -g -o cpu cpu.rs
// A release build (no frame pointers) that spends its time in
// main -> outer -> inner for the seconds of CPU time given (default 1: as
// many samples however loaded the machine is).

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

// The process's CPU time in seconds (CLOCK_PROCESS_CPUTIME_ID).
fn cpu_seconds() -> f64 {
    let mut ts = Timespec { sec: 0, nsec: 0 };
    unsafe { clock_gettime(2, &mut ts) };
    ts.sec as f64 + ts.nsec as f64 / 1e9
}

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
    let end = cpu_seconds() + secs;
    let (mut x, mut calls) = (1u64, 0u64);
    while cpu_seconds() < end {
        for _ in 0..100 {
            x = outer(std::hint::black_box(x));
            calls += 1;
        }
    }
    println!("calls {} x {}", calls, x);
}
