//! Profile files: the shipped ones load, and every kind of bad input is an error that names
//! what was wrong.

use hypermem::{ConfigError, Profile, ProfileKind};

const LITE: &str = r#"
[profile]
name = "lite"
data_dir = "/tmp/x"
[vectors]
dim = 8192
"#;

#[test]
fn shipped_lite_profile_loads() {
    let p = Profile::load(Profile::bundled_path(ProfileKind::Lite)).unwrap();
    assert_eq!(p.kind, ProfileKind::Lite);
    assert_eq!(p.dim.bits(), 8192);
    assert_eq!(p.text, hypermem::hdv::encode::TextConfig::default());
}

#[test]
fn every_shipped_profile_parses_or_names_its_missing_feature() {
    for kind in [ProfileKind::Lite, ProfileKind::Standard, ProfileKind::Scale] {
        match Profile::load(Profile::bundled_path(kind)) {
            Ok(p) => assert!(kind.is_built() && p.kind == kind),
            Err(ConfigError::NotBuilt { profile, .. }) => {
                assert!(!kind.is_built());
                assert_eq!(profile, kind.name());
            }
            Err(e) => panic!("{kind:?}: {e}"),
        }
    }
}

#[test]
fn text_section_defaults_when_absent() {
    let p = Profile::parse(LITE, "<test>").unwrap();
    assert_eq!(p.data_dir.to_str(), Some("/tmp/x"));
    assert_eq!(p.text, hypermem::hdv::encode::TextConfig::default());
}

fn err(toml: &str) -> String {
    Profile::parse(toml, "<test>").unwrap_err().to_string()
}

#[test]
fn bad_values_name_their_key() {
    let e = err(&LITE.replace("8192", "8100"));
    assert!(
        e.contains("vectors.dim") && e.contains("multiple of 64"),
        "{e}"
    );
    let e = err(&LITE.replace("8192", "0"));
    assert!(e.contains("vectors.dim"), "{e}");
    let e = err(&format!("{LITE}[text]\nngram = 12\n"));
    assert!(e.contains("text.ngram"), "{e}");
    let e = err(&format!("{LITE}[text]\nquantum = 0.5\n"));
    assert!(e.contains("text.quantum"), "{e}");
    let e = err(&format!("{LITE}[text]\norder_weight = -1.0\n"));
    assert!(e.contains("text.order_weight"), "{e}");
    let e = err(&LITE.replace("/tmp/x", ""));
    assert!(e.contains("profile.data_dir"), "{e}");
}

#[test]
fn unknown_keys_and_types_are_rejected_by_name() {
    let e = err(&LITE.replace("dim = 8192", "dim = 8192\ndimension = 3"));
    assert!(e.contains("dimension"), "{e}");
    let e = err(&LITE.replace("8192", "\"big\""));
    assert!(e.contains("dim"), "{e}");
    let e = err(&LITE.replace("\"lite\"", "\"huge\""));
    assert!(e.contains("huge"), "{e}");
    let e = err("not toml at all [");
    assert!(e.starts_with("profile <test>"), "{e}");
}

#[test]
fn missing_file_names_the_path() {
    let e = Profile::load("/nonexistent/hypermem.toml").unwrap_err();
    assert!(matches!(e, ConfigError::Io { .. }));
    assert!(e.to_string().contains("/nonexistent/hypermem.toml"), "{e}");
}

#[test]
fn a_profile_without_its_feature_is_refused() {
    let standard = LITE.replace("\"lite\"", "\"standard\"");
    let built = ProfileKind::Standard.is_built();
    match Profile::parse(&standard, "<test>") {
        Ok(p) => assert!(built && p.kind == ProfileKind::Standard),
        Err(e) => {
            assert!(!built);
            assert!(e.to_string().contains("--features standard"), "{e}");
        }
    }
}

