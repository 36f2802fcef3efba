//! Tier manager: LTP strength follows the formula under an injected clock; promotion and
//! demotion follow the thresholds; every tier stays searchable.

mod common;

use std::sync::Arc;

use common::{project, vector_of};
use hypermem::hdv::{Dim, Hypervector};
use hypermem::store::{
    HotTier, Ltp, ManualClock, SearchRequest, SegmentStore, SegmentStoreConfig, Tier, TierManager,
    TierPolicy, VectorId, VectorTier,
};

const DAY: f64 = 86_400.0;

fn dim() -> Dim {
    Dim::new(512).unwrap()
}

fn manager(dir: &std::path::Path, clock: Arc<ManualClock>, hot_capacity: usize) -> TierManager {
    let cfg = SegmentStoreConfig::default();
    let warm = Arc::new(SegmentStore::open_or_create(dir.join("warm"), dim(), cfg).unwrap());
    let cold = Arc::new(SegmentStore::open_or_create(dir.join("cold"), dim(), cfg).unwrap());
    let policy = TierPolicy {
        lambda: 1.0 / DAY,
        promote: 1.5,
        demote: 0.5,
        cold: 0.1,
    };
    TierManager::new(HotTier::new(dim(), hot_capacity), warm, cold, policy, clock).unwrap()
}

#[test]
fn strength_is_importance_times_log_accesses_times_decay() {
    assert_eq!(Ltp::strength(2.0, 0, 0.0, 1.0), 0.0);
    assert!((Ltp::strength(2.0, 1, 0.0, 1.0) - 2.0 * 2f64.ln()).abs() < 1e-12);
    let s = Ltp::strength(3.0, 4, 10.0, 0.05);
    assert!((s - 3.0 * 5f64.ln() * (-0.5f64).exp()).abs() < 1e-12);
    // A negative age (clock skew) does not amplify.
    assert_eq!(
        Ltp::strength(1.0, 1, -5.0, 1.0),
        Ltp::strength(1.0, 1, 0.0, 1.0)
    );
}

#[test]
fn promotion_and_demotion_follow_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(1_000.0));
    let m = manager(dir.path(), clock.clone(), 10);
    let p = project("p");
    for i in 0..6u64 {
        m.insert(
            &p,
            VectorId(i),
            vector_of(dim(), "p", i).view(),
            1.0 + i as f64,
        )
        .unwrap();
    }
    // Insertion counts as one access: S = I ln 2.
    let s5 = m.strength(&p, VectorId(5)).unwrap();
    assert!((s5 - 6.0 * 2f64.ln()).abs() < 1e-9);
    // Touch id 0 three times: S = 1 * ln(5) ≈ 1.609 ≥ promote.
    m.touch(&p, &[VectorId(0), VectorId(0), VectorId(0)]);
    let r = m.rebalance(&p).unwrap();
    // Promoted: every trace with S ≥ 1.5: ids 0 (1.61), 2 (3 ln2 = 2.08), 3, 4, 5.
    assert_eq!(r.promoted, 5);
    assert!(
        !m.trace(&p, VectorId(1)).unwrap().in_hot,
        "2 ln 2 = 1.386 < 1.5"
    );
    assert!(m.trace(&p, VectorId(0)).unwrap().in_hot);
    assert_eq!(m.hot().len(&p), 5);
    // Four days later: e^-4 ≈ 0.018. Id 5: 6 ln2 e^-4 = 0.076 < cold; all demoted from hot.
    clock.advance(4.0 * DAY);
    let r = m.rebalance(&p).unwrap();
    assert_eq!(r.demoted_from_hot, 5);
    assert_eq!(r.demoted_to_cold, 6);
    for i in 0..6 {
        let t = m.trace(&p, VectorId(i)).unwrap();
        assert_eq!((t.home, t.in_hot), (Tier::Cold, false), "id {i}");
    }
    // Demoted memories stay searchable, from the cold tier.
    for i in 0..6u64 {
        let q = vector_of(dim(), "p", i);
        let hits = m.search(&p, &SearchRequest::new(q.view(), 1)).unwrap();
        assert_eq!((hits[0].id, hits[0].distance), (VectorId(i), 0));
        assert_eq!(m.get(&p, VectorId(i)).unwrap().unwrap(), q);
    }
    // A recalled memory gets strong again and comes back to warm and hot.
    for _ in 0..10 {
        m.touch(&p, &[VectorId(3)]);
    }
    let r = m.rebalance(&p).unwrap();
    assert_eq!((r.rehomed_to_warm, r.promoted), (1, 1));
    let t = m.trace(&p, VectorId(3)).unwrap();
    assert_eq!((t.home, t.in_hot, t.accesses), (Tier::Warm, true, 11));
    // A read of many, over a hot copy (3), cold homes and an untraced id (42), gives each
    // stored vector in the order asked.
    let asked = [5u64, 3, 42, 0, 3].map(VectorId);
    let want: Vec<Option<Hypervector>> = asked
        .iter()
        .map(|id| (id.0 < 6).then(|| vector_of(dim(), "p", id.0)))
        .collect();
    assert_eq!(m.get_many(&p, &asked).unwrap(), want);
}

