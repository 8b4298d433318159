//! Decoding a user's files with readers that may panic on malformed data.
//!
//! arrow-rs and parquet check most of what they read, but not all: a
//! corrupt file can still reach an `unwrap` or an out-of-range slice inside
//! them. Every strata reader of a user's file runs the decoding through
//! [`catch`], [`catch_future`] or [`catch_stream`]: a panic there becomes
//! a [`DecoderPanic`] error, and the panic hook stays silent for it, so no
//! `panicked at` reaches the terminal. Panics anywhere else print as
//! usual. [`caught`] counts the panics caught, for tests. With the
//! environment variable `STRATA_SHOW_DECODER_PANICS` set, caught panics
//! print too (with a backtrace under `RUST_BACKTRACE=1`), to find where a
//! dependency failed.

use std::{
    any::Any,
    cell::Cell,
    future::Future,
    panic::{self, AssertUnwindSafe},
    pin::Pin,
    sync::{
        Once,
        atomic::{AtomicU64, Ordering},
    },
    task::{Context, Poll},
};

use futures::{FutureExt, Stream, StreamExt};

thread_local! {
    /// How many guarded decodes this thread is inside.
    static QUIET: Cell<u32> = const { Cell::new(0) };
}

static HOOK: Once = Once::new();
static CAUGHT: AtomicU64 = AtomicU64::new(0);

/// Wraps the panic hook (once) so that it stays silent inside a guarded
/// decode and behaves as before everywhere else.
fn install_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        let show = std::env::var_os("STRATA_SHOW_DECODER_PANICS").is_some();
        panic::set_hook(Box::new(move |info| {
            if show || QUIET.with(Cell::get) == 0 {
                previous(info);
            }
        }));
    });
}

/// Marks this thread as inside a guarded decode while alive.
struct Quiet;

impl Quiet {
    fn enter() -> Quiet {
        install_hook();
        QUIET.with(|q| q.set(q.get() + 1));
        Quiet
    }
}

impl Drop for Quiet {
    fn drop(&mut self) {
        QUIET.with(|q| q.set(q.get().saturating_sub(1)));
    }
}

/// A panic caught inside a decoder: the reader met malformed data it does
/// not check. Its text is the message every strata reader reports.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the decoder failed on malformed data ({message})")]
pub struct DecoderPanic {
    /// The panic's own message.
    pub message: String,
}

/// Counts a caught panic and keeps its payload's text.
fn caught_panic(p: &(dyn Any + Send)) -> DecoderPanic {
    CAUGHT.fetch_add(1, Ordering::Relaxed);
    let message = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into());
    DecoderPanic { message }
}

/// How many panics the guards have caught in this process.
pub fn caught() -> u64 {
    CAUGHT.load(Ordering::Relaxed)
}

/// Runs `f`; a panic inside it is returned as a [`DecoderPanic`],
/// unprinted.
///
/// # Errors
/// [`DecoderPanic`] when `f` panics.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, DecoderPanic> {
    let _quiet = Quiet::enter();
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|p| caught_panic(p.as_ref()))
}

/// A future polled inside a guarded decode.
struct QuietFuture<F>(Pin<Box<F>>);

impl<F: Future> Future for QuietFuture<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let _quiet = Quiet::enter();
        self.0.as_mut().poll(cx)
    }
}

/// [`catch`] for a future: a panic while polling it is its output's error.
///
/// # Errors
/// [`DecoderPanic`] when polling `fut` panics.
pub async fn catch_future<F: Future>(fut: F) -> Result<F::Output, DecoderPanic> {
    AssertUnwindSafe(QuietFuture(Box::pin(fut)))
        .catch_unwind()
        .await
        .map_err(|p| caught_panic(p.as_ref()))
}

/// A stream polled inside a guarded decode.
struct QuietStream<S>(Pin<Box<S>>);

impl<S: Stream> Stream for QuietStream<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let _quiet = Quiet::enter();
        self.0.as_mut().poll_next(cx)
    }
}

/// [`catch`] for a stream: a panic while polling it becomes one `Err`
/// item, and the stream ends there.
pub fn catch_stream<S: Stream>(s: S) -> impl Stream<Item = Result<S::Item, DecoderPanic>> {
    AssertUnwindSafe(QuietStream(Box::pin(s)))
        .catch_unwind()
        .map(|r| r.map_err(|p| caught_panic(p.as_ref())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_errors_and_are_counted_in_closures_futures_and_streams() {
        let before = caught();
        assert_eq!(catch(|| 7), Ok(7));
        let e = catch(|| -> u8 { panic!("bad offset {}", 3) }).unwrap_err();
        assert_eq!(e.message, "bad offset 3");
        assert_eq!(
            e.to_string(),
            "the decoder failed on malformed data (bad offset 3)"
        );
        let e = catch(|| -> u8 { std::panic::panic_any(5u8) }).unwrap_err();
        assert_eq!(e.message, "no message");
        assert_eq!(caught() - before, 2);
        // Outside a guard nothing is quiet.
        assert_eq!(QUIET.with(Cell::get), 0);

        // Futures and streams, in the same test: the counter is global,
        // and a second test running alongside would move it.
        let rt = futures::executor::block_on(catch_future(async { 1 + 1 }));
        assert_eq!(rt, Ok(2));
        let e = futures::executor::block_on(catch_future(async {
            let v: Vec<u8> = Vec::new();
            v[3]
        }))
        .unwrap_err();
        assert!(e.message.contains("index out of bounds"), "{e}");
        let items: Vec<Result<Result<u8, ()>, DecoderPanic>> = futures::executor::block_on(
            catch_stream(futures::stream::iter([1u8, 2, 3]).map(|x| {
                assert!(x < 3, "three");
                Ok(x)
            }))
            .collect(),
        );
        assert_eq!(items.len(), 3);
        assert_eq!(items[1], Ok(Ok(2)));
        assert_eq!(
            items[2],
            Err(DecoderPanic {
                message: "three".to_string()
            })
        );
    }
}