#[test]
fn store_tier_and_hnsw_knobs_are_loaded_and_validated() {
    let p = Profile::load(Profile::bundled_path(ProfileKind::Lite)).unwrap();
    assert_eq!(p.store.segment_capacity, 65_536);
    assert_eq!(p.store.hnsw.m, 16);
    assert_eq!(p.store.hnsw_threshold, 50_000);
    assert_eq!(
        (p.store.prefix_bits, p.store.prefix_threshold),
        (2048, 20_000)
    );
    assert_eq!(p.hot_capacity, 100_000);
    assert!((p.tiers.lambda * 86_400.0 * 7.0 - 1.0).abs() < 1e-9);
    for (section, key) in [
        ("[store]\nsegment_capacity = 0\n", "store.segment_capacity"),
        ("[store]\nprefix_bits = 1000\n", "store.prefix_bits"),
        ("[store]\nprefix_bits = 10048\n", "store.prefix_bits"),
        ("[tiers]\ndemote = 2.0\n", "tiers.demote"),
        ("[tiers]\ncold = 0.9\n", "tiers.cold"),
        ("[tiers]\nlambda_per_day = -1.0\n", "tiers.lambda_per_day"),
        ("[hnsw]\nm = 300\n", "hnsw.m"),
        ("[hnsw]\nef_construction = 4\n", "hnsw.ef_construction"),
        ("[hnsw]\nef_search = 0\n", "hnsw.ef_search"),
        ("[hnsw]\nthreshold = 0\n", "hnsw.threshold"),
        ("[hnsw]\nmm = 3\n", "mm"),
    ] {
        let e = err(&format!("{LITE}{section}"));
        assert!(e.contains(key), "{key}: {e}");
    }
}

#[test]
fn cognition_and_pulse_knobs_are_loaded_and_validated() {
    let p = Profile::load(Profile::bundled_path(ProfileKind::Lite)).unwrap();
    assert_eq!(p.cognition, hypermem::cognition::CognitionConfig::default());
    assert!(!p.pulse.background);
    assert_eq!(p.pulse.budget, hypermem::cognition::PulseBudget::default());
    for (section, key) in [
        (
            "[cognition]\nworking_capacity = 0\n",
            "cognition.working_capacity",
        ),
        (
            "[cognition]\nsynapse_rate = 1.0\n",
            "cognition.synapse_rate",
        ),
        (
            "[cognition]\nconcept_similarity = 2.0\n",
            "cognition.concept_similarity",
        ),
        ("[cognition]\nconcept_z = -1.0\n", "cognition.concept_z"),
        ("[server]\nlisten = \"localhost\"\n", "server.listen"),
        (
            "[cognition]\nepisode_idle_secs = 0.0\n",
            "cognition.episode_idle_secs",
        ),
        ("[pulse]\ninterval_secs = -1.0\n", "pulse.interval_secs"),
        ("[pulse]\nitems_per_phase = 0\n", "pulse.items_per_phase"),
        ("[pulse]\nbackgroud = true\n", "backgroud"),
    ] {
        let e = err(&format!("{LITE}{section}"));
        assert!(e.contains(key), "{key}: {e}");
    }
}

#[test]
fn the_lite_profile_refuses_a_redis_section() {
    let e = err(&format!(
        "{LITE}[redis]\nurl = \"redis://127.0.0.1:6379\"\n"
    ));
    assert!(e.contains("`redis`") && e.contains("standard"), "{e}");
}

#[cfg(feature = "standard")]
#[test]
fn redis_settings_are_validated_naming_the_key() {
    let standard = LITE.replace("\"lite\"", "\"standard\"");
    let p = Profile::parse(&standard, "<test>").unwrap();
    assert_eq!(p.redis, Some(hypermem::RedisSettings::default()));
    let shipped = Profile::load(Profile::bundled_path(ProfileKind::Standard)).unwrap();
    assert_eq!(shipped.redis.unwrap().prefix, "hypermem");
    for (line, key) in [
        ("url = \"http://x\"", "redis.url"),
        ("url = \"rediss://x:6380\"", "redis.url"),
        ("prefix = \"has space\"", "redis.prefix"),
        ("prefix = \"\"", "redis.prefix"),
        ("pool_size = 0", "redis.pool_size"),
        ("connect_timeout_ms = 0", "redis.connect_timeout_ms"),
        ("command_timeout_ms = 0", "redis.command_timeout_ms"),
        ("retries = 1000", "redis.retries"),
        ("refresh_ms = 600000", "redis.refresh_ms"),
    ] {
        let e = err(&format!("{standard}[redis]\n{line}\n"));
        assert!(e.contains(key), "{line}: {e}");
    }
    let e = err(&format!("{standard}[redis]\nurl = \"ftp://u:hunter2@h\"\n"));
    assert!(!e.contains("hunter2") && e.contains("u:***@h"), "{e}");
    let e = err(&format!("{standard}[redis]\nport = 1\n"));
    assert!(e.contains("port"), "{e}");
}

