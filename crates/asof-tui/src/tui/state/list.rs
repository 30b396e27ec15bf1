//! One scrolling list, written once: selection, scroll offset, filter, match
//! count and paging for the beliefs and evidence panels and every popup.
//!
//! The owner keeps its rows; the list keeps which of them match the filter (as
//! indices into the owner's rows), which one is selected and which is the first
//! on screen. How many rows are on screen comes from `tui::layout`, the same
//! rectangles the views draw into, so paging and scrolling cannot disagree with
//! what is drawn.

/// A filtered, scrolled view over an owner's rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilteredList {
    /// Indices of the rows that match the filter, in display order.
    items: Vec<usize>,
    /// Position in `items` of the selected row.
    selected: usize,
    /// Position in `items` of the first row on screen.
    offset: usize,
    /// Columns scrolled sideways (popups with wide text).
    pub column: usize,
    /// The filter as typed (matching is the owner's business).
    pub filter: String,
}

impl FilteredList {
    /// The matching rows, in display order.
    pub fn items(&self) -> &[usize] {
        &self.items
    }

    /// How many rows match.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether no row matches.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// How many rows match: the "N matches" of a filtered list.
    pub fn matches(&self) -> usize {
        self.items.len()
    }

    /// Whether a filter is typed.
    pub fn is_filtered(&self) -> bool {
        !self.filter.is_empty()
    }

    /// Position of the selected row among the matching ones.
    pub fn selected(&self) -> usize {
        self.selected
    }

    /// The owner's index of the selected row.
    pub fn selected_item(&self) -> Option<usize> {
        self.items.get(self.selected).copied()
    }

    /// Position of the first row on screen.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The rows on screen: (position, owner's index), at most `rows` of them.
    pub fn window(&self, rows: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.items
            .iter()
            .copied()
            .enumerate()
            .skip(self.offset)
            .take(rows)
    }

    /// Replaces the matching rows, keeping the selection in range.
    pub fn set_items(&mut self, items: Vec<usize>, rows: usize) {
        self.items = items;
        self.selected = self.selected.min(self.items.len().saturating_sub(1));
        self.keep_visible(rows);
    }

    /// A new filter: the matching rows replace the old ones and the list shows
    /// the first match at the top.
    pub fn refiltered(&mut self, items: Vec<usize>) {
        self.items = items;
        self.selected = 0;
        self.offset = 0;
    }

    /// Selects the row at `position` (clamped) and scrolls it into view.
    pub fn select(&mut self, position: usize, rows: usize) {
        self.selected = position.min(self.items.len().saturating_sub(1));
        self.keep_visible(rows);
    }

    /// Moves the selection by `by` rows (clamped), scrolling as needed.
    pub fn move_by(&mut self, by: isize, rows: usize) {
        if self.items.is_empty() {
            self.selected = 0;
            self.offset = 0;
            return;
        }
        let last = self.items.len() as isize - 1;
        self.selected = (self.selected as isize).saturating_add(by).clamp(0, last) as usize;
        self.keep_visible(rows);
    }

    /// A page is the rows on screen, less one kept for context.
    pub fn page(rows: usize) -> isize {
        rows.saturating_sub(1).max(1) as isize
    }

    /// How far ↑/↓/PgUp/PgDn/g/G move with `rows` on screen; `None` for other actions.
    pub fn delta(action: crate::tui::action::Action, rows: usize) -> Option<isize> {
        use crate::tui::action::Action;
        Some(match action {
            Action::Up => -1,
            Action::Down => 1,
            Action::PageUp => -Self::page(rows),
            Action::PageDown => Self::page(rows),
            Action::Top => isize::MIN / 2,
            Action::Bottom => isize::MAX / 2,
            _ => return None,
        })
    }

    /// Scrolls the window without a selection (popups): the first row on screen
    /// moves by `by`, never past the last full screen.
    pub fn scroll_by(&mut self, by: isize, rows: usize) {
        let last = self.items.len().saturating_sub(rows.max(1)) as isize;
        self.offset = (self.offset as isize)
            .saturating_add(by)
            .clamp(0, last.max(0)) as usize;
        self.selected = self.offset;
    }

    /// Scrolls sideways by `by` columns, within `max` (the widest line less the width).
    pub fn scroll_columns(&mut self, by: isize, max: usize) {
        self.column = (self.column as isize)
            .saturating_add(by)
            .clamp(0, max as isize) as usize;
    }

    /// Keeps the selection on screen, and the screen full when it can be.
    pub fn keep_visible(&mut self, rows: usize) {
        if rows == 0 {
            self.offset = self.selected;
            return;
        }
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + rows {
            self.offset = self.selected + 1 - rows;
        }
        // No blank rows below the last item while rows above are hidden.
        let last_full = self.items.len().saturating_sub(rows);
        self.offset = self.offset.min(last_full);
    }

    /// Puts the selection at `position` with as many rows above it as fit,
    /// the screen starting at the top when everything up to it fits.
    pub fn show_at_top_or_fit(&mut self, position: usize, rows: usize) {
        self.selected = position.min(self.items.len().saturating_sub(1));
        self.offset = if rows == 0 || self.selected < rows {
            0
        } else {
            self.selected + 1 - rows
        };
        self.keep_visible(rows);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(n: usize) -> FilteredList {
        let mut l = FilteredList::default();
        l.set_items((0..n).collect(), 5);
        l
    }

    #[test]
    fn moving_keeps_the_selection_on_screen() {
        let mut l = list(20);
        l.move_by(7, 5);
        assert_eq!((l.selected(), l.offset()), (7, 3));
        l.move_by(-6, 5);
        assert_eq!((l.selected(), l.offset()), (1, 1));
        l.move_by(FilteredList::page(5), 5);
        assert_eq!((l.selected(), l.offset()), (5, 1));
        l.move_by(isize::MAX / 2, 5);
        assert_eq!((l.selected(), l.offset()), (19, 15));
        l.move_by(isize::MIN / 2, 5);
        assert_eq!((l.selected(), l.offset()), (0, 0));
    }

    #[test]
    fn a_new_filter_shows_the_first_match_at_the_top() {
        let mut l = list(20);
        l.move_by(15, 5);
        l.filter = "x".into();
        l.refiltered(vec![3, 9]);
        assert_eq!((l.selected(), l.offset(), l.matches()), (0, 0, 2));
        assert_eq!(l.window(5).collect::<Vec<_>>(), vec![(0, 3), (1, 9)]);
    }

    #[test]
    fn the_screen_stays_full_when_the_list_shrinks() {
        let mut l = list(20);
        l.move_by(19, 5);
        l.set_items((0..8).collect(), 5);
        assert_eq!((l.selected(), l.offset()), (7, 3));
        l.show_at_top_or_fit(2, 5);
        assert_eq!((l.selected(), l.offset()), (2, 0));
        l.show_at_top_or_fit(6, 5);
        assert_eq!((l.selected(), l.offset()), (6, 2));
    }

    #[test]
    fn scrolling_stops_at_the_last_full_screen() {
        let mut l = list(12);
        l.scroll_by(100, 5);
        assert_eq!(l.offset(), 7);
        l.scroll_by(-3, 5);
        assert_eq!(l.offset(), 4);
        let mut short = list(3);
        short.scroll_by(4, 5);
        assert_eq!(short.offset(), 0);
        short.scroll_columns(50, 20);
        assert_eq!(short.column, 20);
    }
}
