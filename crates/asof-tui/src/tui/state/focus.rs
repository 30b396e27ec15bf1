//! Which panel has the keyboard: shared by the app (which moves it) and the
//! states that remember it (a filter prompt belongs to the panel it filters).

/// The panels Tab moves between, in Tab's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The timeline strip.
    Scrubber,
    /// The beliefs panel.
    Beliefs,
    /// The plane.
    Plane,
    /// The evidence panel.
    Evidence,
}

impl Focus {
    const ORDER: [Focus; 4] = [
        Focus::Scrubber,
        Focus::Beliefs,
        Focus::Plane,
        Focus::Evidence,
    ];

    /// The panel `by` steps along Tab's order (negative: Shift-Tab's).
    pub fn step(self, by: isize) -> Focus {
        let i = Self::ORDER.iter().position(|&f| f == self).unwrap_or(0) as isize;
        Self::ORDER[(i + by).rem_euclid(Self::ORDER.len() as isize) as usize]
    }
}
