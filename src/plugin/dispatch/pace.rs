//! Pacing: how many searches to keep sent ahead of the search threads.
//!
//! Searches for agents standing in a wall or on a blocked path are sent at
//! once. For the others, the number sent ahead is limited by work, not by a
//! count per frame: the plugin keeps about two frames of work of each
//! priority waiting for the threads (from the measured frame time and mean
//! search time), so threads never idle while agents wait, no search starts
//! long after it was sent, and a backlog waits in the plugin's lines, where
//! it ages.
//! Without threads, two frames of the main thread's budget. The most urgent
//! search waiting is always served first. A frame with nothing to send or
//! apply costs a few atomic loads.

use core::time::Duration;

use bevy_platform::time::Instant;

/// How many searches to keep sent ahead, from measured frame and search
/// times.
pub(crate) struct Pace {
    last_frame: Option<Instant>,
    /// Smoothed frame interval.
    frame: Duration,
    /// Smoothed time of one search.
    search: Duration,
    /// The executor's work done (searches ended, time they ran) when last
    /// read.
    seen: (u64, Duration),
}

impl Default for Pace {
    fn default() -> Self {
        Pace {
            last_frame: None,
            frame: Duration::from_millis(16),
            // Cautious until measured: a burst of slow searches sent at once
            // would keep urgent ones waiting behind it.
            search: Duration::from_millis(2),
            seen: (0, Duration::ZERO),
        }
    }
}

impl Pace {
    /// Updates the estimates (once a frame) from the executor's work done
    /// so far.
    pub(crate) fn tick(&mut self, (done, busy): (u64, Duration)) {
        let now = Instant::now();
        if let Some(last) = self.last_frame.replace(now) {
            let dt = now
                .duration_since(last)
                .clamp(Duration::from_millis(1), Duration::from_millis(100));
            self.frame = (self.frame * 3 + dt) / 4;
        }
        if done > self.seen.0 {
            let n = (done - self.seen.0) as u32;
            let mean = busy.saturating_sub(self.seen.1) / n;
            // Many searches since the last frame: their mean is the news;
            // a few: smoothed.
            let smoothed = if n >= 16 {
                mean
            } else {
                (self.search * 3 + mean) / 4
            };
            self.search = smoothed.max(Duration::from_micros(1));
            self.seen = (done, busy);
        }
    }

    /// Searches to keep waiting: two frames of work for `workers` search
    /// threads, or, with none, for the main thread's budget per frame.
    pub(crate) fn target(&self, workers: usize, main_thread_budget: Duration) -> usize {
        let search = self.search.as_secs_f64();
        if workers == 0 {
            return ((2.0 * main_thread_budget.as_secs_f64() / search) as usize).clamp(8, 1 << 16);
        }
        let per_frame = (2.0 * self.frame.as_secs_f64() / search) as usize;
        (per_frame * workers).clamp(8 * workers, 1 << 16)
    }
}
