//! The Bevy plugin (placeholder until it lands).
