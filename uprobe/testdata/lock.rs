// rustc -O -g -o lock_rs lock.rs
//
// f starts with a lock-prefixed increment (AtomicU64::fetch_add), on which
// the kernel refuses a uprobe; the program counts f's calls itself.
use std::sync::atomic::{AtomicU64, Ordering};
static HITS: AtomicU64 = AtomicU64::new(0);
#[inline(never)]
pub fn f(x: u64) -> u64 { HITS.fetch_add(1, Ordering::Relaxed); x * 3 + 1 }
fn main() {
    let n: u64 = std::env::args().nth(1).unwrap().parse().unwrap();
    let mut s = 0u64;
    for i in 0..n { s = s.wrapping_add(f(std::hint::black_box(i))); }
    println!("calls f={} sum={}", HITS.load(Ordering::Relaxed), s);
}