#[test]
fn only_the_scale_profile_takes_a_qdrant_section() {
    let e = err(&format!(
        "{LITE}[qdrant]\nurl = \"http://127.0.0.1:6334\"\n"
    ));
    assert!(e.contains("`qdrant`") && e.contains("scale"), "{e}");
}

#[cfg(feature = "scale")]
#[test]
fn qdrant_settings_are_validated_naming_the_key() {
    let scale = LITE.replace("\"lite\"", "\"scale\"");
    let p = Profile::parse(&scale, "<test>").unwrap();
    assert_eq!(p.qdrant, Some(hypermem::QdrantSettings::default()));
    assert!(
        p.redis.is_some(),
        "scale shares access counts through Redis"
    );
    let shipped = Profile::load(Profile::bundled_path(ProfileKind::Scale)).unwrap();
    assert_eq!(shipped.qdrant.unwrap().api_key_env, "QDRANT_API_KEY");
    for (line, key) in [
        ("url = \"redis://x\"", "qdrant.url"),
        ("api_key_env = \"sk-live-123\"", "qdrant.api_key_env"),
        ("collection = \"a b\"", "qdrant.collection"),
        ("shard_number = 0", "qdrant.shard_number"),
        ("replication_factor = 0", "qdrant.replication_factor"),
        (
            "write_consistency_factor = 2",
            "qdrant.write_consistency_factor",
        ),
        ("hnsw_m = 1", "qdrant.hnsw_m"),
        ("ef_search = 1", "qdrant.ef_search"),
        ("timeout_ms = 0", "qdrant.timeout_ms"),
        ("retries = 101", "qdrant.retries"),
        ("nodes = [\"127.0.0.2:6334\"]", "qdrant.nodes"),
    ] {
        let e = err(&format!("{scale}[qdrant]\n{line}\n"));
        assert!(e.contains(key), "{line}: {e}");
    }
    let e = err(&format!("{scale}[qdrant]\napi_key = \"secret\"\n"));
    assert!(e.contains("api_key"), "{e}");
    // The nodes of a cluster: from the file, or as the environment's comma-separated list.
    let p = Profile::parse(
        &format!(
            "{scale}[qdrant]\nnodes = [\"http://127.0.0.2:6334\", \"http://127.0.0.3:6334\"]\n"
        ),
        "<test>",
    )
    .unwrap();
    let mut q = p.qdrant.unwrap();
    assert_eq!(
        q.endpoints().collect::<Vec<_>>(),
        [
            "http://127.0.0.1:6334",
            "http://127.0.0.2:6334",
            "http://127.0.0.3:6334"
        ]
    );
    q.set_endpoints(" http://10.0.0.1:6334 ,http://10.0.0.2:6334,");
    assert_eq!(q.url, "http://10.0.0.1:6334");
    assert_eq!(q.nodes, ["http://10.0.0.2:6334"]);
    q.set_endpoints(" , ");
    assert_eq!(
        q.url, "http://10.0.0.1:6334",
        "an empty list changes nothing"
    );
}

#[test]
fn the_sentence_models_window_reading_is_a_named_choice() {
    let p = Profile::parse(
        &format!("{LITE}[semantic]\nwindows = \"first\"\n"),
        "<test>",
    )
    .unwrap();
    assert_eq!(p.semantic.windows, hypermem::semantic::Windows::First);
    let p = Profile::parse(LITE, "<test>").unwrap();
    assert_eq!(p.semantic.windows, hypermem::semantic::Windows::Mean);
    let e = err(&format!("{LITE}[semantic]\nwindows = \"best\"\n"));
    assert!(e.contains("best") && e.contains("windows"), "{e}");
}

