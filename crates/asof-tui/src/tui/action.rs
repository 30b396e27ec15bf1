//! What the user asked for, independent of which key or click asked for it.

/// Every action a key, a click, the wheel or the clock can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `q`, Ctrl-C: quit.
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
    /// Move the crosshair right.
    PlaneRight,
    /// Move the crosshair up.
    PlaneUp,
    /// Move the crosshair down.
    PlaneDown,
    /// `z` in the plane: zoom in around the crosshair.
    PlaneZoomIn,
    /// `Z` in the plane: zoom out.
    PlaneZoomOut,
    /// `n` in the plane: the legend's next page, when it does not fit at once.
    PlaneLegend,
    /// Esc: close a popup, clear a filter, or stop playing (it never quits).
    Back,
    /// `p`: the plane full-screen, or back.
    PlaneFull,
    /// ←/→ in a popup: scroll wide text sideways.
    ScrollLeft,
    /// → in a popup: scroll right.
    ScrollRight,
    /// ←, `h`: step the recorded cursor back.
    StepBack,
    /// →, `l`: step it forward.
    StepForward,
    /// `[`: to the previous event.
    PrevEvent,
    /// `]`: to the next event.
    NextEvent,
    /// Home, `g`: to the start of the log.
    Start,
    /// End, `G`: to its end.
    End,
    /// Space: play or pause, one event at a time.
    TogglePlay,
    /// `+`: play faster.
    Faster,
    /// `-`: play slower.
    Slower,
    /// `z`: zoom the timeline in around the cursor.
    ZoomIn,
    /// `Z`: zoom it out.
    ZoomOut,
    /// Tab: focus the next panel.
    FocusNext,
    /// Shift-Tab: focus the previous panel.
    FocusPrev,
    /// ↑, `k`: select the row above.
    Up,
    /// ↓, `j`: select the row below.
    Down,
    /// PageUp: a page up.
    PageUp,
    /// PageDown: a page down.
    PageDown,
    /// Home, `g` in a list: its first row.
    Top,
    /// End, `G` in a list: its last row.
    Bottom,
    /// Enter: details of the selected row (a topic's history, an evidence item) or of the version
    /// under the crosshair.
    Open,
    /// `/`: filter the list.
    Filter,
    /// `?`: the help.
    Help,
    /// `:`: jump to a typed time.
    Jump,
    /// A typed character for the open text prompt.
    Type(char),
    /// Editing the open prompt's text.
    Edit(Edit),
    /// Mouse: a left click at (column, row) of the screen.
    Click(u16, u16),
    /// Mouse wheel at (column, row): `true` scrolls down / forward.
    Wheel(bool, u16, u16),
    /// The terminal's new size (columns, rows).
    Resize(u16, u16),
    /// The play clock ticked.
    Tick,
}

/// Editing keys of a text prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// Delete the character before the cursor.
    Backspace,
    /// Delete the character under it.
    Delete,
    /// Move the cursor left.
    Left,
    /// Move it right.
    Right,
    /// To the start of the text.
    Home,
    /// To its end.
    End,
}
