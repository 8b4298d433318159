//! Paths and URLs to object stores.
//!
//! [`parse_location`] turns what a user typed into an object store and a
//! path in it; [`open_source`] also opens it as a [`Source`] with fetch
//! settings that suit the kind of store. Accepted forms:
//!
//! * a local path, relative (to the current directory) or absolute:
//!   `data/contacts.parquet`, `/tmp/contacts.arrow`;
//! * a `file://` URL with an absolute path: `file:///tmp/contacts.arrow`
//!   (percent-escapes are decoded, as in any URL);
//! * an S3 URL `s3://bucket/key`. The key is taken literally (no
//!   percent-decoding), like the AWS command line does.
//!
//! [`parse_dir`] takes the same forms for a directory or a prefix
//! (`s3://bucket/prefix`, or a whole bucket). Every output and input
//! location goes through these two functions, so a malformed URL is an
//! error wherever it is typed: `s3://` without a bucket, an unsupported
//! scheme (`gs://`), and a path that looks like a URL missing its `//`
//! (`s3:/bucket/key`, `s3:`), which would otherwise become a local
//! directory named `s3:` (`./s3:/key` names one on purpose).
//!
//! S3 settings come from the standard AWS environment variables
//! (`AWS_ENDPOINT` or `AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_REGION` or `AWS_DEFAULT_REGION`,
//! `AWS_ALLOW_HTTP`, ...), with [`StoreConfig`] overriding them.

use std::{sync::Arc, time::Duration};

use object_store::{
    BackoffConfig, ClientConfigKey, ObjectStore, RetryConfig,
    aws::{AmazonS3Builder, AmazonS3ConfigKey},
    local::LocalFileSystem,
    path::Path,
};

use crate::{
    Error,
    source::{FetchOptions, Source},
};

/// The forms [`parse_location`] accepts, for error messages.
const SUPPORTED: &str = "a local path, file:///absolute/path or s3://bucket/key";

/// Overrides for S3 settings. Each field left `None` keeps what the
/// standard AWS environment variables say (or the store's default).
#[derive(Debug, Clone, Default)]
pub struct StoreConfig {
    /// The endpoint URL, for S3-compatible servers (`AWS_ENDPOINT`). An
    /// `http://` endpoint, here or in the environment, implies
    /// [`StoreConfig::allow_http`] unless that is set.
    pub endpoint: Option<String>,
    /// The region (`AWS_REGION`).
    pub region: Option<String>,
    /// The access key id (`AWS_ACCESS_KEY_ID`).
    pub access_key_id: Option<String>,
    /// The secret access key (`AWS_SECRET_ACCESS_KEY`).
    pub secret_access_key: Option<String>,
    /// Whether plain-HTTP endpoints are allowed (`AWS_ALLOW_HTTP`).
    pub allow_http: Option<bool>,
    /// How the store retries failed requests; `None` gives
    /// [`default_retry`].
    pub retry: Option<RetryConfig>,
}

/// The retry settings S3 stores get unless [`StoreConfig::retry`] says
/// otherwise: at most 5 retries of a request, backing off from 100 ms
/// doubling to at most 5 s, and no retry after 60 s from the first try.
/// Server errors (5xx), dropped connections and timeouts are retried;
/// client errors such as a missing object or refused credentials are
/// not.
///
/// The retry budget (`retry_timeout`) also bounds each try: a request
/// gets at most [`REQUEST_TIMEOUT`] or the budget, whichever is shorter,
/// and its connection at most [`CONNECT_TIMEOUT`] or the budget. So a
/// server that accepts connections and never answers fails a request
/// after about the budget (the `AWS_TIMEOUT` and `AWS_CONNECT_TIMEOUT`
/// variables, when set, replace the per-try limits).
pub fn default_retry() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            base: 2.0,
        },
        max_retries: 5,
        retry_timeout: Duration::from_secs(60),
    }
}