#[test]
fn the_recall_table_resolves_validates_and_names_every_weight() {
    use hypermem::config::{RecallSettings, TurnRegime};
    let p = Profile::parse(LITE, "<test>").unwrap();
    assert_eq!(p.recall, RecallSettings::default());
    assert_eq!(p.recall.turn_regime, TurnRegime::Auto);
    for (text, regime) in [("short", TurnRegime::Short), ("long", TurnRegime::Long)] {
        let p = Profile::parse(
            &format!("{LITE}[recall]\nturn_regime = \"{text}\"\nhint_weight = 0.5\n"),
            "<test>",
        )
        .unwrap();
        assert_eq!(p.recall.turn_regime, regime);
        assert_eq!(p.recall.hint_weight, 0.5);
        assert_eq!(regime.name(), text);
    }
    let e = Profile::parse(
        &format!("{LITE}[recall]\nturn_regime = \"medium\"\n"),
        "<test>",
    )
    .unwrap_err();
    assert!(matches!(e, ConfigError::Parse { .. }), "{e:?}");
    assert!(e.to_string().contains("turn_regime"), "{e}");
    // Every weight is validated under its own key, first failing key first.
    let e = Profile::parse(
        &format!("{LITE}[recall]\nspeaker_weight = -1.0\nbigram_weight = -2.0\n"),
        "<test>",
    )
    .unwrap_err();
    match e {
        ConfigError::Invalid { key, .. } => assert_eq!(key, "recall.speaker_weight"),
        other => panic!("{other:?}"),
    }
    // Names and aliases reach their weights; the sources are the weights marked so.
    let mut r = RecallSettings::default();
    *r.weight_mut("lexical").unwrap() = 0.25;
    assert_eq!(r.fts_weight, 0.25);
    *r.weight_mut("role").unwrap() = 0.5;
    assert_eq!(r.user_bonus, 0.5);
    *r.weight_mut("supersede").unwrap() = 0.75;
    assert_eq!(r.supersede_ratio, 0.75);
    assert!(r.weight_mut("no_such").is_none());
    assert_eq!(RecallSettings::canonical("neighbor"), Some("neighbour"));
    let mut sources = RecallSettings::SOURCES.to_vec();
    sources.sort_unstable();
    assert_eq!(
        sources,
        ["bigram", "bm25", "episode", "ripple", "semantic", "vector"]
    );
    for name in RecallSettings::SOURCES {
        assert!(
            RecallSettings::default().weight_mut(name).is_some(),
            "{name}"
        );
    }
}

/// The ledger's server is the scale profile's; its URL never holds a password (the
/// profile names the variable that does), and only a PostgreSQL URL is one.
#[test]
fn only_the_scale_profile_names_a_ledger_server_and_never_its_password() {
    let e = err(&format!(
        "{LITE}[ledger]\nurl = \"postgres://hm@127.0.0.1:5432/hypermem\"\n"
    ));
    assert!(e.contains("ledger.url") && e.contains("scale"), "{e}");
    // Without a URL the section only names the password's variable: no server.
    let p = Profile::parse(&format!("{LITE}[ledger]\nurl = \"\"\n"), "<test>").unwrap();
    assert_eq!(p.ledger.url, None);
    #[cfg(feature = "scale")]
    {
        let scale = LITE.replace("\"lite\"", "\"scale\"");
        let p = Profile::parse(&scale, "<test>").unwrap();
        assert_eq!(
            p.ledger.url, None,
            "the SQLite file unless a server is named"
        );
        assert_eq!(p.ledger.password_env, "HYPERMEM_LEDGER_PASSWORD");
        let p = Profile::parse(
            &format!(
                "{scale}[ledger]\nurl = \"postgres://hm@db.internal:5432/mem\"\npassword_env = \"MEM_DB_PASS\"\n"
            ),
            "<test>",
        )
        .unwrap();
        assert_eq!(
            p.ledger.url.as_deref(),
            Some("postgres://hm@db.internal:5432/mem")
        );
        assert_eq!(p.ledger.password_env, "MEM_DB_PASS");
        for (line, key, says) in [
            (
                "url = \"postgres://hm:hunter2@db:5432/mem\"",
                "ledger.url",
                "MEM_DB_PASS",
            ),
            ("url = \"mysql://db/mem\"", "ledger.url", "postgres://"),
        ] {
            let e = err(&format!(
                "{scale}[ledger]\npassword_env = \"MEM_DB_PASS\"\n{line}\n"
            ));
            assert!(e.contains(key) && e.contains(says), "{line}: {e}");
            assert!(
                !e.contains("hunter2"),
                "a refusal never repeats a password: {e}"
            );
        }
        let e = err(&format!("{scale}[ledger]\npassword_env = \"MY-PASS\"\n"));
        assert!(
            e.contains("ledger.password_env") && e.contains("environment"),
            "{e}"
        );
    }
}
