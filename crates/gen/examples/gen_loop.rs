//! Generates a preset's rows in a loop, for profilers: `cargo run --release
//! -p strata-gen --example gen_loop -- contacts 3000000`.
use strata_gen::BatchGenerator;

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "contacts".into());
    let rows: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(3_000_000);
    let generator = if name.ends_with(".toml") {
        let text = std::fs::read_to_string(&name).expect("read spec");
        strata_gen::Spec::parse(&text, &name)
            .expect("parse spec")
            .generator(42)
            .expect("compile spec")
    } else {
        strata_gen::preset(&name, 42)
    };
    let mut scratch = Default::default();
    let mut row = 0;
    let mut total = 0usize;
    let start = std::time::Instant::now();
    while row < rows {
        let n = 8192.min(rows - row) as usize;
        let out = generator.generate(row, n, &mut scratch).expect("generate");
        total += out.num_rows();
        generator.recycle(out, &mut scratch);
        row += n as u64;
    }
    let t = start.elapsed().as_secs_f64();
    println!(
        "{total} rows in {t:.3} s: {:.1} ns/row",
        t * 1e9 / total as f64
    );
}
