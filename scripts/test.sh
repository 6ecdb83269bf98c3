#!/bin/sh
# Every test of the project, ending with one count line.
#   Rust: fmt, clippy, unit tests.  TypeScript: type check, Biome (format and
#   lint, biome.json), unit tests.
#   Real Pi: the end-to-end tests on Pi 1.6.0 and on Pi 1.3.0, each followed by
#   the check that they opened no socket beyond this machine.  pkg/: fresh.
#
# The last line is exactly "RESULT: N passed, M failed" (CI reads it). N and M
# count tests, as cargo test and node --test count them, plus one for each
# check that is not a test runner (fmt, clippy, tsc, biome, pkg/, offline). Failed
# tests and checks are listed by name above it.
#
# Limits, so that a hang ends as a failure with a name, never as a silent stall:
#   CG_TEST_TIMEOUT_MS  one node test (default 180000): it fails by its name
#                       (tests/harness/test-timeout.mjs gives every test this timeout)
#   CG_FILE_TIMEOUT_MS  one node test file (default 600000): it fails by its file name
#   CG_STEP_LIMIT_S     one step (default 2400): the step is stopped and named
# Reports (each node step's TAP, each cargo step's output, the connect logs)
# go to target/test-reports/run-<pid>/ (one folder a run, so runs at the same
# time keep apart), removed after a run with no failure, kept after one.
#
# CG_TEST_STEPS=<file> runs the step lines of that file instead of the steps
# below (to try this script's counting on small inputs).
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
if ! sh scripts/setup.sh; then
  echo "setup failed"
  echo "RESULT: 0 passed, 1 failed"
  exit 1
fi
PATH="$root/node_modules/.bin:$PATH"
export PATH

test_timeout_ms=${CG_TEST_TIMEOUT_MS:-180000}
file_timeout_ms=${CG_FILE_TIMEOUT_MS:-600000}
step_limit_s=${CG_STEP_LIMIT_S:-2400}
reports="$root/target/test-reports/run-$$"
rm -rf "$reports"
mkdir -p "$reports"

passed=0
failed=0
failures=""
steps=0

fail() { # <what failed>
  failed=$((failed + 1))
  failures="$failures
  - $1"
}

# Runs a command under the step limit; a step past it is stopped and named.
# (timeout's status is 124 after TERM, 137 when it had to KILL.)
limited() { # <step name> <command...>
  name=$1
  shift
  timeout -k 30 "$step_limit_s" "$@"
  status=$?
  if hung $status; then
    echo "--- HUNG: $name ran past the step limit of $step_limit_s s and was stopped"
  fi
  return $status
}

hung() { # <exit status>
  [ "$1" -eq 124 ] || [ "$1" -eq 137 ]
}

begin() { # <step name>
  steps=$((steps + 1))
  echo "=== $1"
  start=$(date +%s)
}

# Adds one line per failed test to the list of failures.
list_failed() { # <step name> <names, one a line>
  while IFS= read -r n; do
    [ -z "$n" ] || failures="$failures
  - $1: $n"
  done << EOF
$2
EOF
}

end() { # <step name> <tests passed> <tests failed>
  echo "--- $1: $2 passed, $3 failed ($(($(date +%s) - start)) s)"
}

# A check that is not a test runner: one count.
check() { # <name> <command...>
  name=$1
  shift
  begin "$name"
  limited "$name" "$@"
  status=$?
  if [ $status -eq 0 ]; then
    passed=$((passed + 1))
    end "$name" 1 0
  else
    if hung $status; then fail "$name: stopped at the step limit ($step_limit_s s)"; else fail "$name"; fi
    end "$name" 0 1
  fi
}

# A cargo test run: the counts of its "test result:" lines, the names of its failed tests.
cargo_tests() { # <name> <command...>
  name=$1
  shift
  begin "$name"
  log="$reports/$steps.cargo.log"
  { limited "$name" "$@" 2>&1; echo $? > "$log.status"; } | tee "$log"
  status=$(cat "$log.status")
  count_cargo "$name" "$log" "$status"
}

count_cargo() { # <step name> <cargo output> <exit status>
  ok=$(awk '/^test result:/ { for (i = 1; i < NF; i++) if ($(i + 1) ~ /^passed;?$/) n += $i } END { print n + 0 }' "$2")
  bad=$(awk '/^test result:/ { for (i = 1; i < NF; i++) if ($(i + 1) ~ /^failed;?$/) n += $i } END { print n + 0 }' "$2")
  passed=$((passed + ok))
  failed=$((failed + bad))
  names=$(sed -n 's/^---- \(.*\) stdout ----$/\1/p' "$2")
  list_failed "$1" "$names"
  [ "$bad" -eq 0 ] || [ -n "$names" ] || failures="$failures
  - $1: $bad failed test(s) whose names are not in $2"
  step_verdict "$1" "$ok" "$bad" "$3"
}