#[test]
fn hot_capacity_goes_to_the_strongest_and_search_deduplicates() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(0.0));
    let m = manager(dir.path(), clock, 2);
    let p = project("p");
    for i in 0..5u64 {
        m.insert(
            &p,
            VectorId(i),
            vector_of(dim(), "p", i).view(),
            3.0 + i as f64,
        )
        .unwrap();
    }
    let r = m.rebalance(&p).unwrap();
    assert_eq!(r.promoted, 2);
    assert!(m.trace(&p, VectorId(4)).unwrap().in_hot && m.trace(&p, VectorId(3)).unwrap().in_hot);
    // A hot copy and its warm original are one hit.
    let q = vector_of(dim(), "p", 4);
    let hits = m.search(&p, &SearchRequest::new(q.view(), 5)).unwrap();
    assert_eq!(hits.len(), 5);
    let mut ids: Vec<_> = hits.iter().map(|h| h.id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 5);
}

#[test]
fn deletion_and_project_drop_reach_every_tier() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(0.0));
    let m = manager(dir.path(), clock.clone(), 10);
    let (p, other) = (project("p"), project("other"));
    for i in 0..4u64 {
        m.insert(&p, VectorId(i), vector_of(dim(), "p", i).view(), 5.0)
            .unwrap();
        m.insert(
            &other,
            VectorId(i),
            vector_of(dim(), "other", i).view(),
            5.0,
        )
        .unwrap();
    }
    m.rebalance(&p).unwrap();
    assert_eq!(m.hot().len(&p), 4);
    assert!(m.delete(&p, VectorId(1)).unwrap());
    assert!(m.get(&p, VectorId(1)).unwrap().is_none());
    assert_eq!(m.hot().len(&p), 3);
    assert_eq!(m.drop_project(&p).unwrap(), 3);
    assert!(m.is_empty(&p));
    assert_eq!(m.hot().len(&p), 0);
    let q = vector_of(dim(), "p", 0);
    assert!(
        m.search(&p, &SearchRequest::new(q.view(), 3))
            .unwrap()
            .is_empty()
    );
    assert_eq!(m.len(&other), 4);
    // Duplicate ids are refused across homes.
    assert!(m.insert(&other, VectorId(2), q.view(), 1.0).is_err());
}

#[test]
fn traces_are_rebuilt_from_the_durable_tiers_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(0.0));
    {
        let m = manager(dir.path(), clock.clone(), 10);
        for i in 0..3u64 {
            m.insert(
                &project("p"),
                VectorId(i),
                vector_of(dim(), "p", i).view(),
                1.0,
            )
            .unwrap();
        }
        clock.advance(100.0 * DAY);
        m.rebalance(&project("p")).unwrap();
    }
    let m = manager(dir.path(), clock, 10);
    assert_eq!(m.len(&project("p")), 3);
    assert_eq!(
        m.trace(&project("p"), VectorId(1)).unwrap().home,
        Tier::Cold
    );
}

#[test]
fn a_rebalance_stops_at_its_deadline_and_reports_what_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(0.0));
    let m = manager(dir.path(), clock.clone(), 100);
    let p = project("p");
    for i in 0..20u64 {
        m.insert(&p, VectorId(i), vector_of(dim(), "p", i).view(), 1.0)
            .unwrap();
    }
    clock.advance(30.0 * DAY);
    // A deadline already past: nothing moves, every due move is left for later.
    let r = m
        .rebalance_bounded(&p, usize::MAX, Some(std::time::Instant::now()))
        .unwrap();
    assert_eq!((r.demoted_to_cold, r.left), (0, 20));
    // A move budget of 5: five move now (in one cold batch), fifteen are left.
    let r = m.rebalance_bounded(&p, 5, None).unwrap();
    assert_eq!((r.demoted_to_cold, r.left), (5, 15));
    let r = m.rebalance(&p).unwrap();
    assert_eq!((r.demoted_to_cold, r.left), (15, 0));
    for i in 0..20 {
        assert_eq!(m.trace(&p, VectorId(i)).unwrap().home, Tier::Cold);
    }
}
