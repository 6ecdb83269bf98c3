// A profile aid, not a test of time: run with `cargo test --release --test secrets_speed -- --ignored --nocapture`.
#[test]
#[ignore]
fn scan_speed() {
    let text = std::fs::read_to_string(std::env::var("CG_SCAN_FILE").unwrap_or("/tmp/pi4.txt".into())).unwrap();
    let s = context_guard_scan::secrets::Secrets::new(&[]);
    let t = std::time::Instant::now();
    let mut n = 0;
    let reps: u32 = std::env::var("CG_SCAN_REPS").ok().and_then(|r| r.parse().ok()).unwrap_or(5);
    for _ in 0..reps {
        n += s.find(&text).len();
    }
    let secs = t.elapsed().as_secs_f64() / f64::from(reps);
    eprintln!("{} MB/s ({n})", text.len() as f64 / 1e6 / secs);
}