/// The longest one try of an S3 request may take (see [`default_retry`]).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest the connection of one try may take (see [`default_retry`]).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// [`default_retry`] with a retry budget of `budget`: a request that has
/// not succeeded within about `budget`, retries included, fails.
pub fn retry_within(budget: Duration) -> RetryConfig {
    RetryConfig {
        retry_timeout: budget,
        ..default_retry()
    }
}

/// The kind of store a [`Location`] is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The local file system.
    Local,
    /// Amazon S3 or an S3-compatible server.
    S3,
}

/// One object: its store, its path in the store, and how to name it.
#[derive(Debug, Clone)]
pub struct Location {
    /// The store holding the object.
    pub store: Arc<dyn ObjectStore>,
    /// The object's path in [`Location::store`].
    pub path: Path,
    /// The location as the user gave it, for messages.
    pub display: String,
    /// The kind of store.
    pub kind: Kind,
    /// True for stores across a network (each request costs a round
    /// trip).
    pub remote: bool,
    /// For a local file, its path on this machine (read directly, with
    /// positioned reads on one open handle).
    pub file: Option<std::path::PathBuf>,
}

impl Location {
    /// Fetch settings that suit this location: [`FetchOptions::local`]
    /// for local files, [`remote_fetch_options`] for S3.
    pub fn fetch_options(&self) -> FetchOptions {
        if self.remote {
            remote_fetch_options()
        } else {
            FetchOptions::local()
        }
    }
}

/// Fetch settings for S3: [`FetchOptions::remote`] with a 30 ms time to
/// first byte and 100 MB/s per request, so holes up to about 3 MB between
/// wanted ranges are read through rather than paying another request.
pub fn remote_fetch_options() -> FetchOptions {
    FetchOptions::remote(Duration::from_millis(30), 100e6)
}

/// Parses a local path, a `file://` URL or an `s3://bucket/key` URL into
/// a store and a path. Nothing is read: a missing file or object is only
/// found by [`open_source`] or by the first request.
///
/// # Errors
///
/// [`Error::InvalidConfig`] for an empty input, an unsupported scheme
/// (such as `gs://` or `http://`), a malformed URL (an `s3://` URL without
/// bucket or key, a `file://` URL with a host) or a path the store cannot
/// represent; also when the S3 store cannot be built from the settings.
pub fn parse_location(s: &str, cfg: &StoreConfig) -> Result<Location, Error> {
    parse(s, cfg, false)
}

/// Parses a directory: a local path, a `file://` URL, or an S3 prefix
/// `s3://bucket/prefix` (a trailing slash is dropped; `s3://bucket` is the
/// whole bucket, an empty [`Location::path`]). Nothing is read or
/// created.
///
/// # Errors
///
/// As [`parse_location`]: an empty input, an unsupported scheme, a
/// malformed URL (`s3://` without bucket, `s3:/bucket` without `//`).
pub fn parse_dir(s: &str, cfg: &StoreConfig) -> Result<Location, Error> {
    parse(s, cfg, true)
}

/// A local path for an output that only a local file can take: a path or
/// a `file://` URL. `what` names the output in messages (`--summary-json`).
///
/// # Errors
///
/// [`Error::InvalidConfig`] for an object-store URL (`s3://...`), an
/// unsupported scheme or a malformed URL.
pub fn parse_local(s: &str, what: &str) -> Result<std::path::PathBuf, Error> {
    let loc = parse(s, &StoreConfig::default(), false).map_err(|e| match e {
        Error::InvalidConfig(m) => Error::InvalidConfig(format!("{what}: {m}")),
        e => e,
    })?;
    match (loc.kind, scheme(s)) {
        (Kind::Local, None) => Ok(std::path::PathBuf::from(s)),
        (Kind::Local, Some(_)) => loc
            .file
            .ok_or_else(|| Error::InvalidConfig(format!("{what}: '{s}' is not a local path"))),
        (Kind::S3, _) => Err(Error::InvalidConfig(format!(
            "{what}: '{s}' is an object-store URL; this output can only be a local file"
        ))),
    }
}

