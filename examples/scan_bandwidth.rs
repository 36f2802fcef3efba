//! Scan throughput against the memory-bandwidth limit, measured in one process.
//!
//! Fills a buffer of N random D-bit vectors (default 1,000,000 × 10,048 bits ≈ 1.26 GB, far
//! larger than any cache; an `hdv::BlockBuf`, so in transparent huge pages where the system
//! allows, as any large block the library owns), then alternates, `--reps` times each:
//! - a sequential read of the whole buffer (`Kernel::fold_xor`: eight independent XOR
//!   accumulators at the kernel's widest width, the physical limit of a scan on one core), and
//! - an exact single-query top-10 scan over the same buffer with the active `hdv` kernel.
//!
//! It prints the medians and their ratio; the last line is `ratio <scan GB/s ÷ read GB/s>`.
//! Before it, one line per kernel tier this CPU runs (`kernel_gbs <tier> <GB/s> ratio
//! <x>`): that tier's distance pass over the same buffer on one thread, timed in the same
//! repetitions, so a wider tier slower than a narrower one shows in every report.
//! With `--batch Q` it also reports a batch of Q queries over the first `--batch-n` vectors.
//! With `--threads T` (T > 1) both the read and the scan are split over T rayon threads
//! (the read as T × 4 `fold_xor` slices, the scan as `Scan::par_top_k`), so the ratio is the
//! parallel scan against the parallel read limit of the same run.
//!
//! ```sh
//! cargo run --release --example scan_bandwidth -- --n 1000000 --dim 10048 --reps 7
//! HDV_KERNEL=avx2 cargo run --release --example scan_bandwidth
//! cargo run --release --example scan_bandwidth -- --threads 2 --batch 0
//! ```

use std::hint::black_box;
use std::time::Instant;

use hypermem::hdv::{Block, BlockBuf, Dim, Hypervector, Scan, SeededRng};
use rayon::prelude::*;

struct Args {
    n: usize,
    dim: usize,
    reps: usize,
    k: usize,
    batch: usize,
    batch_n: usize,
    threads: usize,
}

