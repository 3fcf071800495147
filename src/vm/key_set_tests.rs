use super::*;
use crate::vm::rng::Rng;

fn below(rng: &mut Rng, n: u64) -> u64 {
    rng.next_u64() % n
}

fn check(s: &KeySet, model: &indexmap::IndexSet<Key>) {
    assert_eq!(s.len(), model.len());
    assert!(s.iter().eq(model.iter()), "the keys in order");
    for (i, k) in model.iter().enumerate() {
        assert_eq!(s.get_index_of(k), Some(i), "key {k:?}");
    }
}

/// Random insertions, lookups, pops, removals and truncations, checked
/// against indexmap's set after every one, through sizes that build the
/// table, grow it at once and grow it a piece at a time (with the move
/// interrupted by pops and removals).
#[test]
fn matches_an_index_set_through_every_kind_of_growth() {
    for seed in 1..4u64 {
        let mut rng = Rng::new(seed);
        let mut s = KeySet::default();
        let mut model = indexmap::IndexSet::new();
        let mut checked = 0;
        for step in 0..120_000 {
            let range = if step < 60_000 { 1 << 20 } else { 64 };
            let k = Key::Int(below(&mut rng, range) as i64);
            match below(&mut rng, 100) {
                0..=84 => {
                    let (i, added) = s.insert_full(k.clone());
                    let (j, model_added) = model.insert_full(k);
                    assert_eq!((i, added), (j, model_added));
                }
                85..=92 => assert_eq!(s.pop(), model.pop()),
                // Removal is linear: rare in a big set, or the test is quadratic.
                93..=95 if !model.is_empty() && (model.len() < 5000 || step % 50 == 0) => {
                    let i = below(&mut rng, model.len() as u64) as usize;
                    assert_eq!(s.shift_remove_index(i), model.shift_remove_index(i));
                }
                96 => {
                    let n = model.len().saturating_sub(below(&mut rng, 5) as usize);
                    s.truncate(n);
                    model.truncate(n);
                }
                _ => assert_eq!(s.get_index_of(&k), model.get_index_of(&k)),
            }
            // Checking all of it every step would be quadratic.
            if step % 9973 == 0 || model.len() < 40 {
                check(&s, &model);
                checked += 1;
            }
        }
        check(&s, &model);
        check(&s.clone(), &model);
        assert!(checked > 20);
    }
}

/// A big set grows a piece at a time: right after a growth the old table is
/// still there and lookups find keys in either; the move ends before the
/// next growth.
#[test]
fn a_big_table_moves_its_keys_a_piece_at_a_time() {
    let mut s = KeySet::default();
    let mut saw_moving = false;
    for i in 0..200_000i64 {
        s.insert_full(Key::Str(format!("k{i}").as_str().into()));
        if let Some(m) = &s.old {
            saw_moving = true;
            assert!(m.at < m.table.len() && m.table.len() * 2 == s.table.len());
        }
        assert!(s.len() * 3 <= s.table.len() * 2 || s.len() <= SCAN);
    }
    assert!(saw_moving, "no growth was gradual");
    for i in (0..200_000i64).step_by(997) {
        assert_eq!(s.get_index_of(&Key::Str(format!("k{i}").as_str().into())), Some(i as usize));
    }
    assert_eq!(s.get_index_of(&Key::Str("absent".into())), None);
}

/// Keys of different kinds that hash alike are still told apart.
#[test]
fn keys_of_every_kind() {
    let keys = [
        Key::Nil,
        Key::Bool(false),
        Key::Bool(true),
        Key::Int(0),
        Key::Int(1),
        Key::Str("".into()),
        Key::Str("1".into()),
        Key::Bytes(std::rc::Rc::from(&b"1"[..])),
    ];
    let many: Vec<Key> = keys.iter().cloned().chain((2..20).map(Key::Int)).collect();
    let s: KeySet = many.iter().cloned().chain(many.iter().cloned()).collect();
    assert_eq!(s.len(), many.len());
    for (i, k) in many.iter().enumerate() {
        assert_eq!(s.get_index_of(k), Some(i));
    }
}

/// `moving` says whether some set on this thread is rebuilding its index a
/// piece at a time: from the growth that starts it until the move ends, or
/// until the set is dropped or cut short mid-move.
#[test]
fn moving_is_true_exactly_while_a_move_is_under_way() {
    let mut s = KeySet::default();
    let mut i = 0;
    while !moving() {
        s.insert_full(Key::Int(i));
        i += 1;
        assert!(i < 1 << 20, "a big set grows a piece at a time");
    }
    assert!(s.old.is_some());
    while s.old.is_some() {
        assert!(moving());
        s.insert_full(Key::Int(i));
        i += 1;
    }
    assert!(!moving());
    while !moving() {
        s.insert_full(Key::Int(i));
        i += 1;
    }
    drop(s);
    assert!(!moving(), "a set dropped mid-move is not moving");
    let mut t: KeySet = (0..100_000).map(Key::Int).collect();
    while !moving() {
        t.insert_full(Key::Int(i));
        i += 1;
    }
    t.truncate(10);
    assert!(!moving(), "a set cut short is not moving");
}
