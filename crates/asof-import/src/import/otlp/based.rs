//! A list whose first places a growing import has let go (design.md §7,
//! "Runs that are over leave memory"): the places kept keep their numbers.

/// A list of which the places before `base` were let go; indexed, cut and
/// searched by place as if it were whole.
#[derive(Debug)]
pub(super) struct Based<T> {
    base: usize,
    kept: Vec<T>,
}

impl<T> Default for Based<T> {
    fn default() -> Self {
        Based {
            base: 0,
            kept: Vec::new(),
        }
    }
}

impl<T> Based<T> {
    /// The places, those let go counted.
    pub(super) fn len(&self) -> usize {
        self.base + self.kept.len()
    }

    /// The first place kept.
    pub(super) fn base(&self) -> usize {
        self.base
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What place `at` holds, when kept.
    pub(super) fn get(&self, at: usize) -> Option<&T> {
        self.kept.get(at.checked_sub(self.base)?)
    }

    pub(super) fn last(&self) -> Option<&T> {
        self.kept.last()
    }

    pub(super) fn push(&mut self, value: T) {
        self.kept.push(value);
    }

    /// Cuts the list to `len` places; never into those let go.
    pub(super) fn truncate(&mut self, len: usize) {
        debug_assert!(len >= self.base, "cut at {len}, before {}", self.base);
        self.kept.truncate(len.saturating_sub(self.base));
    }

    /// The places `from..to` kept.
    pub(super) fn range(&self, from: usize, to: usize) -> &[T] {
        let (from, to) = (from.saturating_sub(self.base), to.saturating_sub(self.base));
        &self.kept[from.min(self.kept.len())..to.min(self.kept.len())]
    }

    /// The first place kept from which `before` is false, as
    /// `slice::partition_point` (the places let go all before it).
    pub(super) fn partition_point(&self, before: impl FnMut(&T) -> bool) -> usize {
        self.base + self.kept.partition_point(before)
    }

    /// Lets the places before `at` go; their room is given back once the
    /// list holds under a quarter of it (given back at every call, the next
    /// push copied the whole list again: a batch cost what the list held).
    pub(super) fn let_go_before(&mut self, at: usize) {
        let n = at.saturating_sub(self.base).min(self.kept.len());
        self.kept.drain(..n);
        if self.kept.capacity() > 4 * self.kept.len() + 1024 {
            self.kept.shrink_to_fit();
        }
        self.base += n;
    }

    /// The places kept from `from` on, removed.
    pub(super) fn drain_from(&mut self, from: usize) -> std::vec::Drain<'_, T> {
        debug_assert!(
            from >= self.base,
            "drained from {from}, before {}",
            self.base
        );
        let from = from.saturating_sub(self.base).min(self.kept.len());
        self.kept.drain(from..)
    }

    pub(super) fn extend(&mut self, values: impl IntoIterator<Item = T>) {
        self.kept.extend(values);
    }
}

impl<T> std::ops::Index<usize> for Based<T> {
    type Output = T;

    fn index(&self, at: usize) -> &T {
        &self.kept[at - self.base]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_let_go_keep_the_others_numbers() {
        let mut list: Based<u32> = Based::default();
        list.extend([10, 11, 12, 13, 14]);
        list.let_go_before(2);
        assert_eq!((list.base(), list.len()), (2, 5));
        assert_eq!((list.get(1), list.get(2), list[4]), (None, Some(&12), 14));
        assert_eq!(list.partition_point(|&v| v < 13), 3);
        assert_eq!(
            list.partition_point(|&v| v < 5),
            2,
            "never before what is kept"
        );
        assert_eq!(list.range(0, 4), &[12, 13]);
        list.truncate(3);
        list.push(20);
        assert_eq!(list.range(2, 4), &[12, 20]);
        assert_eq!(list.drain_from(3).collect::<Vec<_>>(), vec![20]);
        assert_eq!((list.len(), list.last()), (3, Some(&12)));
    }

    /// Letting nothing go, or a little, keeps the list's room: a list let
    /// go from at every batch is not copied again at its next push.
    #[test]
    fn a_list_keeps_its_room_until_most_of_it_is_let_go() {
        let mut list: Based<u32> = Based::default();
        list.extend(0..10_000);
        list.push(10_000);
        let room = list.kept.capacity();
        assert!(room > 10_001, "{room}");
        list.let_go_before(0);
        list.let_go_before(100);
        assert_eq!(list.kept.capacity(), room);
        list.let_go_before(9_900);
        assert!(list.kept.capacity() < room / 4, "{}", list.kept.capacity());
        assert_eq!((list.base(), list.len()), (9_900, 10_001));
    }
}