fn parse(s: &str, cfg: &StoreConfig, dir: bool) -> Result<Location, Error> {
    if s.is_empty() {
        return Err(Error::InvalidConfig(format!(
            "empty location; expected {SUPPORTED}"
        )));
    }
    match scheme(s) {
        None => {
            if let Some(head) = url_without_slashes(s) {
                return Err(Error::InvalidConfig(format!(
                    "invalid location '{s}': '{head}:' must be followed by '//' in a URL; expected {SUPPORTED} (write ./{s} for a local path of that name)"
                )));
            }
            local(s, s)
        }
        Some(scheme) if scheme.eq_ignore_ascii_case("file") => file_url(s),
        Some(scheme) if scheme.eq_ignore_ascii_case("s3") => {
            s3(s, &s[scheme.len() + 3..], cfg, dir)
        }
        Some(scheme) => Err(Error::InvalidConfig(format!(
            "unsupported location '{s}': scheme '{scheme}://' is not supported; expected {SUPPORTED}"
        ))),
    }
}

/// URL schemes a user may mean, compared without case.
const URL_SCHEMES: &[&str] = &[
    "s3", "s3a", "file", "gs", "gcs", "az", "azure", "abfs", "abfss", "adl", "http", "https",
    "hdfs", "memory",
];

/// For a path that looks like a URL without its `//` (`s3:/bucket/key`,
/// `s3:`, `gs:bucket`), the would-be scheme. A first component `NAME:`
/// counts when NAME is a known scheme or nothing but a slash follows the
/// colon (`data:2024` stays a path; one letter, a drive, too).
fn url_without_slashes(s: &str) -> Option<&str> {
    let (head, rest) = s.split_once(':')?;
    let mut chars = head.chars();
    let first = chars.next()?;
    let token = head.len() >= 2
        && first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let known = URL_SCHEMES.iter().any(|k| k.eq_ignore_ascii_case(head));
    (token && (known || rest.is_empty() || rest.starts_with('/'))).then_some(head)
}

/// Parses `s` with [`parse_location`] and opens it with
/// [`Location::fetch_options`], asking the store for the object's size.
///
/// # Errors
///
/// As [`parse_location`]; [`Error::NotFound`] when there is no such file
/// or object; [`Error::ObjectStore`] when the store fails otherwise (refused
/// credentials, an unreachable endpoint after the store's retries).
pub async fn open_source(s: &str, cfg: &StoreConfig) -> Result<Source, Error> {
    let loc = parse_location(s, cfg)?;
    let opts = loc.fetch_options();
    let opened = match &loc.file {
        Some(file) => Source::open_file(file, loc.display.clone(), opts).map_err(|e| match e {
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                Error::NotFound {
                    location: loc.display.clone(),
                    error: object_store::Error::NotFound {
                        path: file.display().to_string(),
                        source: source.into(),
                    },
                }
            }
            e => e,
        }),
        None => Source::open(loc.store, loc.path, loc.display, opts).await,
    };
    opened.map_err(|e| match e {
        Error::ObjectStore {
            location,
            source: source @ object_store::Error::NotFound { .. },
        } => Error::NotFound {
            location,
            error: source,
        },
        e => e,
    })
}

/// The scheme of a URL-like `s` (`scheme://...`), or `None` for a path.
fn scheme(s: &str) -> Option<&str> {
    let (scheme, _) = s.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let valid = first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some(scheme)
}

/// A local path, relative to the current directory unless absolute.
fn local(display: &str, path: impl AsRef<std::path::Path>) -> Result<Location, Error> {
    let path = path.as_ref();
    let absolute = std::path::absolute(path)
        .map_err(|e| Error::io("resolve the path", path.to_path_buf(), e))?;
    // Resolve `..` and symbolic links when the file exists; otherwise
    // remove `.` and `..` by their names, since the store's paths cannot
    // hold them (opening will then report the missing file).
    let resolved = std::fs::canonicalize(&absolute).unwrap_or_else(|_| lexical(&absolute));
    let object = Path::from_absolute_path(&resolved).map_err(|e| {
        Error::InvalidConfig(format!("cannot use '{display}' as a local path: {e}"))
    })?;
    Ok(Location {
        store: Arc::new(LocalFileSystem::new()),
        path: object,
        display: display.to_string(),
        kind: Kind::Local,
        remote: false,
        file: Some(resolved),
    })
}

