// Fixture of package cfi: call frame information as rustc emits it (with
// the standard library's, personality routines and LSDAs included).
//
// build rust: rustc -C opt-level=3 -g -o $OUT frames.rs

use std::hint::black_box;

#[inline(never)]
fn inner(n: u64) -> u64 {
    (0..black_box(n)).map(|i| i * black_box(3)).sum()
}

// Owns a vector across calls that may unwind: a landing pad drops it.
#[inline(never)]
fn outer(n: u64) -> u64 {
    let v: Vec<u64> = (0..n).map(inner).collect();
    v.iter().map(|&x| inner(x % 7)).sum::<u64>() + v.len() as u64
}

fn main() {
    let n = std::env::args().count() as u64 + 10;
    let r = std::panic::catch_unwind(|| outer(n)).unwrap_or(0);
    println!("{r}");
}