fn parse_args() -> Args {
    let mut args = Args {
        n: 1_000_000,
        dim: 10_048,
        reps: 7,
        k: 10,
        batch: 100,
        batch_n: 100_000,
        threads: 1,
    };
    const USAGE: &str = "usage: scan_bandwidth [--n N] [--dim BITS] [--reps R] [--k K] \
                         [--batch Q (0 = skip)] [--batch-n N] [--threads T]";
    // A bad command line prints the usage and exits 2; `--help` prints it and exits 0.
    let refuse = |why: String| -> ! {
        eprintln!("scan_bandwidth: {why}\n{USAGE}");
        std::process::exit(2)
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        let mut value = || -> usize {
            let v = it
                .next()
                .unwrap_or_else(|| refuse(format!("{flag} needs a value")));
            v.replace('_', "")
                .parse()
                .unwrap_or_else(|_| refuse(format!("{flag}: not a number: {v}")))
        };
        match flag.as_str() {
            "--n" => args.n = value(),
            "--dim" => args.dim = value(),
            "--reps" => args.reps = value().max(1),
            "--k" => args.k = value(),
            "--batch" => args.batch = value(),
            "--batch-n" => args.batch_n = value(),
            "--threads" => args.threads = value().max(1),
            other => refuse(format!("unknown flag {other}")),
        }
    }
    args
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let args = parse_args();
    let dim = Dim::new(args.dim).expect("--dim must be a positive multiple of 64");
    let w = dim.words();
    let bytes = args.n * dim.bytes();
    eprintln!(
        "filling {} vectors x {} bits = {:.2} GB ...",
        args.n,
        args.dim,
        bytes as f64 / 1e9
    );
    // Held as the library holds a block it owns (`BlockBuf`: huge pages when large).
    let mut buf = BlockBuf::zeroed(dim, args.n);
    buf.words_mut()
        .par_chunks_mut(w * 4096)
        .enumerate()
        .for_each(|(i, chunk)| {
            let mut rng = SeededRng::new(i as u64);
            chunk.iter_mut().for_each(|x| *x = rng.next_u64());
        });
    let block = buf.block();
    let data = block.words();
    let scan = Scan::new(args.k);
    let kernel = hypermem::hdv::kernels::active();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads)
        .build()
        .expect("a thread pool");
    // The read limit: one pass over the buffer, in as many slices as the scan's tasks.
    let slice = (data.len() / (args.threads * 4)).max(w);
    let read_all = || {
        if args.threads == 1 {
            kernel.fold_xor(black_box(data))
        } else {
            pool.install(|| {
                data.par_chunks(slice)
                    .map(|c| kernel.fold_xor(black_box(c)))
                    .reduce(|| 0, |a, b| a ^ b)
            })
        }
    };
    let scan_all = |query: &Hypervector| {
        if args.threads == 1 {
            scan.top_k(&block, query)
        } else {
            pool.install(|| scan.par_top_k(&block, query))
        }
    };

    // The AVX-512 scan measures its two tiles on its first long scans and keeps the faster
    // (`hdv::kernels::scan_tile`): a one-off per process, done before timing.
    let mut warmup = 0;
    while hypermem::hdv::kernels::scan_tile().is_none() && warmup < 16 {
        black_box(scan_all(&Hypervector::random(dim, 2_000_000 + warmup)).expect("same dimension"));
        warmup += 1;
    }
    let (mut read, mut single) = (Vec::new(), Vec::new());
    // Each tier's distance pass, block by block into one reused buffer (what a single
    // query's scan reads; the top-k selection over the distances is left out).
    let tiers = hypermem::hdv::Kernel::available();
    let mut per_tier: Vec<Vec<f64>> = vec![Vec::new(); tiers.len()];
    let chunk = 4096;
    let mut distances = vec![0u32; chunk];
    for rep in 0..args.reps {
        let t = Instant::now();
        black_box(read_all());
        read.push(bytes as f64 / t.elapsed().as_secs_f64() / 1e9);

        let query = Hypervector::random(dim, 3_000_000 + rep as u64);
        for (tier, rates) in tiers.iter().zip(&mut per_tier) {
            let t = Instant::now();
            for block in data.chunks(chunk * w) {
                let out = &mut distances[..block.len() / w];
                tier.distances(query.words(), black_box(block), out);
                black_box(&out);
            }
            rates.push(bytes as f64 / t.elapsed().as_secs_f64() / 1e9);
        }

        let query = Hypervector::random(dim, 1_000_000 + rep as u64);
        let t = Instant::now();
        let hits = scan_all(&query).expect("same dimension");
        single.push(bytes as f64 / t.elapsed().as_secs_f64() / 1e9);
        assert_eq!(hits.len(), args.k.min(args.n));
    }
    let (read_gbs, scan_gbs) = (median(read), median(single));
    let per_query = bytes as f64 / (scan_gbs * 1e9);
    println!(
        "kernel {} scan_tile {}",
        hypermem::hdv::kernel_name(),
        hypermem::hdv::kernels::scan_tile().map_or("measuring".to_owned(), |t| t.to_string())
    );
    println!("threads {}", args.threads);
    println!("vectors {} dim {} bytes {}", args.n, args.dim, bytes);
    println!("read_gbs {read_gbs:.2}");
    for (tier, rates) in tiers.iter().zip(per_tier) {
        let gbs = median(rates);
        println!(
            "kernel_gbs {} {gbs:.2} ratio {:.3}",
            tier.name(),
            gbs / read_gbs
        );
    }
    println!("scan_gbs {scan_gbs:.2}");
    println!(
        "single_query_qps {:.2} vectors_per_s {:.3e}",
        1.0 / per_query,
        args.n as f64 / per_query
    );

    if args.batch > 0 {
        let n = args.batch_n.min(args.n);
        let sub = block.slice(0..n);
        let queries: Vec<u64> = (0..args.batch as u64)
            .flat_map(|i| Hypervector::random(dim, 5_000_000 + i).into_words())
            .collect();
        let qblock = Block::new(&queries, dim).expect("whole vectors");
        let (mut one, mut many) = (Vec::new(), Vec::new());
        for _ in 0..args.reps {
            let t = Instant::now();
            for q in qblock.iter().take(10) {
                black_box(scan.top_k(&sub, &q).expect("same dimension"));
            }
            one.push(10.0 / t.elapsed().as_secs_f64());
            let t = Instant::now();
            black_box(scan.top_k_batch(&sub, &qblock).expect("same dimension"));
            many.push(args.batch as f64 / t.elapsed().as_secs_f64());
        }
        let (one, many) = (median(one), median(many));
        println!(
            "batch_n {n} single_qps {one:.1} batch{}_qps {many:.1} batch_speedup {:.2}",
            args.batch,
            many / one
        );
    }
    println!("ratio {:.3}", scan_gbs / read_gbs);
}