/// `path` with `.` dropped and each `..` removing the part before it.
fn lexical(path: &std::path::Path) -> std::path::PathBuf {
    use std::path::Component;
    let mut out = std::path::PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// A `file://` URL with an absolute path and no host (or `localhost`).
fn file_url(s: &str) -> Result<Location, Error> {
    let bad = |why: &str| {
        Error::InvalidConfig(format!(
            "invalid file URL '{s}': {why}; expected file:///absolute/path"
        ))
    };
    let url = url::Url::parse(s).map_err(|e| bad(&e.to_string()))?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("a query or fragment is not allowed"));
    }
    let path = url
        .to_file_path()
        .map_err(|()| bad("it must have an absolute path and no host"))?;
    if path.parent().is_none() {
        return Err(bad("it names a directory, not a file"));
    }
    local(s, path)
}

/// An `s3://bucket/key` URL (with `dir`, `s3://bucket[/prefix]`); `rest`
/// is what follows `s3://`.
fn s3(s: &str, rest: &str, cfg: &StoreConfig, dir: bool) -> Result<Location, Error> {
    let expected = if dir {
        "s3://bucket/prefix"
    } else {
        "s3://bucket/key"
    };
    let bad = |why: &str| {
        Error::InvalidConfig(format!("invalid S3 URL '{s}': {why}; expected {expected}"))
    };
    let rest = if dir {
        rest.trim_end_matches('/')
    } else {
        rest
    };
    let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(bad("no bucket"));
    }
    if let Some(c) = bucket
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')))
    {
        return Err(bad(&format!("the bucket name has a '{c}'")));
    }
    let path = Path::parse(key).map_err(|e| bad(&e.to_string()))?;
    if path.as_ref().is_empty() && !dir {
        return Err(bad("no key after the bucket"));
    }
    let store = s3_store(bucket, cfg)
        .map_err(|e| Error::InvalidConfig(format!("cannot set up S3 for '{s}': {e}")))?;
    Ok(Location {
        store: Arc::new(store),
        path,
        display: s.to_string(),
        kind: Kind::S3,
        remote: true,
        file: None,
    })
}