# A node --test run: every test gets the per-test timeout, each file the file
# timeout; dots on the terminal, TAP in a report whose summary is counted.
node_tests() { # <name> <environment: "VAR=value ..." or ""> <node --test arguments...>
  name=$1
  vars=$2
  shift 2
  begin "$name"
  report="$reports/$steps.tap"
  # shellcheck disable=SC2086 # $vars is a list of VAR=value words
  limited "$name" env $vars CG_TEST_TIMEOUT_MS="$test_timeout_ms" \
    node --import="$root/tests/harness/test-timeout.mjs" --test --test-force-exit --test-timeout="$file_timeout_ms" \
    --test-reporter=dot --test-reporter-destination=stdout --test-reporter=tap --test-reporter-destination="$report" "$@"
  count_tap "$name" "$report" $?
}

count_tap() { # <step name> <TAP report> <exit status>
  # The summary's counts; a run that was stopped has none: count its top-level results.
  summary() { sed -n "s/^# $1 \([0-9][0-9]*\)\$/\1/p" "$2" 2> /dev/null | tail -1; }
  ok=$(summary pass "$2")
  if [ -n "$ok" ]; then
    fails=$(summary fail "$2")
    cancelled=$(summary cancelled "$2")
    bad=$((${fails:-0} + ${cancelled:-0}))
    # Skipped and todo tests count neither way; say so, so none goes unseen.
    skipped=$(summary skipped "$2")
    todo=$(summary todo "$2")
    unrun=$((${skipped:-0} + ${todo:-0}))
    [ "$unrun" -eq 0 ] || echo "--- $1: $unrun test(s) skipped or todo, not counted"
  else
    ok=$(grep -c '^ok ' "$2" 2> /dev/null)
    bad=$(grep -c '^not ok ' "$2" 2> /dev/null)
    ok=${ok:-0}
    bad=${bad:-0}
  fi
  passed=$((passed + ok))
  failed=$((failed + bad))
  # Failed tests at any depth (a test, its suite, its file), by name.
  list_failed "$1" "$(sed -n 's/^ *not ok [0-9][0-9]* - //p' "$2" 2> /dev/null)"
  step_verdict "$1" "$ok" "$bad" "$3"
}

# A step whose runner failed with no failed test (it did not build, did not
# start, hung, or ran nothing) counts as one failure of its own.
step_verdict() { # <step name> <passed> <failed> <exit status>
  own=1
  if hung "$4"; then
    fail "$1: stopped at the step limit ($step_limit_s s); the tests it had not reported did not run to the end"
  elif [ "$4" -ne 0 ] && [ "$3" -eq 0 ]; then
    fail "$1: exited with status $4 and no failed test (see its output above)"
  elif [ "$4" -eq 0 ] && [ "$2" -eq 0 ] && [ "$3" -eq 0 ]; then
    fail "$1: ran no tests"
  else
    own=0
  fi
  end "$1" "$2" "$(($3 + own))"
}

# The end-to-end tests on one Pi, with every process they start recording its
# sockets (tests/harness/connect-recorder.mjs), then the check of that record.
e2e() { # <Pi version> [test files; default all of tests/e2e]
  version=$1
  shift
  [ $# -gt 0 ] || set -- 'tests/e2e/*.test.ts'
  connects="$reports/connects-$version.jsonl"
  : > "$connects"
  node_tests "real Pi $version" "CG_PI=$version CG_CONNECT_LOG=$connects NODE_OPTIONS=--import=file://$root/tests/harness/connect-recorder.mjs" \
    --test-concurrency=2 "$@"
  check "real Pi $version opened no socket beyond this machine" node tests/harness/check-offline.ts "$connects"
}

# The steps. One line each: `check` counts one, `cargo_tests` and `node_tests`
# count their tests.
all_steps() {
  check "cargo fmt --check" cargo fmt --all --check
  check "cargo clippy -D warnings" cargo clippy --quiet --workspace --all-targets -- -D warnings
  cargo_tests "cargo test" cargo test --quiet --workspace
  check "TypeScript type check" tsc -p tsconfig.json
  check "Biome: TypeScript format and lint" biome ci --reporter=summary
  check "extension/generated/ is what the crates give" sh scripts/gen-types.sh --check
  node_tests "TypeScript unit tests" "" 'tests/unit/*.test.ts'
  e2e 1.6.0
  e2e 1.3.0
  check "pkg/ is fresh" sh scripts/check-pkg.sh
}

if [ -n "${CG_TEST_STEPS:-}" ]; then
  # shellcheck disable=SC1090 # a step list given at run time
  . "$(cd "$(dirname "$CG_TEST_STEPS")" && pwd)/$(basename "$CG_TEST_STEPS")"
else
  all_steps
fi

if [ $failed -ne 0 ]; then
  echo "Failed:$failures"
  echo "Reports: $reports"
else
  rm -rf "$reports"
fi
echo "RESULT: $passed passed, $failed failed"
[ $failed -eq 0 ]
