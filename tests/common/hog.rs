//! A CPU hog: two threads that spin until dropped, so that the search
//! threads get less of the machine and their answers come late.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// Two spinning threads, stopped when dropped.
pub struct Hog(Arc<AtomicBool>, Vec<JoinHandle<()>>);

impl Hog {
    /// Starts the two threads.
    pub fn new() -> Hog {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..2)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut x = 0_u64;
                    while !stop.load(Ordering::Relaxed) {
                        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                    }
                })
            })
            .collect();
        Hog(stop, threads)
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
        for t in self.1.drain(..) {
            let _ = t.join();
        }
    }
}
