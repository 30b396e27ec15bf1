//! What the user asked for, independent of which key or click asked for it.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Quit,
    /// `w`: a what-if fork without the selected evidence.
    Fork,
    /// `W`: a what-if fork without everything the review rejects.
    ForkReview,
    /// `m`: a review finding on the selected evidence or belief, about the
    /// cursor's instant (appended to the review file, never to the loaded store).
    Mark,
    /// `y`: the selected row as text, to the terminal's clipboard (OSC 52).
    Copy,
    /// `r`: a trace's model calls, what the model read new at each.
    Calls,
    /// `s`: save the what-if fork as a store.
    SaveFork,
    /// `e`: write the report (Markdown or HTML) of what is shown to a file.
    Export,
    /// `c`: compare view → the fork in the panels → the parent again.
    Compare,
    /// `v`: free the valid cursor from the diagonal, or let it follow again.
    ToggleValid,
    /// Plane: move the crosshair left/right (valid time) and up/down (recorded time).
    PlaneLeft,
    PlaneRight,
    PlaneUp,
    PlaneDown,
    PlaneZoomIn,
    PlaneZoomOut,
    /// `n` in the plane: the legend's next page, when it does not fit at once.
    PlaneLegend,
    /// Esc: close a popup, clear a filter, or stop playing (it never quits).
    Back,
    /// `p`: the plane full-screen, or back.
    PlaneFull,
    /// ←/→ in a popup: scroll wide text sideways.
    ScrollLeft,
    ScrollRight,
    StepBack,
    StepForward,
    PrevEvent,
    NextEvent,
    Start,
    End,
    TogglePlay,
    Faster,
    Slower,
    ZoomIn,
    ZoomOut,
    FocusNext,
    FocusPrev,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Open,
    Filter,
    Help,
    Jump,
    /// A typed character for the open text prompt.
    Type(char),
    /// Editing the open prompt's text.
    Edit(Edit),
    /// Mouse: a left click at (column, row) of the screen.
    Click(u16, u16),
    /// Mouse wheel at (column, row): `true` scrolls down / forward.
    Wheel(bool, u16, u16),
    Resize(u16, u16),
    /// The play clock ticked.
    Tick,
}

/// Editing keys of a text prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    Backspace,
    Delete,
    Left,
    Right,
    Home,
    End,
}
