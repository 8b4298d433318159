//! The process's CPU time: the one clock that summaries and benchmarks
//! read beside wall time.

/// CPU time (user and system, all threads) this process has used so far,
/// in seconds; NaN where the system does not report it.
pub fn process_cpu_seconds() -> f64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec for the duration of
        // the call, and CLOCK_PROCESS_CPUTIME_ID is a clock id POSIX
        // defines; on failure `ts` is not read.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
        if rc != 0 {
            return f64::NAN;
        }
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    }
    #[cfg(not(unix))]
    {
        f64::NAN
    }
}

/// CPU time (user and system) of this process's children that have
/// ended and been waited for, in seconds; NaN where the system does not
/// report it. The difference across one child's run is that child's CPU
/// time (a peer program run by a benchmark).
pub fn children_cpu_seconds() -> f64 {
    #[cfg(unix)]
    {
        // SAFETY: `rusage` is a plain C struct of integers, for which all
        // zero bytes are a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `usage` is valid and writable for the call, and
        // RUSAGE_CHILDREN is a `who` POSIX defines; on failure it is not
        // read.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
        if rc != 0 {
            return f64::NAN;
        }
        let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
    #[cfg(not(unix))]
    {
        f64::NAN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work() {
        let t0 = process_cpu_seconds();
        assert!(t0.is_finite() && t0 >= 0.0, "{t0}");
        // Spin until the clock moves (it has at least microsecond
        // resolution); a clock stuck at one value fails here.
        let mut x = 0u64;
        let mut t1 = t0;
        for i in 0..1_000_000_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
            if i % 1024 == 0 {
                t1 = process_cpu_seconds();
                if t1 > t0 {
                    break;
                }
            }
        }
        std::hint::black_box(x);
        assert!(t1 > t0, "{t0} {t1}");
    }

    #[cfg(unix)]
    #[test]
    fn a_waited_child_adds_its_cpu_time() {
        let t0 = children_cpu_seconds();
        assert!(t0.is_finite() && t0 >= 0.0, "{t0}");
        // A shell counting long enough to use some CPU (tens of ms).
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(status.success());
        let t1 = children_cpu_seconds();
        assert!(t1 > t0, "{t0} {t1}");
    }
}