/// An S3 store for `bucket`: the environment's settings, then `cfg`.
fn s3_store(bucket: &str, cfg: &StoreConfig) -> object_store::Result<object_store::aws::AmazonS3> {
    let mut b = AmazonS3Builder::from_env().with_bucket_name(bucket);
    if let Some(v) = &cfg.endpoint {
        b = b.with_endpoint(v);
    }
    if let Some(v) = &cfg.region {
        b = b.with_region(v);
    }
    if let Some(v) = &cfg.access_key_id {
        b = b.with_access_key_id(v);
    }
    if let Some(v) = &cfg.secret_access_key {
        b = b.with_secret_access_key(v);
    }
    let http_endpoint = b
        .get_config_value(&AmazonS3ConfigKey::Endpoint)
        .is_some_and(|e| {
            e.get(..7)
                .is_some_and(|p| p.eq_ignore_ascii_case("http://"))
        });
    match cfg.allow_http {
        Some(v) => b = b.with_allow_http(v),
        None if http_endpoint => b = b.with_allow_http(true),
        None => {}
    }
    let retry = cfg.retry.clone().unwrap_or_else(default_retry);
    // Each try within the retry budget (see `default_retry`), unless the
    // environment sets the per-try limits.
    let budget = retry.retry_timeout.max(Duration::from_millis(1));
    for (key, variable, limit) in [
        (ClientConfigKey::Timeout, "AWS_TIMEOUT", REQUEST_TIMEOUT),
        (
            ClientConfigKey::ConnectTimeout,
            "AWS_CONNECT_TIMEOUT",
            CONNECT_TIMEOUT,
        ),
    ] {
        if std::env::var_os(variable).is_none() {
            let ms = limit.min(budget).as_millis();
            b = b.with_config(AmazonS3ConfigKey::Client(key), format!("{ms}ms"));
        }
    }
    b.with_retry(retry).build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> StoreConfig {
        // Explicit settings, so the tests do not depend on the environment
        // for anything that matters.
        StoreConfig {
            endpoint: Some("http://127.0.0.1:9".into()),
            region: Some("us-east-1".into()),
            access_key_id: Some("k".into()),
            secret_access_key: Some("s".into()),
            allow_http: None,
            retry: None,
        }
    }

    fn invalid(s: &str) -> String {
        match parse_location(s, &cfg()) {
            Err(Error::InvalidConfig(m)) => m,
            Err(e) => panic!("{s}: expected InvalidConfig, got {e}"),
            Ok(l) => panic!("{s}: expected an error, got {:?}", l.path),
        }
    }

    #[test]
    fn local_paths_resolve_against_the_current_directory() {
        let cwd = std::env::current_dir().unwrap();
        let l = parse_location("some/dir/../file.parquet", &cfg()).unwrap();
        assert_eq!(l.kind, Kind::Local);
        assert!(!l.remote);
        assert_eq!(l.display, "some/dir/../file.parquet");
        let want = Path::from_absolute_path(cwd.join("some/file.parquet")).unwrap();
        assert_eq!(l.path, want);
        assert_eq!(l.fetch_options(), FetchOptions::local());

        let l = parse_location("/tmp/./x.arrow", &cfg()).unwrap();
        assert_eq!(l.path, Path::from("tmp/x.arrow"));
        // A colon without `//` is part of a file name, not a scheme.
        let l = parse_location("/tmp/a:b", &cfg()).unwrap();
        assert_eq!(l.path, Path::from("tmp/a:b"));
    }

    #[test]
    fn existing_local_files_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.bin");
        std::fs::write(&file, b"hello").unwrap();
        let l = parse_location(file.to_str().unwrap(), &cfg()).unwrap();
        let canonical = std::fs::canonicalize(&file).unwrap();
        assert_eq!(l.path, Path::from_absolute_path(canonical).unwrap());
    }

    #[test]
    fn file_urls() {
        let l = parse_location("file:///tmp/a%20b.parquet", &cfg()).unwrap();
        assert_eq!(l.kind, Kind::Local);
        assert_eq!(l.path, Path::from("tmp/a b.parquet"));
        assert_eq!(l.display, "file:///tmp/a%20b.parquet");
        let l = parse_location("FILE://localhost/tmp/x", &cfg()).unwrap();
        assert_eq!(l.path, Path::from("tmp/x"));

        for s in ["file://host/tmp/x", "file:///tmp/x?y=1", "file:///"] {
            let m = invalid(s);
            assert!(m.contains(s) && m.contains("file:///absolute/path"), "{m}");
        }
    }

    #[test]
    fn s3_urls() {
        let l = parse_location("s3://bucket/dir/part-0.parquet", &cfg()).unwrap();
        assert_eq!(l.kind, Kind::S3);
        assert!(l.remote);
        assert_eq!(l.path, Path::from("dir/part-0.parquet"));
        assert_eq!(l.display, "s3://bucket/dir/part-0.parquet");
        assert_eq!(l.fetch_options(), remote_fetch_options());
        // Keys are literal: a percent sign stays one.
        let l = parse_location("s3://bucket/a%20b", &cfg()).unwrap();
        assert_eq!(l.path.as_ref(), "a%20b");
        // The scheme is case-insensitive; a trailing slash is dropped.
        let l = parse_location("S3://bucket/k/", &cfg()).unwrap();
        assert_eq!(l.path, Path::from("k"));
    }

    #[test]
    fn malformed_s3_urls_are_invalid() {
        for (s, why) in [
            ("s3://", "no bucket"),
            ("s3:///key", "no bucket"),
            ("s3://bucket", "no key"),
            ("s3://bucket/", "no key"),
            ("s3://bu?cket/k", "'?'"),
            ("s3://bucket/a//b", "empty"),
            ("s3://bucket/a/../b", ".."),
        ] {
            let m = invalid(s);
            assert!(m.contains(s), "{m}");
            assert!(m.contains(why), "{s}: {m}");
            assert!(m.contains("s3://bucket/key"), "{m}");
        }
    }

    #[test]
    fn unknown_schemes_are_invalid() {
        for s in ["gs://bucket/key", "http://host/file.parquet", "az://c/k"] {
            let m = invalid(s);
            assert!(m.contains(s), "{m}");
            assert!(m.contains("not supported"), "{m}");
            assert!(m.contains(SUPPORTED), "{m}");
        }
        assert!(invalid("").contains("empty location"));
    }

    #[test]
    fn urls_without_their_slashes_are_invalid() {
        for (s, head) in [
            ("s3:/bucket/x", "s3"),
            ("s3:", "s3"),
            ("S3:bucket/x", "S3"),
            ("gs:/b/k", "gs"),
            ("file:/tmp/x", "file"),
            ("mystore:/a", "mystore"),
        ] {
            for m in [
                invalid(s),
                match parse_dir(s, &cfg()) {
                    Err(Error::InvalidConfig(m)) => m,
                    other => panic!("{s}: {other:?}"),
                },
            ] {
                assert!(
                    m.contains(&format!("'{head}:' must be followed by '//'")),
                    "{m}"
                );
                assert!(m.contains(&format!("./{s}")), "{m}");
            }
        }
        // Paths that merely hold a colon stay paths.
        for s in ["data:2024/x", "./s3:/x", "a/s3:/x", "c:/x", "x:y"] {
            let l = parse_location(s, &cfg()).unwrap();
            assert_eq!(l.kind, Kind::Local, "{s}");
        }
    }

    #[test]
    fn directories_and_prefixes() {
        for (s, why) in [("s3://", "no bucket"), ("s3:///p", "no bucket")] {
            match parse_dir(s, &cfg()) {
                Err(Error::InvalidConfig(m)) => {
                    assert!(m.contains(why) && m.contains("s3://bucket/prefix"), "{m}")
                }
                other => panic!("{s}: {other:?}"),
            }
        }
        let l = parse_dir("s3://bucket/out/", &cfg()).unwrap();
        assert_eq!((l.kind, l.path.as_ref()), (Kind::S3, "out"));
        let l = parse_dir("s3://bucket", &cfg()).unwrap();
        assert_eq!((l.kind, l.path.as_ref()), (Kind::S3, ""));
        let l = parse_dir("file:///tmp/out", &cfg()).unwrap();
        assert_eq!(l.file, Some(std::path::PathBuf::from("/tmp/out")));
        assert_eq!(parse_dir("out", &cfg()).unwrap().kind, Kind::Local);
    }

    #[test]
    fn local_only_outputs_refuse_urls() {
        assert_eq!(
            parse_local("out/s.json", "--summary-json").unwrap(),
            std::path::PathBuf::from("out/s.json")
        );
        assert_eq!(
            parse_local("file:///tmp/s.json", "--summary-json").unwrap(),
            std::path::PathBuf::from("/tmp/s.json")
        );
        for s in ["s3://b/s.json", "s3:/b/s.json", "gs://b/k"] {
            let m = parse_local(s, "--summary-json").unwrap_err().to_string();
            assert!(m.starts_with("--summary-json: ") && m.contains(s), "{m}");
        }
    }

    #[test]
    fn missing_local_files_are_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.parquet");
        let s = missing.to_str().unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let e = rt.block_on(open_source(s, &cfg())).unwrap_err();
        assert!(matches!(e, Error::NotFound { .. }), "{e:?}");
        let m = e.to_string();
        assert!(m.contains(s) && m.contains("not found"), "{m}");
    }

    #[test]
    fn local_files_open_with_their_size() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.bin");
        std::fs::write(&file, b"hello world").unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let src = rt
            .block_on(open_source(file.to_str().unwrap(), &cfg()))
            .unwrap();
        assert_eq!(src.size(), 11);
        assert_eq!(&rt.block_on(src.tail(5)).unwrap()[..], b"world");
    }
}
