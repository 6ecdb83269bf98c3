//! Times `Secrets::find` on a plain log of 1 MB (a scratch tool for the secrets step's speed).
use context_guard_core::guard::secrets::Secrets;
fn main() {
    let levels = ["INFO", "INFO", "INFO", "DEBUG", "WARN"];
    let mut s = String::new();
    let mut i = 0usize;
    while s.len() < 1 << 20 {
        let extra = if i % 7 == 0 { " — 日本語のログ 😀" } else { "" };
        s.push_str(&format!(
            "2024-05-01 12:{:02}:{:02}.{:03} {} worker-{} handled request id={} in {} ms{}\n",
            (i / 60) % 60,
            i % 60,
            i % 1000,
            levels[i % 5],
            i % 13,
            i * 7919,
            i % 97,
            extra
        ));
        i += 1;
    }
    let secrets = Secrets::new(&[]);
    let t = std::time::Instant::now();
    let mut n = 0;
    for _ in 0..20 {
        n += secrets.find(&s).len();
    }
    println!("{:.2} ms per MB ({} found)", t.elapsed().as_secs_f64() * 1000.0 / 20.0, n);
}
