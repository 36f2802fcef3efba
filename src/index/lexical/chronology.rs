//! Where each event sits in its conversation: its session and the turns just before and
//! after it there, and the turns that only ask (a bridge from the turn before to the reply).
//! Written at observe time with the lexical index and saved with it; recall's fusion reads
//! it to let a turn borrow its neighbours' evidence.

use std::collections::HashMap;

/// Maps keyed by ids the engine assigned (no outsider chooses them): FxHash.
type FxMap<K, V> = HashMap<K, V, hdv::fasthash::FxBuild>;

/// Where each item sits in its conversation: its session and the items just before and
/// after it there.
#[derive(Debug, Default, Clone)]
pub struct Chronology {
    /// Item → (session index, previous, next).
    place: FxMap<u64, (u32, Option<u64>, Option<u64>)>,
    /// Session name → (index, last item).
    sessions: HashMap<Box<str>, (u32, u64)>,
    /// Items that only ask ([`crate::text::statements::asks_only`]): the turn before one
    /// lends to the turn after it too ([`reach`](Self::reach)).
    bridges: std::collections::HashSet<u64, hdv::fasthash::FxBuild>,
    /// Items said by the same author as the item before them in their session
    /// ([`continues`](Self::continues)): no share passes between the two, since
    /// consecutive notes of one author are a list, not an exchange.
    runs: std::collections::HashSet<u64, hdv::fasthash::FxBuild>,
}

impl Chronology {
    /// Appends `id` (ids arrive in append order) to `session` (`None`: no session, no
    /// neighbours).
    pub fn push(&mut self, id: u64, session: Option<&str>) {
        let Some(name) = session else { return };
        let next_index = self.sessions.len() as u32;
        match self.sessions.get_mut(name) {
            Some((index, last)) => {
                let prev = *last;
                *last = id;
                let index = *index;
                if let Some(p) = self.place.get_mut(&prev) {
                    p.2 = Some(id);
                }
                self.place.insert(id, (index, Some(prev), None));
            }
            None => {
                self.sessions.insert(name.into(), (next_index, id));
                self.place.insert(id, (next_index, None, None));
            }
        }
    }

    /// Marks `id` as a turn that only asks: the turn before it lends to the turn after it
    /// as well (a question about what was just said, then its answer).
    pub fn bridge(&mut self, id: u64) {
        self.bridges.insert(id);
    }

    /// Marks `id` as said by the same author as the item before it in its session: a
    /// note after a note, not a reply. Neither lends the other its share.
    pub fn continues(&mut self, id: u64) {
        self.runs.insert(id);
    }

    /// The turns `id` lends to: the turns just before and after it in its session, and
    /// with `bridge`, when the turn after it only asks, the turn after that (the reply to a
    /// question about what `id` said is about it too). Only forward: what a reply says
    /// does not make the turn before the question more relevant.
    pub fn reach(&self, id: u64, bridge: bool) -> Option<(u32, [Option<u64>; 3])> {
        let (session, [prev, next]) = self.place(id)?;
        // Only across a change of author: a reply and what it answers.
        let prev = prev.filter(|_| !self.runs.contains(&id));
        let next = next.filter(|n| !self.runs.contains(n));
        let beyond = |n: Option<u64>| {
            n.filter(|n| bridge && self.bridges.contains(n))
                .and_then(|n| self.place.get(&n))
                .and_then(|p| p.2)
                .filter(|n| !self.runs.contains(n))
        };
        Some((session, [prev, next, beyond(next)]))
    }

    /// The session index of `id`.
    pub fn session(&self, id: u64) -> Option<u32> {
        self.place.get(&id).map(|p| p.0)
    }

    /// The items just before and after `id` in its session.
    pub fn neighbours(&self, id: u64) -> [Option<u64>; 2] {
        self.place(id).map_or([None, None], |(_, n)| n)
    }

    /// The session index of `id` and its neighbours there, in one lookup.
    pub fn place(&self, id: u64) -> Option<(u32, [Option<u64>; 2])> {
        self.place.get(&id).map(|p| (p.0, [p.1, p.2]))
    }

