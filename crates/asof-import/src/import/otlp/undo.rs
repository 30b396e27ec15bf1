//! What a trace's checkpoints are made of (trace.rs, design.md §7): its
//! maps and changes in place, each remembered with the batch (its epoch)
//! that made it, so that the state as a checkpoint left it comes back by
//! undoing, newest first, what later batches did — a cost of what they did,
//! not of the trace. What lies before the oldest checkpoint kept is
//! forgotten, and epoch 0, a batch from nothing, is never remembered: going
//! back before it is converting the trace again from its start.

use foldhash::HashMap;
use std::borrow::Borrow;
use std::collections::VecDeque;
use std::hash::Hash;

/// A batch's number: what it changed is undone by going back to an
/// earlier one (0: the batch from nothing, not remembered).
pub(super) type Epoch = u64;

/// Changes, each with the epoch that made it, oldest first.
pub(super) struct Trail<T>(VecDeque<(Epoch, T)>);

impl<T> Default for Trail<T> {
    fn default() -> Self {
        Trail(VecDeque::new())
    }
}

impl<T> Trail<T> {
    pub(super) fn push(&mut self, at: Epoch, change: T) {
        if at > 0 {
            self.0.push_back((at, change));
        }
    }

    /// The newest change made after epoch `to`, taken off the trail.
    pub(super) fn pop_after(&mut self, to: Epoch) -> Option<T> {
        match self.0.back() {
            Some(&(at, _)) if at > to => self.0.pop_back().map(|(_, c)| c),
            _ => None,
        }
    }

    /// Forgets the changes made at or before epoch `to` (nothing goes back
    /// beyond it any more).
    pub(super) fn forget(&mut self, to: Epoch) {
        while self.0.front().is_some_and(|&(at, _)| at <= to) {
            self.0.pop_front();
        }
        // A long batch's changes once forgotten, their room is given back.
        if self.0.capacity() > 4 * self.0.len() + 1024 {
            self.0.shrink_to_fit();
        }
    }
}

/// A map whose changes can be undone: each remembers the value it replaced.
pub(super) struct Journaled<K, V> {
    map: HashMap<K, V>,
    trail: Trail<(K, Option<V>)>,
}

impl<K, V> Default for Journaled<K, V> {
    fn default() -> Self {
        Journaled {
            map: HashMap::default(),
            trail: Trail::default(),
        }
    }
}

impl<K: Hash + Eq + Clone, V> Journaled<K, V> {
    pub(super) fn get<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.map.get(key)
    }

    pub(super) fn contains_key<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.map.contains_key(key)
    }

    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    /// Sets `key` to `value`; the value it had comes back on undo.
    pub(super) fn insert(&mut self, at: Epoch, key: K, value: V) {
        let old = self.map.insert(key.clone(), value);
        self.trail.push(at, (key, old));
    }

    /// The value of `key`, set to `value()` first when it has none.
    pub(super) fn get_or_insert_with(
        &mut self,
        at: Epoch,
        key: K,
        value: impl FnOnce() -> V,
    ) -> &V {
        if !self.map.contains_key(&key) {
            self.trail.push(at, (key.clone(), None));
            self.map.insert(key.clone(), value());
        }
        // Present: found, or inserted just now.
        &self.map[&key]
    }

    /// Takes `key` out; its value comes back on undo.
    pub(super) fn remove(&mut self, at: Epoch, key: &K) -> Option<V>
    where
        V: Clone,
    {
        let old = self.map.remove(key)?;
        self.trail.push(at, (key.clone(), Some(old.clone())));
        Some(old)
    }

    /// Changes the value of `key` (inserted first by `default` when it has
    /// none) with `change`; the value it had comes back on undo.
    pub(super) fn update(
        &mut self,
        at: Epoch,
        key: K,
        default: impl FnOnce() -> V,
        change: impl FnOnce(&mut V),
    ) where
        V: Clone,
    {
        let old = self.map.get(&key).cloned();
        self.trail.push(at, (key.clone(), old));
        change(self.map.entry(key).or_insert_with(default));
    }

    /// Undoes every change made after epoch `to`, newest first, calling
    /// `undone` with each key.
    pub(super) fn undo(&mut self, to: Epoch, mut undone: impl FnMut(&K)) {
        while let Some((key, old)) = self.trail.pop_after(to) {
            undone(&key);
            match old {
                Some(v) => self.map.insert(key, v),
                None => self.map.remove(&key),
            };
        }
    }

    pub(super) fn forget(&mut self, to: Epoch) {
        self.trail.forget(to);
    }
}

/// A set whose insertions and removals can be undone.
pub(super) struct JournaledSet<K>(Journaled<K, ()>);

impl<K> Default for JournaledSet<K> {
    fn default() -> Self {
        JournaledSet(Journaled::default())
    }
}

impl<K: Hash + Eq + Clone> JournaledSet<K> {
    pub(super) fn contains<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.0.contains_key(key)
    }

    /// Adds `key`; remembered only when it was not there.
    pub(super) fn insert(&mut self, at: Epoch, key: K) {
        if !self.0.contains_key(&key) {
            self.0.insert(at, key, ());
        }
    }

    pub(super) fn remove(&mut self, at: Epoch, key: &K) {
        self.0.remove(at, key);
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.len() == 0
    }

    pub(super) fn undo(&mut self, to: Epoch) {
        self.0.undo(to, |_| {});
    }

    pub(super) fn forget(&mut self, to: Epoch) {
        self.0.forget(to);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_goes_back_to_what_an_epoch_left() {
        let mut m: Journaled<&str, u32> = Journaled::default();
        m.insert(1, "a", 1);
        m.insert(2, "a", 2);
        m.get_or_insert_with(2, "b", || 7);
        m.get_or_insert_with(3, "b", || 8);
        assert_eq!(m.get(&"b"), Some(&7));
        m.update(3, "c", || 5, |v| *v += 1);
        assert_eq!(m.get(&"c"), Some(&6));
        m.remove(3, &"a");
        let mut undone = Vec::new();
        m.undo(2, |k| undone.push(*k));
        assert_eq!(undone, ["a", "c"]);
        assert_eq!(
            (m.get(&"a"), m.get(&"b"), m.get(&"c")),
            (Some(&2), Some(&7), None)
        );
        m.undo(1, |_| {});
        assert_eq!((m.get(&"a"), m.get(&"b")), (Some(&1), None));
        m.undo(0, |_| {});
        assert_eq!(m.get(&"a"), None);
    }

    #[test]
    fn a_batch_from_nothing_is_not_remembered() {
        let mut m: Journaled<&str, u32> = Journaled::default();
        m.insert(0, "a", 1);
        m.insert(1, "a", 2);
        m.undo(0, |_| {});
        assert_eq!(m.get(&"a"), Some(&1));
        assert!(m.trail.0.is_empty());
    }

    #[test]
    fn what_is_forgotten_is_not_undone() {
        let mut s: JournaledSet<u8> = JournaledSet::default();
        s.insert(1, 1);
        s.insert(2, 2);
        s.insert(2, 1);
        s.forget(1);
        s.undo(0);
        assert!(s.contains(&1) && !s.contains(&2));
        s.insert(3, 3);
        s.remove(3, &1);
        s.undo(2);
        assert!(s.contains(&1) && !s.contains(&3));
    }
}
