//! Numbers with a fixed count of decimals (`12.3%`, `$0.0042`, `3.1 ms`),
//! exactly as Rust's `format!("{x:.N}")` writes them, without `core::fmt`'s
//! float code.
//!
//! For: the few decimals the report and `/guard` print. That formatting code
//! (Grisu with a Dragon4 fallback, and the shortest form that `Display` and
//! `Debug` share) is about 16 KB of the `.wasm` (budget: `pkg/*.wasm` ≤
//! 512 KB, measured with `twiggy`; a typed serde read brings it back through
//! its error messages, so the core reads JSON through `Value`), and nothing
//! else in the core needs it:
//! JSON numbers are written by serde_json's own code. The shortest form
//! (`{}`) only for whole numbers ([`whole`]) and for numbers with at most
//! four decimals ([`short`]).
//!
//! The value is read exactly as the binary fraction it is and rounded half to
//! even, as `format!` does (`0.25` → `0.2`, `0.35` → `0.3`: 0.35 is below
//! 0.35 as a double); the tests compare with `format!` over many values.

/// `x` with `decimals` digits after the point (at most 4), as
/// `format!("{x:.decimals$}")` writes it: `-` for a negative sign (also of
/// `-0.0` and of a negative value that rounds to zero), `NaN`, `inf`, `-inf`.
pub fn fixed(x: f64, decimals: u32) -> String {
    let decimals = decimals.min(4);
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x.is_nan() {
        return "NaN".to_string();
    }
    if x.is_infinite() {
        return format!("{sign}inf");
    }
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    // x = mantissa × 2^power, exactly.
    let (mantissa, power) = if exponent == 0 { (fraction, -1074) } else { (fraction | 1 << 52, exponent - 1075) };
    let zeros = "0".repeat(decimals as usize);
    if power >= 0 {
        // A whole number, possibly far beyond u64.
        let point = if decimals == 0 { "" } else { "." };
        return format!("{sign}{}{point}{zeros}", whole_digits(mantissa, power.unsigned_abs()));
    }
    let shift = power.unsigned_abs();
    let (whole, rest) = if shift < 64 { (mantissa >> shift, mantissa & ((1 << shift) - 1)) } else { (0, mantissa) };
    let scale = 10u64.pow(decimals);
    // The decimals as `rest × scale / 2^shift`, and what is left over, in
    // 128 bits (rest < 2^53, scale ≤ 10^4). Beyond a shift of 120 the value
    // is below 2^-53 and rounds to zero at any of these scales.
    let (mut digits, tie, above) = if shift > 120 {
        (0, false, false)
    } else {
        let scaled = u128::from(rest) * u128::from(scale);
        let digits = (scaled >> shift) as u64;
        let left = scaled & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        (digits, left == half, left > half)
    };
    let mut whole = whole;
    // Half to even: the last printed digit (or the whole part's) decides a tie.
    let last_odd = if decimals == 0 { whole % 2 == 1 } else { digits % 2 == 1 };
    if above || (tie && last_odd) {
        digits += 1;
        if digits == scale {
            digits = 0;
            whole += 1;
        }
    }
    if decimals == 0 {
        return format!("{sign}{whole}");
    }
    let width = decimals as usize;
    format!("{sign}{whole}.{digits:0width$}")
}

/// `x` as `format!("{x}")` writes a number with at most four decimals (`0.45`,
/// `1`): [`fixed`] to four, without trailing zeros. Such a number lies within
/// a rounding error of its four-decimal form, so the two agree; the settings'
/// defaults are such numbers.
pub fn short(x: f64) -> String {
    let mut s = fixed(x, 4);
    if s.contains('.') {
        let kept = s.trim_end_matches('0').trim_end_matches('.').len();
        s.truncate(kept);
    }
    s
}

/// A whole `x` (such as `n.floor()`) as `format!("{x}")` writes it: its
/// digits below 2^53, where every whole number is exact; above, `Display`
/// writes the shortest digits that read back as `x` and pads them with
/// zeros, and so does this, from serde_json's shortest form (`1e+300`).
pub fn whole(x: f64) -> String {
    if x.abs() < 9_007_199_254_740_992.0 || !x.is_finite() {
        return fixed(x, 0);
    }
    let shortest = serde_json::to_string(&x).unwrap_or_default();
    let (sign, rest) = match shortest.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", shortest.as_str()),
    };
    let (mantissa, exponent) = match rest.split_once('e') {
        Some((m, e)) => (m, e.trim_start_matches('+').parse::<usize>().unwrap_or(0)),
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let frac = frac.trim_end_matches('0');
    // Whole and at least 2^53, so the exponent covers the fraction's digits.
    let zeros = "0".repeat(exponent.saturating_sub(frac.len()));
    format!("{sign}{int}{frac}{zeros}")
}