    /// Appends the session of each of `ids` (in the order they were pushed) to `out`: the
    /// session names in index order (count u64, then byte length u32 and UTF-8 bytes each),
    /// then per id its session index (u32, `u32::MAX` for none), then the bridges (count
    /// u64, then each id u64, ascending), then the runs the same way; little-endian.
    pub fn write_to(&self, ids: &[u64], out: &mut Vec<u8>) {
        let mut names: Vec<(&str, u32)> = self
            .sessions
            .iter()
            .map(|(name, &(index, _))| (name.as_ref(), index))
            .collect();
        names.sort_unstable_by_key(|&(_, index)| index);
        out.extend_from_slice(&(names.len() as u64).to_le_bytes());
        for (name, _) in names {
            out.extend_from_slice(&(name.len() as u32).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
        }
        out.extend_from_slice(&(ids.len() as u64).to_le_bytes());
        for id in ids {
            let index = self.session(*id).unwrap_or(u32::MAX);
            out.extend_from_slice(&index.to_le_bytes());
        }
        let mut bridges: Vec<u64> = self.bridges.iter().copied().collect();
        bridges.sort_unstable();
        out.extend_from_slice(&(bridges.len() as u64).to_le_bytes());
        for id in bridges {
            out.extend_from_slice(&id.to_le_bytes());
        }
        let mut runs: Vec<u64> = self.runs.iter().copied().collect();
        runs.sort_unstable();
        out.extend_from_slice(&(runs.len() as u64).to_le_bytes());
        for id in runs {
            out.extend_from_slice(&id.to_le_bytes());
        }
    }

    /// Rebuilds a chronology written by [`write_to`](Self::write_to) for `ids`, reading
    /// from the front of `input`; `None` if it is malformed or holds another number of ids.
    pub fn read_from(input: &mut &[u8], ids: &[u64]) -> Option<Self> {
        let mut take = |n: usize| -> Option<&[u8]> {
            let (head, rest) = input.split_at_checked(n)?;
            *input = rest;
            Some(head)
        };
        let count = u64::from_le_bytes(take(8)?.try_into().ok()?);
        let mut names = Vec::new();
        for _ in 0..count {
            let len = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
            names.push(std::str::from_utf8(take(len)?).ok()?.to_owned());
        }
        if u64::from_le_bytes(take(8)?.try_into().ok()?) != ids.len() as u64 {
            return None;
        }
        let mut chronology = Self::default();
        for &id in ids {
            let index = u32::from_le_bytes(take(4)?.try_into().ok()?);
            let name = match index {
                u32::MAX => None,
                i => Some(names.get(i as usize)?.as_str()),
            };
            chronology.push(id, name);
        }
        let bridges = u64::from_le_bytes(take(8)?.try_into().ok()?);
        for _ in 0..bridges {
            chronology.bridge(u64::from_le_bytes(take(8)?.try_into().ok()?));
        }
        let runs = u64::from_le_bytes(take(8)?.try_into().ok()?);
        for _ in 0..runs {
            chronology.continues(u64::from_le_bytes(take(8)?.try_into().ok()?));
        }
        Some(chronology)
    }
}

#[cfg(test)]
mod tests {
    use super::Chronology;

    #[test]
    fn a_chronology_reads_back_as_written() {
        let mut chron = Chronology::default();
        let ids = [3, 4, 7, 9, 12];
        for (&id, s) in ids
            .iter()
            .zip([Some("a"), Some("b"), None, Some("a"), Some("b")])
        {
            chron.push(id, s);
        }
        chron.bridge(9);
        chron.continues(12);
        let mut bytes = Vec::new();
        chron.write_to(&ids, &mut bytes);
        let mut input = bytes.as_slice();
        let back = Chronology::read_from(&mut input, &ids).unwrap();
        assert!(input.is_empty());
        for id in ids {
            assert_eq!(back.neighbours(id), chron.neighbours(id), "{id}");
            assert_eq!(back.session(id), chron.session(id), "{id}");
            assert_eq!(back.reach(id, true), chron.reach(id, true), "{id}");
        }
        assert_eq!(back.reach(3, true), Some((0, [None, Some(9), None])));
        // 12 continues 4 by the same author: neither lends the other.
        assert_eq!(back.reach(4, true), Some((1, [None, None, None])));
        assert_eq!(back.reach(12, true), Some((1, [None, None, None])));
        let mut short = &bytes[..bytes.len() - 1];
        assert!(Chronology::read_from(&mut short, &ids).is_none());
        let mut input = bytes.as_slice();
        assert!(
            Chronology::read_from(&mut input, &ids[1..]).is_none(),
            "another id count"
        );
    }
}
