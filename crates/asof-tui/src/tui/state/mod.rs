//! Per-panel state, each beside its view in `tui::ui`: the scrubber, the
//! beliefs and evidence lists, the plane and the popups, with the one list type
//! they share and the text the popups show. `App` routes actions here and holds
//! only what is shared (cursor, focus, sources); no state imports a view.

pub mod beliefs;
pub mod evidence;
pub mod focus;
pub mod list;
pub mod plane;
pub mod popup;
pub mod scrubber;
pub mod texts;
pub mod whatif;
