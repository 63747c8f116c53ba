//! `zeroplay report`: what self-play tells the game's designer, from a run's Parquet store.
//! An HTML page (SVG plots, English and Chinese) and a JSON file; the verdicts are printed too.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

/// `zeroplay report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A run directory (`zeroplay local`'s runs/NAME): its games/ are read, and the report goes
    /// to its report/ (served by `zeroplay serve --report RUN/report` at /report).
    #[arg(long)]
    pub run: Option<PathBuf>,
    /// A Parquet store to read instead (repeat it to pool stores, e.g. two runs under two rule
    /// options, compared side by side): a directory, or s3://BUCKET/PREFIX, whose games/ are
    /// fetched into OUT/store/ first (keys from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY).
    #[arg(long = "data-dir")]
    pub data_dir: Vec<String>,
    /// Where to write report.html and report.json (default: RUN/report, else ./report).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Endpoint of an S3-compatible server for an s3:// store, e.g. http://minio:9000.
    #[arg(long, env = "ZEROPLAY_STORAGE_ENDPOINT")]
    pub storage_endpoint: Option<String>,
    /// Allow a plain-HTTP storage endpoint (trusted networks only).
    #[arg(long)]
    pub storage_allow_http: bool,
}

/// Runs `zeroplay report`.
///
/// # Errors
/// No store named, a store that cannot be listed or fetched, an unwritable output directory.
pub fn run(args: ReportArgs) -> Result<()> {
    let out = args.out.clone().unwrap_or_else(|| match &args.run {
        Some(r) => r.join("report"),
        None => PathBuf::from("report"),
    });
    let mut dirs = Vec::new();
    if let Some(r) = &args.run {
        dirs.push(r.join("games"));
    }
    for (i, d) in args.data_dir.iter().enumerate() {
        if d.starts_with("s3://") {
            dirs.push(fetch(d, &out.join("store").join(i.to_string()), &args)?);
        } else {
            dirs.push(PathBuf::from(d));
        }
    }
    if dirs.is_empty() {
        bail!("name a run (--run runs/NAME) or a store (--data-dir DIR)");
    }
    for d in &dirs {
        if !d.is_dir() {
            bail!("{} is not a directory of Parquet game files", d.display());
        }
    }
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("reading {pos}/{len} files {wide_bar} {eta}").expect("a valid template"),
    );
    let report = report::build(&dirs, |done, of| {
        bar.set_length(of as u64);
        bar.set_position(done as u64);
    })
    .context("reading the store")?;
    bar.finish_and_clear();
    let page = report::write(&report, &out).with_context(|| format!("writing {}", out.display()))?;
    print!("{}", summary(&report));
    println!("report: {} (and report.json)", page.display());
    Ok(())
}

/// The verdicts in plain text, one line per game and option set.
pub fn summary(r: &report::Report) -> String {
    let mut s = format!("{} games from {} files ({} left out)\n", r.games, r.files_read, r.skipped.len());
    for g in &r.groups {
        let f = &g.first;
        let verdict = f.verdict().0;
        s += &format!(
            "{} ({}): first player {:.1}% [{:.1}, {:.1}] over {} games (W {} D {} L {}), mean margin {:+.2}: {verdict}\n",
            g.title,
            g.options_text,
            100.0 * f.score,
            100.0 * f.low,
            100.0 * f.high,
            f.games,
            f.wins,
            f.draws,
            f.losses,
            f.margin
        );
    }
    s
}

/// Fetches an s3:// store's games/ into `local`; returns `local`.
fn fetch(url: &str, local: &Path, args: &ReportArgs) -> Result<PathBuf> {
    zeroplay_storage::install_crypto_provider();
    let cfg = zeroplay_storage::StorageConfig {
        url: url.to_string(),
        endpoint: args.storage_endpoint.clone().unwrap_or_default(),
        allow_http: args.storage_allow_http,
        ..Default::default()
    };
    let remote = zeroplay_storage::Remote::open(&cfg, zeroplay_storage::Credentials::from_env().as_ref())
        .with_context(|| format!("opening {url}"))?;
    std::fs::create_dir_all(local).with_context(|| format!("creating {}", local.display()))?;
    let job = zeroplay_storage::Job::pull("games", local, &[".parquet"]);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let pass = rt.block_on(zeroplay_storage::run_pass(&remote, &job, &mut HashMap::new()))?;
    if let Some((name, e)) = pass.failed.first() {
        bail!("fetching {url}/games/{name}: {e}");
    }
    eprintln!("fetched {} files ({} bytes) from {url}/games", pass.transferred, pass.bytes);
    Ok(local.to_path_buf())
}
