//! Waits on an object store that say what they are waiting for.
//!
//! A request to a server that accepts the connection and then says
//! nothing waits until its timeout ([`crate::location::default_retry`]).
//! While it waits, every [`NOTICE_EVERY`] the function set with
//! [`on_slow_request`] is called with a line such as `waiting for the
//! listing of s3://bucket/prefix/: no answer for 5 s` (the command line
//! prints it on standard error). Without such a function nothing is said.

use std::{
    future::Future,
    sync::{Arc, RwLock},
    time::Duration,
};

/// How long a request waits before it is reported, and then how often.
pub const NOTICE_EVERY: Duration = Duration::from_secs(5);

type Notice = Arc<dyn Fn(&str) + Send + Sync>;

static NOTICE: RwLock<Option<Notice>> = RwLock::new(None);

/// Sets the function told about requests that wait long (replacing any
/// earlier one); `None` silences them.
pub fn on_slow_request(notice: Option<Notice>) {
    if let Ok(mut n) = NOTICE.write() {
        *n = notice;
    }
}

/// Runs `fut` to completion on `rt`, reporting every [`NOTICE_EVERY`]
/// that it is still waiting for `what()`.
pub(crate) fn block_on<F: Future>(
    rt: &tokio::runtime::Runtime,
    what: impl Fn() -> String,
    fut: F,
) -> F::Output {
    block_on_every(rt, NOTICE_EVERY, what, fut)
}

fn block_on_every<F: Future>(
    rt: &tokio::runtime::Runtime,
    every: Duration,
    what: impl Fn() -> String,
    fut: F,
) -> F::Output {
    rt.block_on(async {
        let mut fut = std::pin::pin!(fut);
        let mut waited = Duration::ZERO;
        loop {
            tokio::select! {
                out = &mut fut => return out,
                () = tokio::time::sleep(every) => {
                    waited += every;
                    let notice = NOTICE.read().ok().and_then(|n| n.clone());
                    if let Some(notice) = notice {
                        notice(&format!(
                            "waiting for {}: no answer for {} s",
                            what(),
                            waited.as_secs()
                        ));
                    }
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_wait_is_reported_and_a_short_one_is_not() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let said = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let sink = said.clone();
        on_slow_request(Some(Arc::new(move |m: &str| {
            sink.lock().unwrap().push(m.to_string())
        })));
        let every = Duration::from_millis(20);
        let quick = block_on_every(&rt, every, || "quick".into(), async { 1 });
        assert_eq!(quick, 1);
        assert!(said.lock().unwrap().is_empty());
        let slow = block_on_every(&rt, every, || "s3://b/k".into(), async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            2
        });
        on_slow_request(None);
        assert_eq!(slow, 2);
        let said = said.lock().unwrap();
        assert!(!said.is_empty());
        for m in said.iter() {
            assert!(m.starts_with("waiting for s3://b/k: no answer for "), "{m}");
        }
    }
}