/// The decimal digits of `mantissa × 2^power`, in base-10⁹ limbs.
fn whole_digits(mantissa: u64, mut power: u32) -> String {
    const LIMB: u64 = 1_000_000_000;
    // Least significant limb first.
    let mut limbs = vec![mantissa % LIMB, mantissa / LIMB % LIMB, mantissa / LIMB / LIMB];
    while power > 0 {
        // A limb is below 2^30, so 29 bits of shift stay within 64.
        let step = power.min(29);
        power -= step;
        let mut carry = 0u64;
        for limb in &mut limbs {
            let v = (*limb << step) + carry;
            *limb = v % LIMB;
            carry = v / LIMB;
        }
        while carry > 0 {
            limbs.push(carry % LIMB);
            carry /= LIMB;
        }
    }
    while limbs.len() > 1 && limbs.last() == Some(&0) {
        limbs.pop();
    }
    let mut out = String::new();
    for (i, limb) in limbs.iter().rev().enumerate() {
        if i == 0 {
            out.push_str(&limb.to_string());
        } else {
            out.push_str(&format!("{limb:09}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same_as_format(x: f64) {
        for d in 0..=4u32 {
            let w = d as usize;
            assert_eq!(fixed(x, d), format!("{x:.w$}"), "{x:e} with {d} decimals");
        }
    }

    #[test]
    fn ties_round_to_even_on_the_exact_value() {
        assert_eq!(fixed(0.25, 1), "0.2");
        assert_eq!(fixed(0.75, 1), "0.8");
        assert_eq!(fixed(0.35, 1), "0.3");
        assert_eq!(fixed(2.5, 0), "2");
        assert_eq!(fixed(3.5, 0), "4");
        assert_eq!(fixed(0.00005, 4), "0.0001");
        assert_eq!(fixed(9.96, 1), "10.0");
        assert_eq!(fixed(12.345, 1), "12.3");
    }

    #[test]
    fn short_is_what_display_writes_for_up_to_four_decimals() {
        for k in 0..=20_000u32 {
            let x = f64::from(k) / 10_000.0;
            assert_eq!(short(x), format!("{x}"), "{k}");
            assert_eq!(short(-x), format!("{}", -x), "-{k}");
        }
        for x in [0.7, 0.6, 0.5, 0.45, 0.2, 12.0, 1e6] {
            assert_eq!(short(x), format!("{x}"));
        }
    }

    #[test]
    fn whole_numbers_as_display_writes_them() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let x = f64::from_bits(state).floor();
            if x.is_finite() {
                assert_eq!(whole(x), format!("{x}"), "{x:e}");
            }
        }
        for x in [
            0.0,
            1.0,
            120.0,
            9_007_199_254_740_991.0,
            9_007_199_254_740_992.0,
            1e16,
            1.5e17,
            1e21,
            1e22,
            1e300,
            f64::MAX,
        ] {
            assert_eq!(whole(x), format!("{x}"), "{x:e}");
            assert_eq!(whole(-x), format!("{}", -x), "{x:e}");
        }
    }

    #[test]
    fn signs_and_specials_as_format_writes_them() {
        assert_eq!(fixed(-0.0, 1), "-0.0");
        assert_eq!(fixed(-0.01, 1), "-0.0");
        assert_eq!(fixed(f64::NAN, 1), "NaN");
        assert_eq!(fixed(f64::INFINITY, 4), "inf");
        assert_eq!(fixed(f64::NEG_INFINITY, 1), "-inf");
        for x in [0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE, -f64::MIN_POSITIVE] {
            same_as_format(x);
        }
    }

    #[test]
    fn every_magnitude_matches_format() {
        let specials = [
            f64::MAX,
            f64::MIN,
            f64::EPSILON,
            5e-324,
            1e-5,
            4.999_999_999_999_999e-5,
            0.05,
            0.15,
            0.45,
            99.95,
            100.0,
            1e15,
            9_007_199_254_740_991.0,
            9_007_199_254_740_993.0,
            1.8e19,
            1e22,
            1e300,
            123_456_789.987_654_3,
        ];
        for x in specials {
            same_as_format(x);
            same_as_format(-x);
        }
        // Ties at each scale: k / 2^n for small n lands exactly on a half.
        for k in 0..4096u32 {
            for n in 1..=12 {
                same_as_format(f64::from(k) / f64::from(1u32 << n));
            }
        }
        // Every exponent, with pseudo-random mantissas (a fixed xorshift, so a failure repeats).
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..50_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let x = f64::from_bits(state);
            if x.is_finite() {
                same_as_format(x);
            }
        }
        // The report's and /guard's usual range: percentages, dollars, milliseconds.
        for i in 0..20_000u32 {
            same_as_format(f64::from(i) / 997.0);
            same_as_format(f64::from(i) * 0.001);
            same_as_format(f64::from(i) * 0.000_05);
        }
    }
}
